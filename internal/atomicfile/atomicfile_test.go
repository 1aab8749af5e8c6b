package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplaces(t *testing.T) {
	p := filepath.Join(t.TempDir(), "model.g")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if string(b) != "new" || fi.Mode().Perm() != 0o600 {
		t.Errorf("got %q mode %v, want \"new\" keeping mode 0600", b, fi.Mode().Perm())
	}
}

// TestFailureKeepsOld stands for a full disk: the writer fails half way.
func TestFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.gguf")
	if err := os.WriteFile(p, []byte("previous"), 0o644); err != nil {
		t.Fatal(err)
	}
	full := errors.New("no space left on device")
	err := WriteFunc(p, 0o644, func(w io.Writer) error {
		w.Write(make([]byte, 3<<20))
		return full
	})
	if !errors.Is(err, full) {
		t.Fatalf("WriteFunc = %v, want the writer's error", err)
	}
	b, _ := os.ReadFile(p)
	if string(b) != "previous" {
		t.Errorf("the previous file became %d bytes", len(b))
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("temporary files left behind: %v", es)
	}
}

// TestNotRegular: a directory or device at path is not replaced.
func TestNotRegular(t *testing.T) {
	if err := Write(t.TempDir(), []byte("x"), 0o644); err == nil {
		t.Error("Write over a directory succeeded")
	}
}
