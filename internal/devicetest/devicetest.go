// Package devicetest holds what the tests of graphc's ggml device kinds
// (runtime/vulkan, runtime/cuda) share.
package devicetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/passes"
	"github.com/graphc/graphc/runtime/ggml"
)

// DescriptionsMatchDevices asks ggml's real device about every op of
// every example under examples (a glob of .g files), as generated New
// does, and wants the answers of desc, the static description the
// compiler plans with, and the same of the cpu's against ggml's CPU
// device. A description that says yes where the device says no makes
// plans that stop at New. Skips without ggml's libraries or the device,
// and fails instead with $GRAPHC_REQUIRE_GGML set where the device is the
// one under test (Required).
func DescriptionsMatchDevices(t *testing.T, examples, device string, desc *backend.Description) {
	models, _ := filepath.Glob(examples)
	if len(models) == 0 {
		t.Fatalf("no models %s", examples)
	}
	var ops []backend.OpQuery
	for _, path := range models {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		res, err := compiler.Compile(path, src, compiler.Config{})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, n := range res.Graph.Nodes {
			if !n.Op.IsView() {
				ops = append(ops, *passes.Query(n))
			}
		}
	}
	for _, c := range []struct {
		device string
		desc   *backend.Description
	}{{device, desc}, {"CPU", &backend.CPU}} {
		t.Run(c.device, func(t *testing.T) {
			b, err := ggml.Open("test", c.device, c.desc.BufferType)
			if err != nil {
				if Required(c.device) {
					t.Fatal(err)
				}
				t.Skipf("%v (see docs/backends.md, Device tests)", err)
			}
			defer b.Close()
			for i := range ops {
				q := &ops[i]
				err := b.Check([]backend.OpQuery{*q})
				if err != nil && !strings.Contains(err.Error(), "does not support") {
					t.Fatal(err)
				}
				if device, static := err == nil, c.desc.SupportsOp(q); device != static {
					t.Errorf("%s %s%v from %v: the device says %v, the description %v (%v)", q.Op, q.Type, q.Ne, q.Src, device, static, err)
				}
			}
			t.Logf("%d ops asked", len(ops))
		})
	}
}

// Required reports whether ggml's device (CUDA0, Vulkan0, CPU) missing is
// a failure: with $GRAPHC_REQUIRE_GGML set, for the CPU and for the GPU
// $GRAPHC_TEST_GPU names (vulkan0 by default, as CI installs), so that
// CI's Vulkan run does not want CUDA0 nor a CUDA machine Vulkan0.
func Required(device string) bool {
	if os.Getenv("GRAPHC_REQUIRE_GGML") == "" {
		return false
	}
	gpu := os.Getenv("GRAPHC_TEST_GPU")
	if gpu == "" {
		gpu = "vulkan0"
	}
	return device == "CPU" || strings.EqualFold(device, gpu)
}
