package compiler

import (
	"strings"
	"testing"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/tensor"
)

// TestCatchBug: a BUG: panic anywhere in the pipeline reaches the caller
// as an InternalError with its stack, which the command line exits 3 on.
func TestCatchBug(t *testing.T) {
	err := func() (err error) {
		defer catchBug(&err)
		panic("BUG: something broke")
	}()
	ie, ok := err.(*InternalError)
	if !ok {
		t.Fatalf("got %T, want *InternalError", err)
	}
	if ie.Msg != "BUG: something broke" || !strings.Contains(ie.Stack, "TestCatchBug") {
		t.Errorf("message %q, stack:\n%s", ie.Msg, ie.Stack)
	}
}

// TestFlags: flag(…) takes the command line's value, else its default;
// a value beyond max and a flag the model lacks are errors naming them.
// A flag is the command line's, not the weights file's: no Meta records
// it.
func TestFlags(t *testing.T) {
	src := []byte(`dim n_ctx = flag("ctx", 8, max=16)
dim n_batch = flag("batch", 4)
input x: f32[n_ctx]
h = x
if n_ctx > 10 {
  h = scale(x, s=2)
}
if flag("fa", 0) {
  h = scale(h, s=3)
}
output y = relu(h)
output b = relu(view_1d(x, n_batch, 0))
`)
	for _, c := range []struct {
		flags map[string]int64
		want  string // the error, or the shape of y
	}{
		{nil, "f32[8]"},
		{map[string]int64{"ctx": 12}, "f32[12] scale"},
		{map[string]int64{"ctx": 17}, "m.g:1:13: -ctx 17 is beyond max=16, 16"},
		{map[string]int64{"fa": 1, "batch": 2}, "f32[8] scale"},
		{map[string]int64{"kv": 1}, `m.g:1:1: -kv: the model has no flag("kv", …) to set`},
	} {
		res, err := Compile("m.g", src, Config{Flags: c.flags})
		got := ""
		if err != nil {
			got = strings.SplitN(err.Error(), "\n", 2)[0]
		} else {
			if len(res.Graph.Meta) > 0 {
				t.Errorf("flags %v: flags recorded as metadata: %v", c.flags, res.Graph.Meta)
			}
			y := res.Graph.Outputs[0]
			got = y.Type.String() + y.ShapeString()
			if y.Src[0].Kind == ir.KindNode {
				got += " " + y.Src[0].Op.String() // the if's body ran
			}
		}
		if got != c.want {
			t.Errorf("flags %v: got %q, want %q", c.flags, got, c.want)
		}
	}
}

// TestTypeFlags: a tensor type flag("ctk", f16) is the command line's
// type, else its default; a quantized KV cache compiles only where its
// views keep whole blocks (a transposed V cache does not).
func TestTypeFlags(t *testing.T) {
	src := []byte(`dim n <= 4
input x: f32[64, n]
state cache: flag("ctk", f16)[64, 8]
slot = view_2d(cache, 64, n, row_size(cache, 64), 0)
c = cpy(x, slot)
k = view_2d(cache, 64, 8, row_size(cache, 64), 0)
output y = mul_mat(k, x)
state cache_t: flag("ctv", f16)[8 * 64]
vt = view_2d(cache_t, n, 64, row_size(cache_t, 8), 0)
`)
	for _, c := range []struct {
		flags map[string]int64
		want  string // the error, or the cache's type
	}{
		{nil, "f16"},
		{map[string]int64{"ctk": int64(tensor.Q8_0)}, "q8_0"},
		{map[string]int64{"ctk": int64(tensor.Q4_0)}, "q4_0"},
		{map[string]int64{"ctv": int64(tensor.Q8_0)}, "m.g:9:6: view: ne0 = n is not a whole number of q8_0 blocks of 32 elements (a quantized tensor is viewed in whole blocks: a transposed V cache cannot be quantized; with flash attention, -fa on, V is laid out as K)"},
	} {
		res, err := Compile("m.g", src, Config{Flags: c.flags})
		got := ""
		if err != nil {
			got = strings.SplitN(err.Error(), "\n", 2)[0]
		} else {
			for _, l := range res.Graph.Params {
				if l.Name == "cache" {
					got = l.Type.String()
				}
			}
		}
		if got != c.want {
			t.Errorf("flags %v: got %q, want %q", c.flags, got, c.want)
		}
	}
}
