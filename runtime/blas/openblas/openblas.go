// Package openblas is backend kind blas: ggml's BLAS backend, which
// computes large f32 matrix products with an optimized BLAS library in the
// CPU's own host memory, here ggml's BLAS MUL_MAT on cblas_sgemm from
// OpenBLAS (or Accelerate on macOS), loaded at run time with
// github.com/ebitengine/purego, without cgo. What the compiler plans
// against is backend.BLAS: it supports MUL_MAT exactly where ggml's does,
// and like ggml an f16 first source is converted to f32 first. Its results
// agree with the CPU backend's to rounding (the summation order differs),
// not bit for bit.
//
// backend/libs finds the library the same way on both sides: the compiler
// uses it to tell whether this machine can run a plan with BLAS (graphc
// run drops the backend with a warning when it cannot), this package to
// load it. Before loading OpenBLAS it sets OPENBLAS_CORETYPE when the
// environment does not and the CPU is one OpenBLAS 0.3.21 mis-detects
// (coreType).
package openblas

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/graphc/graphc/backend/libs"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/native"
	"github.com/graphc/graphc/tensor"
)

// CBLAS enums.
const (
	cblasRowMajor = 101
	cblasNoTrans  = 111
	cblasTrans    = 112
)

// lib is the loaded library.
type lib struct {
	path     string
	coreType string // OPENBLAS_CORETYPE as set for the load, "" if not set
	sgemm    func(order, transA, transB, m, n, k int32, alpha float32, a unsafe.Pointer, lda int32, b unsafe.Pointer, ldb int32, beta float32, c unsafe.Pointer, ldc int32)
	threads  func(n int32) // openblas_set_num_threads; nil elsewhere
	corename func() string // openblas_get_corename; nil elsewhere
}

var (
	loadOnce sync.Once
	loaded   *lib
	loadErr  error
)

func load() (*lib, error) {
	loadOnce.Do(func() {
		loaded, loadErr = open()
	})
	return loaded, loadErr
}

func open() (*lib, error) {
	path, err := libs.FindOpenBLAS()
	if err != nil {
		return nil, err
	}
	l := &lib{path: path}
	if os.Getenv(coreTypeEnv) == "" {
		if ct := coreType(); ct != "" {
			// OpenBLAS reads it once, when the library initializes.
			os.Setenv(coreTypeEnv, ct)
			l.coreType = ct
		}
	}
	sym, err := native.Open(path, false)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %v", path, err)
	}
	p := sym("cblas_sgemm")
	if p == 0 {
		return nil, fmt.Errorf("%s has no cblas_sgemm: not a CBLAS library", path)
	}
	purego.RegisterFunc(&l.sgemm, p)
	if p := sym("openblas_set_num_threads"); p != 0 {
		purego.RegisterFunc(&l.threads, p)
	}
	if p := sym("openblas_get_corename"); p != 0 {
		purego.RegisterFunc(&l.corename, p)
	}
	return l, nil
}

// Available reports whether the BLAS library can be loaded in this
// process, and why not.
func Available() (bool, string) {
	if _, err := load(); err != nil {
		return false, "blas: " + err.Error()
	}
	return true, ""
}

// Info describes the loaded library: its path and, for OpenBLAS, the CPU
// core type its kernels are for.
func Info() string {
	l, err := load()
	if err != nil {
		return "blas: " + err.Error()
	}
	s := l.path
	if l.corename != nil {
		s += ", core " + l.corename()
	}
	if l.coreType != "" {
		s += fmt.Sprintf(" (%s=%s set by graphc)", coreTypeEnv, l.coreType)
	}
	return s
}

// Backend computes BLAS MUL_MATs; like ggml's BLAS backend it is
// synchronous and computes in host memory. Its methods must not be called
// concurrently.
type Backend struct {
	l       *lib
	threads int
	work    []float32 // an f16 first source converted to f32
}

// New loads the library (once per process) and returns a backend using
// the given number of threads (<= 0: every core).
func New(threads int) (*Backend, error) {
	l, err := load()
	if err != nil {
		return nil, fmt.Errorf("blas: %v", err)
	}
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	return &Backend{l: l, threads: threads}, nil
}

// Close releases nothing: the library stays loaded.
func (b *Backend) Close() {}

// MulMat is ggml_mul_mat as ggml-blas computes it: for every 2-D plane, the
// plane of a (M rows of K, f32 or converted from f16) times the plane of x
// (N rows of K) with one cblas_sgemm, dst = x·aᵀ (N rows of M). a, x and
// dst must have contiguous rows; a's planes are broadcast over x's. The
// sums are f32, whatever the precision asked.
func (b *Backend) MulMat(dst, a, x *tensor.Tensor, _ ops.MulMatParams) {
	K, M, N := a.Ne[0], a.Ne[1], x.Ne[1]
	switch {
	case x.Type != tensor.F32 || dst.Type != tensor.F32 || (a.Type != tensor.F32 && a.Type != tensor.F16):
		panic(fmt.Sprintf("BUG: blas: mul_mat of %s by %s into %s", a.Type, x.Type, dst.Type))
	case a.Nb[0] != a.Type.Size() || x.Nb[0] != 4 || dst.Nb[0] != 4:
		panic("BUG: blas: mul_mat of tensors with non-contiguous rows")
	case x.Ne[0] != K || dst.Ne[0] != M || dst.Ne[1] != N || dst.Ne[2] != x.Ne[2] || dst.Ne[3] != x.Ne[3] ||
		a.Ne[2] == 0 || a.Ne[3] == 0 || x.Ne[2]%a.Ne[2] != 0 || x.Ne[3]%a.Ne[3] != 0:
		panic(fmt.Sprintf("BUG: blas: mul_mat shapes %v · %v into %v", a.Ne, x.Ne, dst.Ne))
	}
	if M == 0 || N == 0 || dst.NElem() == 0 {
		return
	}
	if K == 0 { // empty sums
		zero := tensor.NewTensor(tensor.F32, dst.Ne)
		tensor.Copy(dst, &zero)
		return
	}
	r2, r3 := x.Ne[2]/a.Ne[2], x.Ne[3]/a.Ne[3]
	plane := M * K
	lda := a.Nb[1] / a.Type.Size()
	if a.Type == tensor.F16 {
		n := plane * a.Ne[2] * a.Ne[3]
		if cap(b.work) < n {
			b.work = make([]float32, n)
		}
		b.work = b.work[:n]
		for i3 := 0; i3 < a.Ne[3]; i3++ {
			for i2 := 0; i2 < a.Ne[2]; i2++ {
				w := b.work[(i3*a.Ne[2]+i2)*plane:]
				for i1 := 0; i1 < M; i1++ {
					row := a.Data[i1*a.Nb[1]+i2*a.Nb[2]+i3*a.Nb[3]:]
					for i0 := 0; i0 < K; i0++ {
						w[i1*K+i0] = tensor.F16ToF32(uint16(row[2*i0]) | uint16(row[2*i0+1])<<8)
					}
				}
			}
		}
		lda = K
	}
	if b.l.threads != nil {
		b.l.threads(int32(b.threads))
	}
	for i3 := 0; i3 < x.Ne[3]; i3++ {
		for i2 := 0; i2 < x.Ne[2]; i2++ {
			i02, i03 := i2/r2, i3/r3
			var ap unsafe.Pointer
			if a.Type == tensor.F16 {
				ap = unsafe.Pointer(&b.work[(i03*a.Ne[2]+i02)*plane])
			} else {
				ap = unsafe.Pointer(&a.Data[i02*a.Nb[2]+i03*a.Nb[3]])
			}
			xp := unsafe.Pointer(&x.Data[i2*x.Nb[2]+i3*x.Nb[3]])
			dp := unsafe.Pointer(&dst.Data[i2*dst.Nb[2]+i3*dst.Nb[3]])
			b.l.sgemm(cblasRowMajor, cblasNoTrans, cblasTrans, int32(N), int32(M), int32(K),
				1, xp, int32(x.Nb[1]/4), ap, int32(lda), 0, dp, int32(dst.Nb[1]/4))
		}
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(x)
	runtime.KeepAlive(dst)
}
