package cpu

import (
	"fmt"
	"os"

	"golang.org/x/sys/cpu"
)

// An isa is an instruction-set level the kernels are written for. The
// kernels of the best level the processor has are picked once, at package
// initialisation, from golang.org/x/sys/cpu's feature bits; a build with
// -tags noasm (or for another architecture) always runs the Go loops.
type isa int

const (
	isaGo     isa = iota // portable Go loops: the reference and the noasm build
	isaAVX2              // AVX2 + FMA + F16C, 256-bit vectors
	isaAVX512            // AVX-512F, VL and BW (+ AVX2, FMA, F16C), 512-bit vectors
)

func (l isa) String() string { return [...]string{"go", "avx2", "avx512"}[l] }

// bestISA is the best level this processor and build support.
func bestISA() isa {
	x := &cpu.X86
	switch {
	case !haveAsm:
		return isaGo
	case x.HasAVX512F && x.HasAVX512VL && x.HasAVX512BW && x.HasAVX2 && x.HasFMA && x.HasF16C && x.HasOSXSAVE:
		return isaAVX512
	case x.HasAVX2 && x.HasFMA && x.HasF16C && x.HasOSXSAVE:
		return isaAVX2
	}
	return isaGo
}

// hasVNNI reports AVX-512 VNNI (with VL): at the avx512 level the quantized
// dot products use its vpdpbusd, else (and at the avx2 level) the AVX2
// vpmaddubsw/vpmaddwd kernels.
var hasVNNI = cpu.X86.HasAVX512VNNI && cpu.X86.HasAVX512VL

// narrowF16 makes the f16 dot kernels (dotF16, dot4x1F16) convert f16 in
// 256-bit registers at the avx512 level too, and dot4x1F16 read four rows
// stored back to back, of at most oneStreamF16 elements, one after the
// other: on AMD Zen 4 a 512-bit VCVTPH2PS costs more than two 256-bit
// ones (an f16 matrix-vector product kept in L2, 37 GB/s against 55), and
// the memory streams one run of rows faster than four rows side by side,
// each a page or less (4 KiB rows: 22.4 GB/s four rows at a time in
// 512-bit registers, 23.5 in 256-bit ones, 26.9 a row at a time on one
// thread; 39.7, 44.5 and 46.8 on two, 2048×65536 f16 in turns). Intel
// machines keep the 512-bit kernels they were measured with.
var narrowF16 = isAMD()

// oneStreamF16 is the longest row dot4x1F16 reads a row at a time under
// narrowF16: x, read again for each row, then stays in L1 beside the
// stream (2 KiB rows: 26.4 GB/s against 22.6 four rows at a time; 8 KiB
// rows equal; 16 KiB rows, with x as large as L1, 11.8 against 21.4).
const oneStreamF16 = 2048

// ISAEnv names the environment variable that sets the level the kernels
// start at, one of ISAs (e.g. GRAPHC_CPU_ISA=avx2 on an AVX-512 machine),
// to run or time a lower level's kernels; a level this machine or build
// lacks is reported on standard error and the best is used.
const ISAEnv = "GRAPHC_CPU_ISA"

// level is the instruction-set level the kernels run at.
var level = startISA()

func startISA() isa {
	name := os.Getenv(ISAEnv)
	if name == "" {
		return bestISA()
	}
	l, err := isaNamed(name)
	if err != nil {
		fmt.Fprintf(os.Stderr, "graphc: %s: %v; using %s\n", ISAEnv, err, bestISA())
		return bestISA()
	}
	return l
}

func isaNamed(name string) (isa, error) {
	for l := isaGo; l <= bestISA(); l++ {
		if l.String() == name {
			return l, nil
		}
	}
	return 0, fmt.Errorf("level %q is not one of this machine's %v", name, ISAs())
}

// ISA names the instruction-set level the kernels use: "avx512", "avx2" or
// "go" (the portable loops, also what -tags noasm builds).
func ISA() string { return level.String() }

// ISAs lists the instruction-set levels this machine and build can run,
// best last.
func ISAs() []string {
	var l []string
	for i := isaGo; i <= bestISA(); i++ {
		l = append(l, i.String())
	}
	return l
}

// SetISA makes the kernels run at the named level, one of ISAs, from the
// next kernel on. It must not be called while a Backend runs a kernel: a
// program sets it before it starts, tests between models.
func SetISA(name string) error {
	l, err := isaNamed(name)
	if err != nil {
		return err
	}
	initTables() // the Go kernels' f16 table
	level = l
	return nil
}
