package cpu

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// TestPackedGenerated checks that the committed packed kernels the _gen
// scripts write (q6_K's, the AVX2 q4_K panel of eight) are their output,
// where python3 is installed.
func TestPackedGenerated(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 to run _gen's scripts")
	}
	for _, g := range []struct{ script, arg, file string }{
		{"_gen/packedq6k.py", "vnni", "packedq6k_amd64.s"},
		{"_gen/packedq6k.py", "avx2", "packedq6k_avx2_amd64.s"},
		{"_gen/packedk8.py", "", "packedk8_avx2_amd64.s"},
	} {
		args := []string{g.script}
		if g.arg != "" {
			args = append(args, g.arg)
		}
		got, err := exec.Command(py, args...).Output()
		if err != nil {
			t.Fatalf("%s %s: %v", g.script, g.arg, err)
		}
		want, err := os.ReadFile(g.file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not %s %s's output: run go generate ./runtime/cpu", g.file, g.script, g.arg)
		}
	}
}
