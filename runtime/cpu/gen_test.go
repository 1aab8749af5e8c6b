package cpu

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// TestPackedQ6_KGenerated checks that the committed q6_K kernels are what
// _gen/packedq6k.py writes, where python3 is installed.
func TestPackedQ6_KGenerated(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 to run _gen/packedq6k.py")
	}
	for isa, file := range map[string]string{"vnni": "packedq6k_amd64.s", "avx2": "packedq6k_avx2_amd64.s"} {
		got, err := exec.Command(py, "_gen/packedq6k.py", isa).Output()
		if err != nil {
			t.Fatalf("_gen/packedq6k.py %s: %v", isa, err)
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not _gen/packedq6k.py %s's output: run go generate ./runtime/cpu", file, isa)
		}
	}
}
