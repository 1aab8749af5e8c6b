package codegen

import (
	"reflect"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/engine"
)

// TestEveryOpHasKernelCall renders the kernel call of every op that
// computes something, with and without its optional sources, and wants a
// engine.Kernels method taking that many arguments.
func TestEveryOpHasKernelCall(t *testing.T) {
	kernels := reflect.TypeFor[engine.Kernels]()
	ref := func(s *ir.Tensor) jen.Code { return jen.Id(s.Name) }
	for _, op := range ops.All() {
		if op.IsView() {
			continue // split emits no call for views
		}
		info := op.Info()
		for n := info.MinSrcs; n <= info.MaxSrcs; n++ {
			node := &ir.Tensor{Name: "dst", Op: op, Params: ops.Defaults(info.Params)}
			for range n {
				node.Src = append(node.Src, &ir.Tensor{Name: "src"})
			}
			call := func() (call kernelCall) {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("op %s with %d sources: %v", op, n, r)
					}
				}()
				gen := &generator{g: &ir.Graph{Nodes: []*ir.Tensor{node}}, names: newNamer()}
				gen.collectParams()
				return gen.kernel(node, ref)
			}()
			if call.method == "" {
				continue
			}
			m, ok := kernels.MethodByName(call.method)
			if !ok {
				t.Errorf("op %s: codegen calls %s, which engine.Kernels lacks", op, call.method)
			} else if m.Type.NumIn() != len(call.args) {
				t.Errorf("op %s with %d sources: codegen passes %d arguments to %s, engine.Kernels's takes %d", op, n, len(call.args), call.method, m.Type.NumIn())
			}
		}
	}
}
