package vulkan_test

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

// TestDescriptionsMatchDevices asks the real devices about every op of
// every example, as generated New does, and wants the answers of the
// static descriptions the compiler plans with: backend.Vulkan against
// Vulkan0, the cpu's against ggml's CPU device. A description that says
// yes where the device says no makes plans that stop at New. Skips
// without ggml's libraries or the device.
func TestDescriptionsMatchDevices(t *testing.T) {
	models, _ := filepath.Glob("../../examples/*/*.g")
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
	}{{"Vulkan0", backend.Vulkan(0)}, {"CPU", &backend.CPU}} {
		t.Run(c.device, func(t *testing.T) {
			b, err := ggml.Open("test", c.device, c.desc.BufferType)
			if err != nil {
				if os.Getenv("GRAPHC_REQUIRE_GGML") != "" {
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
