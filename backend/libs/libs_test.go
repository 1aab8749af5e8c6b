package libs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenBLASEnv(t *testing.T) {
	t.Setenv(OpenBLASEnv, "/nonexistent/libopenblas.so.0")
	if _, err := FindOpenBLAS(); err == nil || !strings.Contains(err.Error(), OpenBLASEnv) {
		t.Errorf("FindOpenBLAS with a bad $%s: %v", OpenBLASEnv, err)
	}
}

// TestFindGGMLBackend: a backend's library is found only beside ggml's
// own, versioned names included, and its absence names the directory and
// the missing file.
func TestFindGGMLBackend(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{libName("ggml-base"), libName("ggml"), libName("ggml-vulkan"), libName("ggml-cuda.v2")} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(GGMLPathEnv, dir)
	for _, stem := range []string{"vulkan", "cuda"} {
		if p, err := FindGGMLBackend(stem); err != nil || filepath.Dir(p) != dir {
			t.Errorf("FindGGMLBackend(%q) = %q, %v; want a file in %s", stem, p, err, dir)
		}
	}
	_, err := FindGGMLBackend("metal")
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), libName("ggml-metal")) {
		t.Errorf("FindGGMLBackend(metal) = %v; want an error naming %s and %s", err, dir, libName("ggml-metal"))
	}
}
