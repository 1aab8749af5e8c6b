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

// TestOpBatchSize pins OpBatchSize's answer for every op, so that a new op
// gets a decision (ggml-cuda's get_op_batch_size) rather than the default
// by accident.
func TestOpBatchSize(t *testing.T) {
	ne := [4]int64{2, 3, 5, 7}
	rows := ne[1] * ne[2] * ne[3]
	want := map[string]int64{
		"get_rows": 0, "mul_mat": ne[1], "rope": ne[2],
		"add": rows, "sub": rows, "mul": rows, "div": rows, "scale": rows,
		"relu": rows, "gelu": rows, "silu": rows, "rms_norm": rows, "norm": rows,
		"soft_max": rows, "cpy": rows, "cont": rows,
		"view": rows, "reshape": rows, "permute": rows, "transpose": rows,
	}
	for _, op := range ops.All() {
		w, ok := want[op.String()]
		if !ok {
			t.Errorf("op %s: no expected OpBatchSize in TestOpBatchSize (runtime/backend.go); decide it from ggml-cuda's get_op_batch_size", op)
			continue
		}
		if got := op.BatchSize(ne); got != w {
			t.Errorf("%s.BatchSize(ne %v) = %d, want %d", op, ne, got, w)
		}
		delete(want, op.String())
	}
	for name := range want {
		t.Errorf("TestOpBatchSize expects op %s, which the op table lacks", name)
	}
}
