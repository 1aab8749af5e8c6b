package compiler

import (
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/graphc/graphc/codegen"
	"github.com/graphc/graphc/ir"
)

// TestSizesNeverWrap compiles random models whose dims run up to int64's
// range: each must fail with user errors, or plan tensors and buffers
// whose sizes and offsets are all within [0, ir.ByteLimit] and generate
// code. A wrapped size would show as a negative or tiny plan (the bug this
// guards against planned 0 bytes for an f32[9223372036854775807]).
func TestSizesNeverWrap(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	big := func() int64 {
		switch r.Intn(3) {
		case 0:
			return 1 + r.Int63n(64)
		case 1:
			return 1 << r.Intn(63)
		}
		return 1 + r.Int63n(1<<(1+r.Intn(62)))
	}
	planned := 0
	for i := range 300 {
		var b strings.Builder
		fmt.Fprintf(&b, "dim a = %d\ndim c <= %d\n", big(), big())
		dim := func() string { return []string{"a", "c", "4", "a * c", fmt.Sprint(big()), "a * 2", "16"}[r.Intn(7)] }
		k := dim()
		fmt.Fprintf(&b, "input x: f32[%s, %s]\n", k, dim())
		fmt.Fprintf(&b, "weight w: f32[%s, %s]\n", k, dim())
		fmt.Fprintf(&b, "y = mul_mat(w, x)\n")
		fmt.Fprintf(&b, "v = view_1d(w, %s, %s * 4)\n", dim(), dim())
		fmt.Fprintf(&b, "output o = add(relu(y), cont(transpose(transpose(y))))\noutput p = relu(v)\n")
		src := b.String()
		res, err := Compile("rand.g", []byte(src), Config{Verify: true})
		if err != nil {
			var ue *UserError
			if !errors.As(err, &ue) {
				t.Fatalf("case %d: %v\n%s", i, err, src)
			}
			continue
		}
		g := res.Graph
		planned++
		for _, tn := range g.Tensors {
			if n := tn.MaxBytes(); n < 0 || n > ir.ByteLimit {
				t.Errorf("case %d: %s spans %d bytes\n%s", i, tn.Name, n, src)
			}
			if a := tn.Alloc; a.Kind == ir.AllocCompute && (a.Offset < 0 || a.Offset+tn.MaxBytes() > g.Buffers[a.Buffer].Chunks[a.Chunk]) {
				t.Errorf("case %d: %s at %d outside its chunk\n%s", i, tn.Name, a.Offset, src)
			}
		}
		for _, buf := range g.Buffers {
			if buf.Size < 0 || buf.Size > ir.ByteLimit {
				t.Errorf("case %d: buffer %s of %d bytes\n%s", i, buf.BufferType, buf.Size, src)
			}
		}
		if _, err := Generate(res, codegen.Options{PkgPath: "example.com/m", PkgName: "m"}); err != nil {
			t.Errorf("case %d: %v\n%s", i, err, src)
		}
	}
	if planned < 30 {
		t.Errorf("only %d of 300 random models planned: the test exercises the planner too little", planned)
	}
	t.Logf("%d of 300 planned", planned)
}
