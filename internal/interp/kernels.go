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
	for _, p := range info.Params {
		v, ok := paramValue(p, &ops.Params{})
		if !ok {
			return reflect.Value{}, fmt.Errorf("op %s: parameter %s has no kernel-argument form in paramValue (internal/interp/kernels.go)", op, p.Key)
		}
		want = append(want, v.Type())
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

// paramValue is scalar operand p of a node as its kernel argument.
func paramValue(p ops.Param, params *ops.Params) (reflect.Value, bool) {
	switch p.Field {
	case ops.ParamEps:
		return reflect.ValueOf(params.Eps), true
	case ops.ParamScale:
		return reflect.ValueOf(params.Scale), true
	case ops.ParamMaxBias:
		return reflect.ValueOf(params.MaxBias), true
	case ops.ParamRope:
		return reflect.ValueOf(params.Rope), true
	}
	return reflect.Value{}, false
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
	args := make([]reflect.Value, 0, 2+info.MaxSrcs+len(info.Params))
	args = append(args, reflect.ValueOf(be), reflect.ValueOf(ref(t)))
	for _, s := range srcs {
		args = append(args, reflect.ValueOf(ref(s)))
	}
	for range info.MaxSrcs - len(t.Src) {
		args = append(args, noTensor)
	}
	for _, p := range info.Params {
		v, ok := paramValue(p, &t.Params)
		if !ok {
			panic(fmt.Sprintf("BUG: interp: op %s: parameter %s has no kernel-argument form", t.Op, p.Key))
		}
		args = append(args, v)
	}
	kernel.Call(args)
}
