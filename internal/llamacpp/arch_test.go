package llamacpp_test

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/internal/cli"
	"github.com/graphc/graphc/internal/interp"
	"github.com/graphc/graphc/internal/llamacpp"
	"github.com/graphc/graphc/runtime"
	"github.com/graphc/graphc/tokenizer"
)

// archTolerance bounds |graphc − llama.cpp| over every logit of a file
// written by graphc gguf new -arch, by the type of its matrices; the
// README's table repeats it. The example is compiled for the file, so
// graphc's CPU kernels take the file's types as ggml's do, activations
// rounded to q8_0 for q8_0 and q4_0 weights: those files agree to float
// rounding (measured ≤ 1.2e-7). For f16 weights graphc rounds the
// activations to f16, as ggml's vec_dot path does; llama.cpp's x86 build
// hands a contiguous f32 right-hand side to llamafile's tinyBLAS, which
// multiplies it unrounded, so f16 files differ by 2e-4 to 5e-4 (graphc on
// the same values as f32 weights agrees with llama.cpp to 1e-7). The
// logits lie within about ±1.5 (the writer's weights are N(0, 0.02)), and
// a wrong rope mode moves them by only about 4e-3: the bounds must stay
// well below that to catch it.
var archTolerance = map[string]float64{
	"f32":  1e-4,
	"f16":  1e-3,
	"q8_0": 1e-4,
	"q4_0": 1e-4,
}

// archCases are the files the new examples must run as llama.cpp does:
// GQA with a tied head and Llama 3's rope base, plain multi-head
// attention, qwen2 (biases, neox rope) with GQA, and wider, deeper files
// of both with another vocabulary size, qwen2's with a tied head and a
// single K/V head.
var archCases = []struct {
	name, arch string
	args       []string
}{
	{"llama-gqa-tied", "llama", []string{"-layers", "2", "-embd", "64", "-heads", "4", "-kv-heads", "2", "-tied", "-rope-theta", "500000"}},
	{"llama-mha", "llama", []string{"-layers", "2", "-embd", "64", "-heads", "4", "-kv-heads", "4"}},
	{"qwen2-gqa", "qwen2", []string{"-layers", "2", "-embd", "64", "-heads", "4", "-kv-heads", "2"}},
	{"llama-wide", "llama", []string{"-layers", "3", "-embd", "128", "-heads", "8", "-kv-heads", "2", "-ff", "352", "-vocab", "512"}},
	{"qwen2-wide-tied", "qwen2", []string{"-layers", "3", "-embd", "128", "-heads", "4", "-kv-heads", "1", "-ff", "256", "-vocab", "400", "-tied"}},
}

// archExample is the DSL source that runs each architecture's files.
var archExample = map[string]string{
	"llama": "../../examples/llamafile/llama.g",
	"qwen2": "../../examples/qwen2/qwen2.g",
}

// archPrompt encodes to at least 8 tokens in either vocabulary.
const archPrompt = "the cat sat on it"

// archSteps greedy decode steps follow the prompt; prompt and steps must
// fit the examples' 64-slot KV cache.
const archSteps = 16

// TestArchLogitsMatchLlamaCpp writes files with graphc gguf new -arch,
// has llama.cpp evaluate a prompt and archSteps greedy steps on each, and
// runs the architecture's example, compiled for that file, in process
// (internal/interp) on the same tokens: the logits must agree within
// archTolerance, and graphc must pick llama.cpp's greedy token wherever
// llama.cpp's top two are further apart than the tolerance allows.
func TestArchLogitsMatchLlamaCpp(t *testing.T) {
	h := oracle(t)
	for _, tc := range archCases {
		for _, typ := range []string{"f32", "f16", "q8_0", "q4_0"} {
			t.Run(tc.name+"/"+typ, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), tc.name+"-"+typ+".gguf")
				args := append(append([]string{"gguf", "new", "-arch", tc.arch, "-type", typ}, tc.args...), path)
				var stdout, stderr bytes.Buffer
				if code := cli.Main(args, &stdout, &stderr); code != 0 {
					t.Fatalf("graphc %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
				}
				ids := encodePrompt(t, path)
				res, err := h.Run(llamacpp.Request{Model: path, Prompt: archPrompt, Tokens: ids, Steps: archSteps})
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(res.IDsAdd) != fmt.Sprint(ids) {
					t.Fatalf("prompt ids: graphc %v, llama.cpp %v", ids, res.IDsAdd)
				}
				if len(res.Logits) != archSteps+1 || len(res.Generated) != archSteps {
					t.Fatalf("llama.cpp gave %d logit rows and %d tokens, want %d and %d", len(res.Logits), len(res.Generated), archSteps+1, archSteps)
				}
				tol := archTolerance[typ]
				if !res.FlashAttnOff {
					tol = max(tol, 5e-3)
					t.Logf("llama.cpp's flash attention is on (this release's parameter layout is unknown to the harness); tolerance %g", tol)
				}
				got := archLogits(t, archExample[tc.arch], path, ids, res.Generated)
				var worst, largest float64
				for row := range got {
					if len(got[row]) != res.NVocab {
						t.Fatalf("graphc has %d logits a row, llama.cpp %d", len(got[row]), res.NVocab)
					}
					want := res.Logits[row]
					for i, x := range got[row] {
						worst = max(worst, math.Abs(float64(x-want[i])))
						largest = max(largest, math.Abs(float64(want[i])))
					}
					if row == archSteps {
						continue
					}
					// A tie within the tolerance may go either way.
					if a, b := argmax(got[row]), res.Generated[row]; a != b && float64(want[b]-want[a]) > 2*tol {
						t.Errorf("step %d: graphc picks token %d, llama.cpp %d (llama.cpp's logits %g and %g)", row, a, b, want[a], want[b])
					}
				}
				t.Logf("%s %s: max |graphc − llama.cpp| over %d×%d logits = %.3g (tolerance %g; largest |logit| %.3g)", tc.name, typ, archSteps+1, res.NVocab, worst, tol, largest)
				if worst > tol {
					t.Errorf("logits differ by up to %g, more than %g", worst, tol)
				}
			})
		}
	}
}

// encodePrompt encodes archPrompt with the file's own vocabulary, as
// llama.cpp does with add_special.
func encodePrompt(t *testing.T, path string) []int32 {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tk, err := tokenizer.FromGGUF(f.File)
	if err != nil {
		t.Fatal(err)
	}
	ids := tk.Encode(archPrompt, true, false)
	if len(ids) < 8 || len(ids) > 32 || len(ids)+archSteps > 64 {
		t.Fatalf("the prompt is %d tokens; want 8 to 32 (a batch) and room for %d steps in 64 cache slots", len(ids), archSteps)
	}
	return ids
}

// archLogits compiles the example model for the file at path and runs it
// in process on the file's weights: the prompt as one batch, then each of
// steps as a batch of one. It returns the logits of the prompt's last
// token and of each step.
func archLogits(t *testing.T, model, path string, prompt, steps []int32) [][]float32 {
	t.Helper()
	src, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	file, err := compiler.ReadWeightsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Compile(filepath.Base(model), src, compiler.Config{File: file})
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	weights, err := f.Weights(interp.WeightDecls(res.Graph))
	if err != nil {
		t.Fatal(err)
	}
	m, err := interp.Load(res.Graph, interp.Config{Threads: 2, Weights: weights})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var rows [][]float32
	eval := func(tokens []int32, pos int) {
		n, nKV := len(tokens), pos+len(tokens)
		toks := runtime.NewTensor(runtime.I32, [4]int{n, 1, 1, 1})
		copy(toks.I32s(), tokens)
		pos32, mask32 := runtime.CausalBatch(n, pos)
		positions := runtime.NewTensor(runtime.I32, [4]int{n, 1, 1, 1})
		copy(positions.I32s(), pos32)
		mask := runtime.NewTensor(runtime.F32, [4]int{nKV, n, 1, 1})
		copy(mask.F32s(), mask32)
		out, err := m.Eval(map[string]int{"n_tokens": n, "n_kv": nKV}, map[string]runtime.Tensor{"inp_tokens": toks, "inp_pos": positions, "KQ_mask": mask})
		if err != nil {
			t.Fatal(err)
		}
		logits := out[0].Tensor
		nVocab := logits.Ne[0]
		rows = append(rows, append([]float32(nil), logits.F32s()[(n-1)*nVocab:n*nVocab]...))
	}
	eval(prompt, 0)
	for i, tok := range steps {
		eval([]int32{tok}, len(prompt)+i)
	}
	return rows
}

// largeTolerance bounds |graphc − llama.cpp| over the first-token logits
// of a large file, by the type of its matrices.
//
// Files whose activations are rounded before the products (q8_0 and q4_0
// weights: to q8_0; f16: to f16 in graphc, in llama.cpp's vec_dot path and
// its f16 KV cache) cannot be held to float rounding at these widths: the
// rounding is a step function, so a last-bit difference upstream (a
// different order of the same float sums) moves a value across a rounding
// boundary now and then, and that value then jumps by a whole step (d =
// amax/127 for q8_0, an f16 ulp for the cache), which the next products
// spread over every output. Measured (issue 15), first-token logits of q8_0
// files with 1 layer, n_ff 512, 32 heads:
//
//   - llama.cpp against itself: its CPU variants differ by 1e-6 in Qcur,
//     Kcur and Vcur (the sapphirerapids build multiplies q8_0/q4_0 weights
//     with AMX tiles, summing whole-block integer dots in one fma chain;
//     the haswell to icelake builds use llamafile's tinyBLAS, eight lanes
//     summed at the end, as graphc does), the f16 rounding of Q and K turns
//     that into 1.8e-3 in KQ, and after the FFN's q8_0 rounding the logits
//     differ by 0.026 at n_embd 2048; at n_embd 2560 (40 heads) the same
//     happens between the icelake build and graphc while sapphirerapids and
//     graphc agree to 7e-7. Which widths it hits is chance: per-tensor
//     comparisons through llama.cpp's eval callback show no step of either
//     build that differs by more than float rounding before the first
//     rounding boundary is crossed.
//   - graphc against itself, its q8_0 activation scales multiplied by
//     1+1e-6: logits move by 0.027 (n_embd 1536), 0.024 (2048), 0 (1024,
//     2560), and by 0.184 on the 16-layer Llama-3.2-1B-shaped q4_0 file,
//     where graphc and llama.cpp (sapphirerapids and icelake builds alike)
//     differ by 0.119 with the same first token.
//
// So the bound for rounded activations is that sensitivity, not a kernel
// difference: matching llama.cpp bit for bit would mean copying each CPU
// build's summation order (AMX's on some machines, tinyBLAS's on others),
// and graphc keeps ggml's AVX2/AVX-512 order. f32 files have no rounding
// steps and agree to 1.2e-4 at n_embd 2048. f16 files were not measured at
// these widths; they share the quantized bound.
var largeTolerance = map[gguf.GGMLType]float64{
	gguf.F32:  1e-3,
	gguf.F16:  0.25,
	gguf.Q8_0: 0.25,
	gguf.Q4_0: 0.25,
}

// TestLargeFileMatchesLlamaCpp compares the first-token logits of a large
// file — e.g. one written at Llama-3.2-1B's shapes by
//
//	graphc gguf new -arch llama -layers 16 -embd 2048 -heads 32 -kv-heads 8 -ff 8192 \
//	  -vocab 128256 -ctx 131072 -rope-theta 500000 -tied -type q4_0 /tmp/llama1b.gguf
//
// — with llama.cpp's, within largeTolerance for the type of its first
// layer's attn_q.weight. Too big for CI: it runs when
// $GRAPHC_LLAMACPP_LARGE names the file, and its architecture is read from
// the file. To compare with another of llama.cpp's CPU builds than the
// machine's best, point $GRAPHC_LLAMACPP_LIBS at a directory of links to
// the package's libraries holding only that libggml-cpu-*.so.
func TestLargeFileMatchesLlamaCpp(t *testing.T) {
	path := os.Getenv("GRAPHC_LLAMACPP_LARGE")
	if path == "" {
		t.Skip("set GRAPHC_LLAMACPP_LARGE to a large file written by graphc gguf new -arch (see the comment)")
	}
	h := oracle(t)
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	arch, _ := f.File.MetaString("general.architecture")
	var typ gguf.GGMLType
	found := false
	for _, ti := range f.File.Tensors {
		if ti.Name == "blk.0.attn_q.weight" {
			typ, found = ti.Type, true
		}
	}
	f.Close()
	model, ok := archExample[arch]
	if !ok {
		t.Fatalf("%s: architecture %v has no example", path, arch)
	}
	tol, ok := largeTolerance[typ]
	if !found || !ok {
		t.Fatalf("%s: blk.0.attn_q.weight is %v, which has no tolerance", path, typ)
	}
	ids := encodePrompt(t, path)
	res, err := h.Run(llamacpp.Request{Model: path, Prompt: archPrompt, Tokens: ids, Steps: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := archLogits(t, model, path, ids, nil)
	var worst, largest float64
	for i, x := range got[0] {
		worst = max(worst, math.Abs(float64(x-res.Logits[0][i])))
		largest = max(largest, math.Abs(float64(res.Logits[0][i])))
	}
	t.Logf("%s (%v): first-token logits, max |graphc − llama.cpp| over %d = %.3g (tolerance %g; largest |logit| %.3g)", path, typ, len(got[0]), worst, tol, largest)
	// A tie within the tolerance may go either way.
	want := res.Logits[0]
	if a, b := argmax(got[0]), argmax(want); a != b && float64(want[b]-want[a]) > 2*tol {
		t.Errorf("graphc's first token %d, llama.cpp's %d (llama.cpp's logits %g and %g)", a, b, want[a], want[b])
	}
	if worst > tol {
		t.Errorf("first-token logits differ by up to %g, more than %g", worst, tol)
	}
}
