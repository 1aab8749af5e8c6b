package engine_test

import (
	"reflect"
	"testing"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/tensor"
)

// TestKernelsHaveEveryOp: the Kernels method the op table names for each
// op exists and takes dst, the op's sources (less the one written, for
// FlagWritesSrc) and its parameters. The backends implement Kernels by
// compile-time assertions next to their types.
func TestKernelsHaveEveryOp(t *testing.T) {
	kernels := reflect.TypeFor[engine.Kernels]()
	tensor := reflect.TypeFor[*tensor.Tensor]()
	for _, op := range ops.All() {
		info := op.Info()
		if info.Kernel == "" {
			continue
		}
		want := []reflect.Type{tensor}
		nsrc := info.MaxSrcs
		if info.Flags&ops.FlagWritesSrc != 0 {
			nsrc--
		}
		for range nsrc {
			want = append(want, tensor)
		}
		if info.Params != nil {
			want = append(want, reflect.TypeOf(info.Params))
		}
		m, ok := kernels.MethodByName(info.Kernel)
		if !ok {
			t.Errorf("op %s: engine.Kernels has no method %s (the op table's Kernel)", op, info.Kernel)
			continue
		}
		var got []reflect.Type
		for i := range m.Type.NumIn() {
			got = append(got, m.Type.In(i))
		}
		if !reflect.DeepEqual(got, want) || m.Type.NumOut() != 0 {
			t.Errorf("op %s: engine.Kernels.%s is %v, the op table implies func%v", op, info.Kernel, m.Type, want)
		}
	}
}
