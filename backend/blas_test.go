package backend

import (
	"testing"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

func TestBLASSupportsOp(t *testing.T) {
	src := func(typ tensor.DType, contiguous bool, ne ...int64) OpSrc {
		s := OpSrc{Type: typ, Contiguous: contiguous, Ne: [4]int64{1, 1, 1, 1}}
		copy(s.Ne[:], ne)
		return s
	}
	mm := func(m, n int64, a, x OpSrc) *OpQuery {
		return &OpQuery{Op: ops.MulMat, Type: tensor.F32, Ne: [4]int64{m, n, 1, 1}, Src: []OpSrc{a, x}}
	}
	for _, tc := range []struct {
		q    *OpQuery
		want bool
	}{
		{mm(64, 32, src(tensor.F32, true, 64, 64), src(tensor.F32, true, 64, 32)), true},
		{mm(64, 32, src(tensor.F16, true, 64, 64), src(tensor.F32, true, 64, 32)), true},
		{mm(64, 31, src(tensor.F32, true, 64, 64), src(tensor.F32, true, 64, 31)), false},
		{mm(31, 32, src(tensor.F32, true, 64, 31), src(tensor.F32, true, 64, 32)), false},
		{mm(64, 32, src(tensor.F32, true, 16, 64), src(tensor.F32, true, 16, 32)), false},
		{mm(64, 32, src(tensor.F32, false, 64, 64), src(tensor.F32, true, 64, 32)), false},
		{mm(64, 32, src(tensor.F32, true, 64, 64), src(tensor.F16, true, 64, 32)), false},
		{&OpQuery{Op: ops.View}, true},
		{&OpQuery{Op: ops.Add}, false},
		{&OpQuery{Op: ops.Cpy}, false},
	} {
		if got := BLASSupportsOp(tc.q); got != tc.want {
			t.Errorf("BLASSupportsOp(%s %v %+v) = %v, want %v", tc.q.Op, tc.q.Ne, tc.q.Src, got, tc.want)
		}
	}
}
