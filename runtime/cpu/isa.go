package cpu

import "golang.org/x/sys/cpu"

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

// level is the instruction-set level the kernels run at; tests lower it to
// check every level's kernels on one machine.
var level = bestISA()

// ISA names the instruction-set level the kernels use: "avx512", "avx2" or
// "go" (the portable loops, also what -tags noasm builds).
func ISA() string { return level.String() }
