// Command _gen writes runtime/cpu's dot_amd64.s and vec_amd64.s with avo:
// one description per kernel family (dot.go, vec.go), instantiated for each
// element type and instruction set. It is a module of its own so that
// graphc's users never depend on avo; runtime/cpu's gen.go runs it
// (go generate), and CI checks that the committed files are its output.
//
// The kernels name their registers rather than letting avo allocate them:
// the register numbers are those of the hand-written kernels these replaced,
// so that the machine code, and with it the speed, stayed the same.
package main

import (
	"flag"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/pass"
	"github.com/mmcloughlin/avo/printer"
	"github.com/mmcloughlin/avo/reg"
)

// header is the command the files' "Code generated" line names: the same
// wherever -dir points, so that CI's copy compares equal.
var header = printer.Config{Argv: []string{"go", "run", ".", "(runtime/cpu/_gen)"}}

func main() {
	dir := flag.String("dir", "..", "where to write dot_amd64.s and vec_amd64.s")
	flag.Parse()
	for _, f := range []struct {
		name   string
		family func(*asm)
	}{
		{"dot_amd64.s", dotFamily},
		{"vec_amd64.s", vecFamily},
	} {
		if err := write(filepath.Join(*dir, f.name), f.family); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

// write generates one assembly file from the kernels family adds.
func write(path string, family func(*asm)) error {
	a := &asm{build.NewContext()}
	a.ConstraintExpr("!noasm")
	family(a)
	f, err := a.Result()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := pass.Compile.Execute(f); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	b, err := printer.NewGoAsm(header).Print(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, b, 0o666)
}

// asm is the avo context a file's kernels are built in.
type asm struct{ *build.Context }

// text starts the NOSPLIT kernel name with the Go signature sig.
func (a *asm) text(name, sig string) {
	a.Function(name)
	a.Attributes(attr.NOSPLIT)
	a.SignatureExpr(sig)
}

// param is the frame slot of a scalar parameter, for instructions that read
// it in place.
func (a *asm) param(name string) operand.Mem {
	b, err := a.Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// An isa is an instruction set the kernels are generated for. With evex
// (AVX-512: 32 registers, opmasks) the kernels finish a vector's tail with
// masked loads; the AVX2 ones leave it to their Go callers.
type isa struct {
	name   string   // suffix of the kernels' names
	size   reg.Spec // vector size
	lanes  int      // float32 lanes of a vector
	evex   bool
	acc    int // the four-row kernels' first accumulator
	blocks int // vectors of each row a dot4x1 step reads, 1 or 2: as many as there are registers for
	scalar int // the register a scalar operand is broadcast to
}

var (
	avx512 = isa{name: "AVX512", size: reg.S512, lanes: 16, evex: true, acc: 16, blocks: 2, scalar: 15}
	avx2   = isa{name: "AVX2", size: reg.S256, lanes: 8, acc: 6, blocks: 1, scalar: 14}
)

// v is vector register i.
func (s isa) v(i int) reg.Register { return reg.Vector.Lookup(reg.Index(i), s.size) }

// bytes is the size of a float32 vector.
func (s isa) bytes() int { return 4 * s.lanes }

// regs is the number of vector registers.
func (s isa) regs() int {
	if s.evex {
		return 32
	}
	return 16
}

// An elem is the element type of a row the dot kernels convert to float32
// as they load it.
type elem struct {
	name   string // in the kernels' names
	goType string
	size   int // bytes
}

var (
	f32 = elem{"F32", "float32", 4}
	f16 = elem{"F16", "uint16", 2}
)

// shift is log2 of the element size: a row stride in elements to bytes.
func (e elem) shift() int { return bits.TrailingZeros(uint(e.size)) }

// load sets v to the float32 values of the vector of e at m.
func (a *asm) load(e elem, m operand.Mem, v reg.Register) {
	if e == f16 {
		a.VCVTPH2PS(m, v)
	} else {
		a.VMOVUPS(m, v)
	}
}

// loadMasked is load of the lanes in k, the others zero.
func (a *asm) loadMasked(e elem, m operand.Mem, k, v reg.Register) {
	if e == f16 {
		a.VCVTPH2PS_Z(m, k, v)
	} else {
		a.VMOVUPS_Z(m, k, v)
	}
}

// source is the vector of e at m as a float32 source operand: m itself for
// f32, else converted into tmp.
func (a *asm) source(e elem, m operand.Mem, tmp reg.Register) operand.Op {
	if e == f32 {
		return m
	}
	a.load(e, m, tmp)
	return tmp
}

// fma adds row·x to acc. x is the first source, as in the hand-written
// kernels (with two NaNs the order picks the one that propagates), unless
// row is a memory operand, which only the first may be.
func (a *asm) fma(row, x operand.Op, acc reg.Register) {
	if operand.IsMem(row) {
		a.VFMADD231PS(row, x, acc)
	} else {
		a.VFMADD231PS(x, row, acc)
	}
}

// zero clears the float32 vector v.
func (a *asm) zero(s isa, v reg.Register) {
	if s.evex {
		a.VPXORD(v, v, v)
	} else {
		a.VXORPS(v, v, v)
	}
}

// vectors turns the element count in CX into CX full vectors and, on
// AVX-512, K1 = the lanes of the rest (tail16 into CX, AX scratch).
func (a *asm) vectors(s isa) {
	if s.evex {
		a.tail16(reg.EAX, reg.RCX)
		return
	}
	a.SHRQ(u8(bits.TrailingZeros(uint(s.lanes))), reg.RCX)
}

// tail16 splits the element count in CX into 16-lane vectors: K1 = the
// lanes of the last CX mod 16 elements, dst = CX/16; scratch (32-bit) and
// R13 are clobbered. It is asm_amd64.h's TAIL16 with the registers free.
func (a *asm) tail16(scratch, dst reg.Register) {
	a.MOVQ(reg.RCX, reg.R13)
	a.ANDQ(u8(15), reg.RCX)
	a.MOVL(u32(1), scratch)
	a.SHLL(reg.CL, scratch)
	a.DECL(scratch)
	a.KMOVW(scratch, reg.K1)
	a.MOVQ(reg.R13, dst)
	a.SHRQ(u8(4), dst)
}

// A stream is a pointer a kernel walks and the bytes it moves per vector.
type stream struct {
	p    reg.Register
	step int
}

// steps is the loop of the streaming kernels over the CX vectors of
// vectors: four a step (BX steps), then one at a time, ending at the label
// "tail". body(i, at) emits vector i of a step, at(j) being its address in
// streams[j]; the streams advance in their order.
func (a *asm) steps(streams []stream, body func(i int, at func(j int) operand.Mem)) {
	at := func(i int) func(int) operand.Mem {
		return func(j int) operand.Mem {
			return operand.Mem{Base: streams[j].p, Disp: i * streams[j].step}
		}
	}
	a.MOVQ(reg.RCX, reg.RBX)
	a.SHRQ(u8(2), reg.RBX)
	a.ANDQ(u8(3), reg.RCX)
	a.TESTQ(reg.RBX, reg.RBX)
	a.JZ(operand.LabelRef("one"))
	a.Label("four")
	for i := 0; i < 4; i++ {
		body(i, at(i))
	}
	for _, s := range streams {
		a.ADDQ(u32(4*s.step), s.p)
	}
	a.DECQ(reg.RBX)
	a.JNZ(operand.LabelRef("four"))
	a.Label("one")
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(operand.LabelRef("tail"))
	a.Label("oneloop")
	body(0, at(0))
	for _, s := range streams {
		a.ADDQ(u32(s.step), s.p)
	}
	a.DECQ(reg.RCX)
	a.JNZ(operand.LabelRef("oneloop"))
	a.Label("tail")
}

// ret ends a kernel.
func (a *asm) ret() {
	a.VZEROUPPER()
	a.RET()
}

func mem(base reg.Register) operand.Mem { return operand.Mem{Base: base} }

func u8(n int) operand.U8   { return operand.U8(n) }
func u32(n int) operand.U32 { return operand.U32(n) }
