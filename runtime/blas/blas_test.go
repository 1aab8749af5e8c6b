package blas_test

import (
	"strings"
	"testing"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/blas"
	"github.com/graphc/graphc/tensor"
)

func cpuinfo(vendor string, family, model int, flags string) string {
	return "processor\t: 0\nvendor_id\t: " + vendor + "\ncpu family\t: " + itoa(family) + "\nmodel\t\t: " + itoa(model) +
		"\nmodel name\t: x\nflags\t\t: " + flags + "\n\nprocessor\t: 1\nvendor_id\t: " + vendor + "\n"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func TestCoreTypeFor(t *testing.T) {
	const avx512 = "fpu sse sse2 avx avx2 fma avx512f avx512dq avx512cd avx512bw avx512vl"
	for _, tc := range []struct {
		info string
		want string
	}{
		{cpuinfo("GenuineIntel", 6, 207, avx512), "SkylakeX"},            // Emerald Rapids: 0.3.21 falls back to Prescott
		{cpuinfo("GenuineIntel", 6, 183, "sse avx avx2 fma"), "Haswell"}, // Raptor Lake
		{cpuinfo("GenuineIntel", 6, 143, avx512), ""},                    // Sapphire Rapids: known to 0.3.21
		{cpuinfo("GenuineIntel", 6, 85, avx512), ""},                     // Skylake-X
		{cpuinfo("AuthenticAMD", 25, 17, avx512), ""},                    // Zen 4
		{cpuinfo("AuthenticAMD", 26, 2, avx512), "SkylakeX"},             // Zen 5: 0.3.21 picks Haswell
		{cpuinfo("AuthenticAMD", 26, 68, "sse avx avx2 fma"), "Haswell"}, // a Zen 5 without AVX-512 exposed
		{cpuinfo("AuthenticAMD", 23, 49, "sse avx avx2 fma"), ""},        // Zen 2
		{cpuinfo("GenuineIntel", 6, 207, "sse sse2"), ""},                // nothing better than Prescott
		{"", ""},
	} {
		if got := blas.CoreTypeFor(tc.info); got != tc.want {
			t.Errorf("CoreTypeFor(%q) = %q, want %q", tc.info[:min(len(tc.info), 60)], got, tc.want)
		}
	}
}

func TestLibraryEnv(t *testing.T) {
	t.Setenv(blas.LibraryEnv, "/nonexistent/libopenblas.so.0")
	if _, err := blas.Library(); err == nil || !strings.Contains(err.Error(), blas.LibraryEnv) {
		t.Errorf("Library with a bad $%s: %v", blas.LibraryEnv, err)
	}
}

func TestSupportsOp(t *testing.T) {
	src := func(typ tensor.DType, contiguous bool, ne ...int64) backend.OpSrc {
		s := backend.OpSrc{Type: typ, Contiguous: contiguous, Ne: [4]int64{1, 1, 1, 1}}
		copy(s.Ne[:], ne)
		return s
	}
	mm := func(m, n int64, a, x backend.OpSrc) *backend.OpQuery {
		return &backend.OpQuery{Op: ops.MulMat, Type: tensor.F32, Ne: [4]int64{m, n, 1, 1}, Src: []backend.OpSrc{a, x}}
	}
	for _, tc := range []struct {
		q    *backend.OpQuery
		want bool
	}{
		{mm(64, 32, src(tensor.F32, true, 64, 64), src(tensor.F32, true, 64, 32)), true},
		{mm(64, 32, src(tensor.F16, true, 64, 64), src(tensor.F32, true, 64, 32)), true},
		{mm(64, 31, src(tensor.F32, true, 64, 64), src(tensor.F32, true, 64, 31)), false},
		{mm(31, 32, src(tensor.F32, true, 64, 31), src(tensor.F32, true, 64, 32)), false},
		{mm(64, 32, src(tensor.F32, true, 16, 64), src(tensor.F32, true, 16, 32)), false},
		{mm(64, 32, src(tensor.F32, false, 64, 64), src(tensor.F32, true, 64, 32)), false},
		{mm(64, 32, src(tensor.F32, true, 64, 64), src(tensor.F16, true, 64, 32)), false},
		{&backend.OpQuery{Op: ops.View}, true},
		{&backend.OpQuery{Op: ops.Add}, false},
		{&backend.OpQuery{Op: ops.Cpy}, false},
	} {
		if got := blas.SupportsOp(tc.q); got != tc.want {
			t.Errorf("SupportsOp(%s %v %+v) = %v, want %v", tc.q.Op, tc.q.Ne, tc.q.Src, got, tc.want)
		}
	}
}
