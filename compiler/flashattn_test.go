package compiler

import (
	"fmt"
	"strings"
	"testing"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/ops"
)

// TestFlashAttnAuto: -fa auto keeps flash attention where flash_attn_ext
// runs beside its K cache, and plans without it, saying why, where the
// cache's backend lacks the op (a device kind made for the test).
func TestFlashAttnAuto(t *testing.T) {
	backend.Kinds = append(backend.Kinds, &backend.Kind{Name: "nofa", Indexed: true, Package: "example.com/nofa", Type: "Backend", New: "New",
		Describe: func(n int) *backend.Description {
			d := backend.Sim(n)
			d.Name = fmt.Sprintf("nofa%d", n)
			d.SupportsOp = func(q *backend.OpQuery) bool { return q.Op != ops.FlashAttnExt }
			return d
		}})
	defer func() { backend.Kinds = backend.Kinds[:len(backend.Kinds)-1] }()
	src := []byte(`dim n <= 4
input q: f32[64, n, 4]
state cache_k: f16[64, 8, 2]
state cache_v: f16[64, 8, 2]
k = view_3d(cache_k, 64, 8, 2, row_size(cache_k, 64), row_size(cache_k, 64 * 8), 0)
v = view_3d(cache_v, 64, 8, 2, row_size(cache_v, 64), row_size(cache_v, 64 * 8), 0)
o = q
if flag("fa", 0) {
  o = flash_attn_ext(q, k, v, scale=0.125)
}
if flag("fa", 0) == 0 {
  o = soft_max(mul_mat(k, q))
}
output y = relu(o)
`)
	for _, c := range []struct {
		backends []string
		flags    map[string]int64
		op       ops.Op
		warning  string
	}{
		{[]string{"cpu"}, nil, ops.FlashAttnExt, ""},
		{[]string{"sim0", "cpu"}, nil, ops.FlashAttnExt, ""},
		{[]string{"nofa0", "cpu"}, nil, ops.SoftMax, "-fa auto: flash attention off: o runs on cpu, its K cache cache_k on nofa0 (usually: nofa0 lacks the op for these types)"},
		{[]string{"nofa0", "cpu"}, map[string]int64{"fa": 1}, ops.FlashAttnExt, ""}, // -fa on stays on
	} {
		cfg := Config{Backends: c.backends, Flags: c.flags, FlashAttnAuto: true, Placement: Placement{Overrides: []Override{mustOverride(t, "cache_.*="+c.backends[0])}}}
		res, err := Compile("m.g", src, cfg)
		if err != nil {
			t.Fatalf("%v %v: %v", c.backends, c.flags, err)
		}
		if got := res.Graph.Outputs[0].Src[0].Op; got != c.op {
			t.Errorf("%v %v: the output is %v, want %v", c.backends, c.flags, got, c.op)
		}
		if got := strings.Join(res.Warnings, "\n"); got != c.warning {
			t.Errorf("%v %v: warnings %q, want %q", c.backends, c.flags, got, c.warning)
		}
	}
	// A model without the flag compiles as it is.
	if _, err := Compile("m.g", []byte("input x: f32[4]\noutput y = relu(x)\n"), Config{FlashAttnAuto: true}); err != nil {
		t.Error(err)
	}
}

func mustOverride(t *testing.T, s string) Override {
	o, err := ParseOverride(s)
	if err != nil {
		t.Fatal(err)
	}
	return o
}
