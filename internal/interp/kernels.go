package interp

import (
	"fmt"
	"reflect"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

var (
	backendType = reflect.TypeFor[*cpu.Backend]()
	tensorType  = reflect.TypeFor[*tensor.Tensor]()
	noTensor    = reflect.Zero(tensorType) // an optional source left out
)

// kernelOf finds the cpu.Backend method the op table names for op and
// checks that it takes what the table implies: dst, the sources (less the
// one written, for FlagWritesSrc), then the scalar parameters.
// TestEveryOpRuns asks it about every op.
func kernelOf(op ops.Op) (reflect.Value, error) {
	info := op.Info()
	if info.Kernel == "" {
		return reflect.Value{}, fmt.Errorf("op %s names no kernel in the op table (ir/ops.go)", op)
	}
	m, ok := backendType.MethodByName(info.Kernel)
	if !ok {
		return reflect.Value{}, fmt.Errorf("op %s: cpu.Backend has no method %s (the op table's Kernel)", op, info.Kernel)
	}
	want := []reflect.Type{backendType, tensorType}
	nsrc := info.MaxSrcs
	if info.Flags&ops.FlagWritesSrc != 0 {
		nsrc--
	}
	for range nsrc {
		want = append(want, tensorType)
	}
	if info.Params != nil {
		want = append(want, reflect.TypeOf(info.Params))
	}
	ft := m.Func.Type()
	got := make([]reflect.Type, ft.NumIn())
	for i := range got {
		got[i] = ft.In(i)
	}
	if !reflect.DeepEqual(got, want) || ft.NumOut() != 0 {
		return reflect.Value{}, fmt.Errorf("op %s: cpu.Backend.%s is %v, the op table implies func%v", op, info.Kernel, ft, want)
	}
	return m.Func, nil
}

// call computes node t on be, with ref giving each tensor the kernel sees
// (the whole tensor, or a part's slice of it in a parallel region). The
// arguments are codegen's (codegen/split.go, kernel).
func call(kernel reflect.Value, be *cpu.Backend, t *ir.Tensor, ref func(*ir.Tensor) *tensor.Tensor) {
	info := t.Op.Info()
	srcs := t.Src
	if info.Flags&ops.FlagWritesSrc != 0 {
		// The result is a view of the last source: the kernel writes it
		// through t and is not passed the source again.
		srcs = srcs[:len(srcs)-1]
	}
	args := make([]reflect.Value, 0, 3+info.MaxSrcs)
	args = append(args, reflect.ValueOf(be), reflect.ValueOf(ref(t)))
	for _, s := range srcs {
		args = append(args, reflect.ValueOf(ref(s)))
	}
	for range info.MaxSrcs - len(t.Src) {
		args = append(args, noTensor)
	}
	if info.Params != nil {
		args = append(args, reflect.ValueOf(t.Params))
	}
	kernel.Call(args)
}
