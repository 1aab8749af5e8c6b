package ggmlapi

import (
	"os"
	"testing"

	"github.com/graphc/graphc/backend/libs"
)

// needGGML skips the test where ggml's libraries are missing, saying how to
// get them.
func needGGML(t *testing.T) *API {
	t.Helper()
	a, _, err := Load()
	if err != nil {
		if os.Getenv("GRAPHC_REQUIRE_GGML") != "" {
			t.Fatal(err)
		}
		t.Skipf("%v\n(for this machine: cd /tmp && npm pack @node-llama-cpp/linux-x64-vulkan@3.22.1 && tar xzf node-llama-cpp-linux-x64-vulkan-3.22.1.tgz; "+
			"export %s=/tmp/package/bins/linux-x64-vulkan)", err, libs.GGMLPathEnv)
	}
	return a
}

// TestInitParams checks that ggml_init receives its by-value struct as
// written: the context it returns reports the size and no_alloc it was
// given, for both values of no_alloc, and owns a buffer of its own.
func TestInitParams(t *testing.T) {
	a := needGGML(t)
	for _, c := range []struct {
		size    uintptr
		noAlloc bool
	}{{1 << 20, true}, {3<<20 + 4096, false}, {12345 * 64, true}} {
		ctx := a.InitContext(c.size, c.noAlloc)
		if ctx == 0 {
			t.Fatalf("ggml_init(%d, %v) returned NULL", c.size, c.noAlloc)
		}
		if got := a.GetMemSize(ctx); got != c.size {
			t.Errorf("ggml_init(%d, %v): mem_size %d", c.size, c.noAlloc, got)
		}
		if got := a.GetNoAlloc(ctx); got != c.noAlloc {
			t.Errorf("ggml_init(%d, %v): no_alloc %v", c.size, c.noAlloc, got)
		}
		if a.GetMemBuffer(ctx) == 0 {
			t.Errorf("ggml_init(%d, %v): no buffer", c.size, c.noAlloc)
		}
		a.Free(ctx)
	}
}
