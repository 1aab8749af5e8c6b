package ggml

import (
	"os"
	"testing"

	"github.com/graphc/graphc/backend/libs"
	"github.com/graphc/graphc/ops"
)

// needGGML skips the test where ggml's libraries are missing, saying how to
// get them.
func needGGML(t *testing.T) {
	t.Helper()
	_, err := Load()
	if err != nil {
		if os.Getenv("GRAPHC_REQUIRE_GGML") != "" {
			t.Fatal(err)
		}
		t.Skipf("%v\n(for this machine: cd /tmp && npm pack @node-llama-cpp/linux-x64-vulkan@3.22.1 && tar xzf node-llama-cpp-linux-x64-vulkan-3.22.1.tgz; "+
			"export %s=/tmp/package/bins/linux-x64-vulkan)", err, libs.GGMLPathEnv)
	}
}

func TestDevices(t *testing.T) {
	needGGML(t)
	devs, err := Devices()
	if err != nil {
		t.Fatal(err)
	}
	v, c, _ := Version()
	t.Logf("ggml %s (%s)", v, c)
	for _, d := range devs {
		t.Logf("%+v", d)
	}
	if len(devs) == 0 {
		t.Fatal("no device, not even the CPU")
	}
}

// TestEveryKernelConstructs: every kernel of the op table has a ggml
// constructor (constructors, runtime/ggml/graph.go), under the first op
// computed by it.
func TestEveryKernelConstructs(t *testing.T) {
	for _, op := range ops.All() {
		if op.Info().Kernel == "" {
			continue
		}
		if k := kernelOp(op); constructors[k] == nil {
			t.Errorf("op %s: kernel %s has no ggml constructor in constructors (runtime/ggml/graph.go)", op, op.Info().Kernel)
		}
	}
}
