package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/gguf/ggufarch"
	"github.com/graphc/graphc/runtime/lm/chat"
	"github.com/graphc/graphc/tensor"
)

// TestGGUFNewArch: gguf new -arch writes ggufarch's file of its flags'
// options, byte for byte, and reports Check's errors as usage errors.
func TestGGUFNewArch(t *testing.T) {
	dir := t.TempDir()
	for _, arch := range []string{"llama", "qwen2"} {
		path := filepath.Join(dir, arch+".gguf")
		if code, _, stderr := runCLI("gguf", "new", "-arch", arch, "-layers", "3", "-embd", "128", "-heads", "8", "-kv-heads", "2", "-ff", "256", "-vocab", "400", "-ctx", "512",
			"-rope-theta", "5e5", "-eps", "1e-6", "-tied", "-type", "q4_0", "-seed", "7", path); code != 0 {
			t.Fatalf("%s: exit %d: %s", arch, code, stderr)
		}
		o := ggufarch.Defaults(arch)
		o.Layers, o.Embd, o.Heads, o.KVHeads, o.FF, o.Vocab, o.Ctx = 3, 128, 8, 2, 256, 400, 512
		o.RopeTheta, o.Eps, o.Tied, o.Type, o.Seed, o.Name = 5e5, 1e-6, true, tensor.Q4_0, 7, arch
		want := filepath.Join(dir, arch+"-want.gguf")
		if err := ggufarch.WriteFile(want, o); err != nil {
			t.Fatal(err)
		}
		got, err1 := os.ReadFile(path)
		wantBytes, err2 := os.ReadFile(want)
		if err1 != nil || err2 != nil || !bytes.Equal(got, wantBytes) {
			t.Errorf("%s: gguf new -arch wrote other bytes than ggufarch.WriteFile (%v, %v)", arch, err1, err2)
		}
	}
	// -type of a llama.cpp mix: ggufarch's file of Options.Mix.
	path := filepath.Join(dir, "mix.gguf")
	if code, _, stderr := runCLI("gguf", "new", "-arch", "llama", "-embd", "256", "-ff", "320", "-layers", "4", "-type", "q4_K_m", path); code != 0 {
		t.Fatalf("-type q4_K_m: exit %d: %s", code, stderr)
	}
	o := ggufarch.Defaults("llama")
	o.Embd, o.FF, o.Layers, o.Mix, o.Name = 256, 320, 4, "q4_K_m", "mix"
	want := filepath.Join(dir, "mix-want.gguf")
	if err := ggufarch.WriteFile(want, o); err != nil {
		t.Fatal(err)
	}
	got, err1 := os.ReadFile(path)
	wantBytes, err2 := os.ReadFile(want)
	if err1 != nil || err2 != nil || !bytes.Equal(got, wantBytes) {
		t.Errorf("-type q4_K_m: gguf new -arch wrote other bytes than ggufarch.WriteFile (%v, %v)", err1, err2)
	}
	code, _, stderr := runCLI("gguf", "new", "-arch", "llama", "-heads", "3", filepath.Join(dir, "x.gguf"))
	if code != ExitUsage || !strings.Contains(stderr, "-embd 64 is not a multiple of -heads 3") {
		t.Errorf("-heads 3 with -embd 64: exit %d, %q; want usage", code, stderr)
	}
}

// TestGGUFNewChatTemplate: -chat-template writes a named template or a
// file's, and rejects one that does not parse.
func TestGGUFNewChatTemplate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "t.jinja")
	if err := os.WriteFile(file, []byte("{{ messages[0].content }}"), 0o644); err != nil {
		t.Fatal(err)
	}
	llama3, _ := chat.Named("llama3")
	for _, tc := range []struct{ arg, want string }{{"llama3", llama3}, {"chatml", chat.ChatML}, {file, "{{ messages[0].content }}"}} {
		path := filepath.Join(dir, "m.gguf")
		if code, _, stderr := runCLI("gguf", "new", "-arch", "llama", "-chat-template", tc.arg, path); code != 0 {
			t.Fatalf("-chat-template %s: exit %d: %s", tc.arg, code, stderr)
		}
		m, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := m.MetaString("tokenizer.chat_template")
		m.Close()
		if got != tc.want {
			t.Errorf("-chat-template %s: tokenizer.chat_template = %q, want %q", tc.arg, got, tc.want)
		}
	}
	if err := os.WriteFile(file, []byte("{% if x %}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{file, filepath.Join(dir, "none")} {
		if code, _, stderr := runCLI("gguf", "new", "-arch", "llama", "-chat-template", arg, filepath.Join(dir, "x.gguf")); code != ExitUsage || !strings.Contains(stderr, "-chat-template "+arg) {
			t.Errorf("-chat-template %s: exit %d, %q; want usage", arg, code, stderr)
		}
	}
}
