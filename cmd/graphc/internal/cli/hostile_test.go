package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostileCommandLines is a table of models and command lines
// that crashed graphc or its programs, were accepted silently or lost a
// file: each gives its exit code and a clear reason, with no panic, and no
// file is lost.
func TestHostileCommandLines(t *testing.T) {
	const mlp = "../../../../examples/mlp/mlp.g"
	dir := t.TempDir()
	model := filepath.Join(dir, "m.g")
	src, err := os.ReadFile(mlp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(model, src, 0o644); err != nil {
		t.Fatal(err)
	}
	handWritten := []byte("package m\n\n// written by hand\n")
	if err := os.WriteFile(filepath.Join(dir, "m_gen.go"), handWritten, 0o644); err != nil {
		t.Fatal(err)
	}
	models := map[string]string{
		"wrap.g":     "dim n = 9223372036854775807\ninput x: f32[n]\noutput y = relu(x)\n",
		"huge.g":     "weight w: f32[4294967296, 4294967296]\ninput x: f32[4294967296]\noutput y = mul_mat(w, x)\n",
		"square.g":   "weight w: f32[3037000500, 3037000500]\ninput x: f32[3037000500]\noutput y = mul_mat(w, x)\n",
		"memory.g":   "dim n = 1000000000000\nweight w: f32[400000, 400000]\ninput x: f32[400000]\noutput y = mul_mat(w, x)\n",
		"stride.g":   "input x: f32[16]\noutput y = cont(view_2d(x, 4, 4, -4, 0))\n",
		"offset.g":   "input x: f32[16]\noutput y = cont(view_1d(x, 4, -8))\n",
		"unalign.g":  "input x: f32[16]\noutput y = cont(view_1d(x, 4, 3))\n",
		"weightw.g":  "weight w: f32[16]\ninput x: f32[4]\ncpy(x, view_1d(w, 4, 0))\noutput y = relu(x)\n",
		"tokens.g":   "input tok: i32[4] fill i * 100\nweight emb: f32[8, 16]\noutput e = get_rows(emb, tok)\n",
		"named.g":    "input x: f32[4]\noutput named = relu(x)\n",
		"longline.g": "x = " + strings.Repeat("a", 3<<20) + " + )\n",
	}
	for name, text := range models {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m := func(name string) string { return filepath.Join(dir, name) }
	for _, tc := range []struct {
		args []string
		code int
		want string // in stderr
	}{
		{[]string{"plan", m("wrap.g")}, ExitUser, "wrap.g:2:10: input x: f32[9223372036854775807] spans more than"},
		{[]string{"plan", m("huge.g")}, ExitUser, "huge.g:1:11: weight w: f32[4294967296, 4294967296] spans"},
		{[]string{"plan", m("square.g")}, ExitUser, "square.g:1:11: weight w: f32[3037000500, 3037000500] spans"},
		{[]string{"run", m("memory.g")}, ExitUser, "of host memory; this machine has"},
		{[]string{"plan", m("stride.g")}, ExitUser, "stride nb1 = -4 is negative"},
		{[]string{"plan", m("offset.g")}, ExitUser, "offset -8 is negative"},
		{[]string{"plan", m("unalign.g")}, ExitUser, "offset 3 is not a multiple of 4 bytes"},
		{[]string{"plan", m("weightw.g")}, ExitUser, "cpy: cannot write into weight w"},
		{[]string{"run", m("tokens.g")}, ExitUser, "input tok: element 1 is 100, not a row of emb (0..15)"},
		{[]string{"run", m("named.g")}, ExitOK, ""},
		{[]string{"plan", m("longline.g")}, ExitUser, "longline.g:1:"},
		{[]string{"plan", "-n-copies", "0", mlp}, ExitUsage, "-n-copies 0: want at least 1"},
		{[]string{"plan", "-n-copies", "-3", mlp}, ExitUsage, "-n-copies -3: want at least 1"},
		{[]string{"plan", "-ngl", "-5", mlp}, ExitUsage, "-ngl -5: want a number of layers"},
		{[]string{"plan", "-n-copies", "1000000", "-max-copies", "1000000", mlp}, ExitUsage, "-max-copies 1000000: want 1 to 64"},
		{[]string{"plan", "-offload-batch", "-1", mlp}, ExitUsage, "-offload-batch -1"},
		{[]string{"plan", "-json", "-dot", mlp}, ExitUsage, "-dot and -json: choose one"},
		{[]string{"plan", "-backends", "", mlp}, ExitUsage, "-backends: want a comma-separated list"},
		{[]string{"plan", "-ot", "nothing_like_it=cpu", mlp}, ExitOK, "warning: -ot nothing_like_it=cpu matches no weight or state"},
		{[]string{"plan", "-n-cpu-moe", "x", mlp}, ExitUsage, `invalid value "x" for flag -n-cpu-moe: want a number of layers, 0 or more`},
		{[]string{"plan", "-n-cpu-moe", "-1", mlp}, ExitUsage, `invalid value "-1" for flag -n-cpu-moe: want a number of layers, 0 or more`},
		{[]string{"plan", "-cpu-moe=maybe", mlp}, ExitUsage, `invalid boolean value "maybe" for -cpu-moe: want true or false`},
		{[]string{"plan", "-cpu-moe", mlp}, ExitOK, "warning: -cpu-moe matches no expert weight"},
		{[]string{"plan", "-n-cpu-moe", "3", mlp}, ExitOK, "warning: -n-cpu-moe 3 matches no expert weight"},
		{[]string{"ggml-check", "-sim", "x.json"}, ExitUsage, "-sim runs ggml's plan of the trace, which needs -run"},
		{[]string{"compile", "-pkg", "123bad", "-o", dir, mlp}, ExitUsage, `-pkg: package name "123bad": want a Go identifier`},
		{[]string{"compile", "-pkg", "my-pkg", "-o", dir, mlp}, ExitUsage, `package name "my-pkg"`},
		{[]string{"compile", "-pkg", "func", "-o", dir, mlp}, ExitUsage, `package name "func"`},
		{[]string{"compile", model}, ExitUser, "m_gen.go exists and graphc did not generate it"},
		{[]string{"gguf", "new", model, model}, ExitUsage, "is both the model and the output"},
	} {
		if tc.args[0] == "run" {
			needGo(t)
		}
		code, _, stderr := runCLI(tc.args...)
		if len(stderr) > 4000 {
			t.Errorf("graphc %s: %d bytes of stderr", tc.args[0], len(stderr))
			stderr = stderr[:4000]
		}
		if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "BUG") || strings.Contains(stderr, "goroutine ") {
			t.Errorf("graphc %s: exit %d, stderr:\n%s\nwant exit %d and %q", strings.Join(tc.args, " "), code, stderr, tc.code, tc.want)
		}
	}
	if b, _ := os.ReadFile(model); string(b) != string(src) {
		t.Error("the model changed")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "m_gen.go")); string(b) != string(handWritten) {
		t.Error("the hand-written m_gen.go was replaced")
	}
	// -f replaces it; a generated file is replaced without -f.
	for _, args := range [][]string{{"compile", "-f", model}, {"compile", model}} {
		if code, _, stderr := runCLI(args...); code != ExitOK {
			t.Fatalf("graphc %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "m_gen.go")); !strings.HasPrefix(string(b), "// Code generated by graphc from m.g.") {
		t.Errorf("m_gen.go after compile -f starts %q", b[:min(len(b), 60)])
	}
	if es, _ := os.ReadDir(dir); len(es) != 2+len(models) {
		t.Errorf("files left in the output directory: %v", es)
	}
}
