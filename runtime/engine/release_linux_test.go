package engine_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/graphc/graphc/runtime/engine"
)

// vmRSS is this process's resident memory in bytes.
func vmRSS(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// writeWeights writes n patterned bytes to a file in a test directory
// and returns its path and the bytes.
func writeWeights(t *testing.T, n, mul int) (string, []byte) {
	want := make([]byte, n)
	for i := range want {
		want[i] = byte(i*mul + i>>12)
	}
	path := filepath.Join(t.TempDir(), "w")
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, want
}

// mapShared maps the file at path read-only and shared, as gguf does,
// and reads it all (faulting every page in), checking it holds want.
func mapShared(path string, want []byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := syscall.Mmap(int(f.Fd()), 0, len(want), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(m, want) {
		syscall.Munmap(m)
		return nil, fmt.Errorf("mapped %s differs from what was written", path)
	}
	return m, nil
}

// TestReleasePages: a mapped file's pages leave memory and its bytes read
// back unchanged; heap memory keeps its content; an empty slice and a
// slice not on a page boundary are fine.
func TestReleasePages(t *testing.T) {
	const n = 32 << 20
	path, want := writeWeights(t, n, 7)
	m, err := mapShared(path, want)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	before := vmRSS(t)
	engine.ReleasePages(m[100:]) // not page-aligned: its first page goes too
	after := vmRSS(t)
	if !bytes.Equal(m, want) {
		t.Fatal("a released mapped file reads back differently")
	}
	// Kernels before 5.4 reject MADV_PAGEOUT (an unknown advice is EINVAL
	// even for no pages) and ReleasePages says nothing: ask before holding
	// it to the drop.
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, 0, 0, 21); e == syscall.EINVAL {
		t.Logf("MADV_PAGEOUT unsupported here: resident %d -> %d bytes", before, after)
	} else if before-after < n/2 {
		t.Errorf("resident memory %d -> %d bytes after releasing a %d-byte mapped file", before, after, n)
	}

	heap := bytes.Clone(want[:1<<20])
	engine.ReleasePages(heap[1:])
	if !bytes.Equal(heap, want[:1<<20]) {
		t.Fatal("released heap memory changed")
	}
	engine.ReleasePages(nil)
}

// TestReleaseSharedPages: pages another process maps too (as one serving
// the same file would) leave this process's mapping as well, and read
// back unchanged. The other process is this test binary, run again.
func TestReleaseSharedPages(t *testing.T) {
	if path := os.Getenv("GRAPHC_TEST_MAP_FILE"); path != "" {
		holdMapped(path)
		return
	}
	const n = 16 << 20
	path, want := writeWeights(t, n, 13)
	other := exec.Command(os.Args[0], "-test.run=^TestReleaseSharedPages$")
	other.Env = append(os.Environ(), "GRAPHC_TEST_MAP_FILE="+path)
	stdin, err := other.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := other.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer other.Wait()
	defer stdin.Close()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "mapped\n" {
		t.Fatalf("the other process: %q, %v", line, err)
	}

	m, err := mapShared(path, want)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	before := vmRSS(t)
	engine.ReleasePages(m)
	after := vmRSS(t)
	if before-after < n/2 {
		t.Errorf("resident memory %d -> %d bytes after releasing a %d-byte mapping whose pages another process maps", before, after, n)
	}
	if !bytes.Equal(m, want) {
		t.Fatal("the released mapping reads back differently")
	}
}

// holdMapped maps the file at path, reads it all, says so on stdout and
// keeps it mapped until stdin closes.
func holdMapped(path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	m, err := mapShared(path, b)
	if err != nil {
		panic(err)
	}
	fmt.Println("mapped")
	io.Copy(io.Discard, os.Stdin)
	syscall.Munmap(m)
}
