package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProgramsDir builds a program with $GRAPHC_PROGRAMS set: it is kept
// there under its source's key, found there the next time without Go, and
// a program missing there without Go is an error saying what to do.
func TestProgramsDir(t *testing.T) {
	needGo(t)
	dir := t.TempDir()
	t.Setenv(programsEnv, dir)
	src := map[string][]byte{"main.go": []byte("package main\n\nfunc main() {}\n")}
	bin, cleanup, err := buildModule(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	cleanup()
	kept := filepath.Join(dir, programKey(src))
	if st, err := os.Stat(kept); err != nil || st.Mode().Perm()&0o100 == 0 {
		t.Fatalf("%s not kept as an executable: %v", bin, err)
	}
	t.Setenv("PATH", t.TempDir()) // no go
	bin, cleanup, err = buildModule(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	cleanup()
	if bin != kept {
		t.Errorf("without Go: %s, want the kept %s", bin, kept)
	}
	other := map[string][]byte{"main.go": []byte("package main\n\nfunc main() { println() }\n")}
	if _, _, err := buildModule(context.Background(), other); err == nil || !strings.Contains(err.Error(), "has no program "+programKey(other)) {
		t.Errorf("a program not kept, without Go: %v", err)
	}
}
