package cpu

// GeluTable exposes ggml_table_gelu_f16's equivalent to the tests.
func GeluTable() *[1 << 16]uint16 {
	geluOnce.Do(initGelu)
	return &geluTable
}

// SetMinWork sets the least work per thread (1 splits every op as far as it
// goes) and returns a function restoring the old value. Not concurrency-safe:
// only for tests that do not run in parallel.
func SetMinWork(n int) (restore func()) {
	old := minWork
	minWork = n
	return func() { minWork = old }
}

// UseISA makes the kernels run at the named level and returns a function
// restoring the old one. Not concurrency-safe.
func UseISA(name string) (restore func()) {
	old := level
	if err := SetISA(name); err != nil {
		panic(err)
	}
	return func() { level = old }
}

// SetNarrowF16 sets narrowF16 and returns a function restoring it. Not
// concurrency-safe.
func SetNarrowF16(narrow bool) (restore func()) {
	old := narrowF16
	narrowF16 = narrow
	return func() { narrowF16 = old }
}

// GemmKernel is a packed-GEMM microkernel of the current level.
type GemmKernel struct {
	MR, NR int
	Fn     func(k int, a, b, c []float32, ldc int, acc bool)
}

func CurrentGemmKernel() GemmKernel {
	k := kernelFor(level)
	return GemmKernel{k.mr, k.nr, k.fn}
}

// The dispatching kernels, at the current level.
var (
	DotF32      = dotF32
	Dot4x1F32   = dot4x1F32
	Dot4x4F32   = dot4x4F32
	DotPanelF32 = dotPanelF32
	DotF16      = dotF16
	Dot4x1F16   = dot4x1F16
	DotBF16     = func(a, x []byte, k int) float32 { return dotBF16(a, x, nil, nil, k) }
	F16ToF32Row = f16ToF32Row
	F32ToF16Row = f32ToF16Row
	RoundF16Row = roundF16Row
	GemmKC      = gemmKC
)

// ForcePacked sends every product with N >= 24, M >= 32, K >= 32 through the
// packed GEMM and returns a function restoring the threshold.
func ForcePacked() (restore func()) {
	old := gemmMinWork
	gemmMinWork = 0
	return func() { gemmMinWork = old }
}

// ExpRow is expRow at the current level; ExpRowGo its Go loop.
var (
	ExpRow    = expRow
	ExpRowGo  = expRowGo
	Silu      = siluF32
	SiluGo    = siluGo
	Sigmoid   = sigmoidF32
	SigmoidGo = sigmoidGo
	TopKRow   = topKRow
)

// The elementwise loops at the current level, and their Go references.
var (
	VecBinary   = map[string][2]func(d, a, x []float32){"add": {addF32, addF32Go}, "sub": {subF32, subF32Go}, "mul": {mulF32, mulF32Go}, "div": {divF32, divF32Go}}
	ScaleF32    = scaleF32
	ScaleF32Go  = scaleF32Go
	AddScaled   = addScaledF32
	AddScaledGo = addScaledF32Go
	MaxF32      = maxF32
	MaxF32Go    = maxF32Go
	SumSqF64    = sumSqF64
	SumSqF64Go  = sumSqF64Go
)

// RopeRow is ropeRow at the current level, RopeRowGo its loop.
var (
	RopeRow   = ropeRow
	RopeRowGo = ropeRowGo
)

// Transpose8 is the packing transpose at the current level.
var Transpose8 = transpose8
