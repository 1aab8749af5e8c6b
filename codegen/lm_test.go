package codegen_test

import (
	"strings"
	"testing"

	"github.com/graphc/graphc/codegen"
	"github.com/graphc/graphc/compiler"
)

// decoderModel has llama.cpp's decoder interface; lmVariants break it one
// part at a time.
const decoderModel = `dim n_embd = 8
dim n_vocab = 16
dim n_ctx = 8
dim n_kv <= n_ctx
dim n_tokens <= 4
dim n_outputs <= n_tokens
input inp_tokens: i32[n_tokens]
input inp_pos: i32[n_tokens]
input KQ_mask: f32[n_kv, n_tokens]
input inp_out_ids: i32[n_outputs]
weight token_embd.weight: f32[n_embd, n_vocab]
state cache_k: f32[n_embd, 8]
x = get_rows(token_embd.weight, inp_tokens)
q = reshape(rope(reshape(x, n_embd, 1, n_tokens), inp_pos, n_dims=n_embd, mode=0, freq_base=10000), n_embd, n_tokens)
cpy(q, view_1d(cache_k, n_tokens * n_embd, row_size(cache_k, n_embd) * (n_kv - n_tokens)))
k = view_2d(cache_k, n_embd, n_kv, row_size(cache_k, n_embd), 0)
kq = soft_max(mul_mat(k, q), KQ_mask)
h = get_rows(add(mul_mat(cont(transpose(k)), kq), x), inp_out_ids)
output result_output = mul_mat(token_embd.weight, h)
`

// TestLMExactlyWithTheInterface: LM and main's text-generation commands
// are generated for a model with llama.cpp's decoder interface, and for
// no model that lacks a part of it.
func TestLMExactlyWithTheInterface(t *testing.T) {
	for _, c := range []struct {
		name     string
		old, new string // decoderModel with every old replaced by new
		want     bool
	}{
		{"interface", "", "", true},
		{"n_outputs bounded by a constant", "dim n_outputs <= n_tokens", "dim n_outputs <= 4", true},
		{"fewer outputs than tokens", "dim n_outputs <= n_tokens", "dim n_outputs <= 1", false},
		{"no n_ctx", "dim n_ctx = 8\ndim n_kv <= n_ctx", "dim n_kv <= 8", false},
		{"n_kv short of n_ctx", "dim n_kv <= n_ctx", "dim n_kv <= 6", false},
		{"another bounded dim", "dim n_tokens <= 4", "dim n_tokens <= 4\ndim n_seq <= 2\ninput seq: i32[n_seq]", false},
		{"no inp_out_ids", "inp_out_ids", "out_ids", false},
		{"an f16 mask", "KQ_mask: f32", "KQ_mask: f16", false},
		{"logits of every token", "h = get_rows(add(mul_mat(cont(transpose(k)), kq), x), inp_out_ids)",
			"h = add(mul_mat(cont(transpose(k)), kq), x)\noutput rows = get_rows(x, inp_out_ids)", false},
		{"other logits' name", "output result_output", "output logits", false},
	} {
		src := strings.ReplaceAll(decoderModel, c.old, c.new)
		if c.old != "" && src == decoderModel {
			t.Fatalf("%s: %q is not in the model", c.name, c.old)
		}
		res, err := compiler.Compile("model.g", []byte(src), compiler.Config{Verify: true})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, opts := range []codegen.Options{{PkgName: "model", Source: "model.g"}, {PkgName: "main", Main: true, Source: "model.g"}} {
			code, err := codegen.Generate(res.Graph, opts)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			got := strings.Contains(string(code), "func (m *Model) LM() lm.Model {")
			if got != c.want {
				t.Errorf("%s (main %v): LM generated: %v, want %v", c.name, opts.Main, got, c.want)
			}
			if commands := strings.Contains(string(code), "lmcli.IsCommand(os.Args[1])"); commands != (c.want && opts.Main) {
				t.Errorf("%s (main %v): main dispatches to lmcli: %v, want %v", c.name, opts.Main, commands, c.want && opts.Main)
			}
		}
	}
}

// TestLMSlidingWindow: a decoder with a second mask for sliding-window
// layers, KQ_mask_swa, over the constant dim n_swa, has LM, which passes
// the batch's MaskSWA and states the window; without n_swa it has none.
func TestLMSlidingWindow(t *testing.T) {
	swa := strings.NewReplacer(
		"input inp_out_ids", "dim n_swa = 3\ninput KQ_mask_swa: f32[n_kv, n_tokens]\ninput inp_out_ids",
		"kq = soft_max(mul_mat(k, q), KQ_mask)", "kq = soft_max(mul_mat(k, q), KQ_mask_swa)\nkq = soft_max(kq, KQ_mask)",
	).Replace(decoderModel)
	for _, c := range []struct {
		name, src string
		want      bool
	}{
		{"window", swa, true},
		{"no n_swa", strings.Replace(swa, "dim n_swa = 3\n", "", 1), false},
	} {
		res, err := compiler.Compile("model.g", []byte(c.src), compiler.Config{Verify: true})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		code, err := codegen.Generate(res.Graph, codegen.Options{PkgName: "model", Source: "model.g"})
		if err != nil {
			t.Fatal(err)
		}
		s := string(code)
		if got := strings.Contains(s, "func (m *Model) LM() lm.Model {"); got != c.want {
			t.Errorf("%s: LM generated: %v, want %v", c.name, got, c.want)
		}
		if c.want && (!strings.Contains(s, "SlidingWindow: 3") || !strings.Contains(s, "KQMaskSwa: b.MaskSWA")) {
			t.Errorf("%s: LM without the window or the second mask:\n%s", c.name, s)
		}
	}
}
