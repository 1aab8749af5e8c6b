//go:build unix

package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// buildGraphc builds this command into a temporary directory.
func buildGraphc(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool")
	}
	bin := filepath.Join(t.TempDir(), "graphc")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestClosedStdout: `graphc plan … | head -c 10` ends quietly with exit 0
// when head goes away, instead of dying of SIGPIPE; so does `graphc run`,
// whose model program is the one writing.
func TestClosedStdout(t *testing.T) {
	bin := buildGraphc(t)
	for _, args := range [][]string{
		{"plan", "../../examples/llama32/llama32.g"},
		{"run", "../../examples/llama32/llama32.g"},
	} {
		cmd := exec.Command(bin, args...)
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout = w // a file, as a shell's pipe: the model program writes to it directly
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		if _, err := io.ReadFull(r, make([]byte, 10)); err != nil {
			t.Fatal(err)
		}
		r.Close()
		if err := cmd.Wait(); err != nil || stderr.Len() > 0 {
			t.Errorf("graphc %s into a closed pipe: %v, stderr %q; want exit 0 and nothing said", args[0], err, stderr.String())
		}
	}
}

// TestInterruptCleansUp: Ctrl-C during `graphc run`'s build kills the
// build and leaves no temporary module behind.
func TestInterruptCleansUp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a model")
	}
	bin := buildGraphc(t)
	tmp := t.TempDir()
	cmd := exec.Command(bin, "run", "../../examples/llama/llama.g")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if ms, _ := filepath.Glob(filepath.Join(tmp, "graphc-run-*")); len(ms) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("graphc run made no temporary module")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // into the build
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		// A build that beat the signal ran the model: exit 0.
		if err == nil {
			t.Skip("the run finished before the interrupt")
		}
		t.Fatalf("interrupted graphc run: %v, want exit 130", err)
	}
	if ms, _ := filepath.Glob(filepath.Join(tmp, "graphc-run-*")); len(ms) > 0 {
		t.Errorf("left behind: %v", ms)
	}
}

// TestFullDiskKeepsFiles: a write that fails half way (the file-size limit
// stands in for a full disk: graphc dies of SIGXFSZ mid-write) leaves the
// previous model and GGUF file whole.
func TestFullDiskKeepsFiles(t *testing.T) {
	bin := buildGraphc(t)
	dir := t.TempDir()
	model := filepath.Join(dir, "m.g")
	// Not in canonical form, and longer than the 1 KiB limit once formatted.
	var src bytes.Buffer
	src.WriteString("dim n = 64\ninput x: f32[n]\nh = x\n")
	for i := 0; i < 60; i++ {
		src.WriteString("h   =   relu( h )\n")
	}
	src.WriteString("weight w: f32[n, n]\noutput y = mul_mat(w, h)\n")
	if err := os.WriteFile(model, src.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	gguf := filepath.Join(dir, "w.gguf")
	previous := []byte("the previous weights file")
	if err := os.WriteFile(gguf, previous, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{"fmt -w m.g", "gguf new m.g w.gguf"} {
		cmd := exec.Command("sh", "-c", "ulimit -f 1 && exec "+bin+" "+args)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("graphc %s under a 1 KiB file-size limit succeeded: %s", args, out)
		}
	}
	if b, _ := os.ReadFile(model); !bytes.Equal(b, src.Bytes()) {
		t.Errorf("the model is now %d bytes, was %d", len(b), src.Len())
	}
	if b, _ := os.ReadFile(gguf); !bytes.Equal(b, previous) {
		t.Errorf("the previous GGUF file is now %d bytes", len(b))
	}
}
