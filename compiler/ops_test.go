package compiler

import (
	"os"
	"strings"
	"testing"
	"unicode"

	"github.com/graphc/graphc/dsl"
	"github.com/graphc/graphc/ops"
)

// lowerExamples holds a DSL call of every op, on the tensors of
// lowerDecls.
var lowerExamples = map[ops.Op]string{
	ops.GetRows:      "get_rows(w, idx)",
	ops.MulMat:       "mul_mat(w, a)",
	ops.Add:          "add(a, b)",
	ops.Sub:          "sub(a, b)",
	ops.Mul:          "mul(a, b)",
	ops.Div:          "div(a, b)",
	ops.Scale:        "scale(a, s=2)",
	ops.Relu:         "relu(a)",
	ops.Gelu:         "gelu(a)",
	ops.Silu:         "silu(a)",
	ops.Tanh:         "tanh(a)",
	ops.Sigmoid:      "sigmoid(a)",
	ops.RMSNorm:      "rms_norm(a, eps=1e-6)",
	ops.Norm:         "norm(a)",
	ops.SoftMax:      "soft_max(a, m, scale=0.5)",
	ops.Rope:         "rope(a, pos, n_dims=8)",
	ops.Cpy:          "cpy(a, s)",
	ops.Cont:         "cont(a)",
	ops.View:         "view_2d(a, 8, 4, 32, 0)",
	ops.Reshape:      "reshape(a, 64)",
	ops.Permute:      "permute(a, 0, 2, 1, 3)",
	ops.Transpose:    "transpose(m)",
	ops.FlashAttnExt: "flash_attn_ext(a, kh, kh, mh, scale=0.25, prec=32)",
	ops.MulMatID:     "mul_mat_id(we, a, ids)",
	ops.ArgSort:      "argsort(a, order=1)",
	ops.TopK:         "top_k(a, k=3)",
	ops.SumRows:      "sum_rows(a)",
}

const lowerDecls = `input a: f32[8, 4, 2] fill i
input b: f32[8, 4, 2] fill i
input m: f32[8, 4] fill i
input idx: i32[3] fill i
input pos: i32[2] fill i
weight w: f32[8, 8]
state s: f32[64]
state kh: f16[8, 6, 2]
input mh: f16[6, 4] fill 0
weight we: f32[8, 5, 3]
input ids: i32[4, 2] fill i % 3
`

// TestEveryOpLowers lowers a call of every op and wants a node of that op.
func TestEveryOpLowers(t *testing.T) {
	for _, op := range ops.All() {
		call, ok := lowerExamples[op]
		if !ok {
			t.Errorf("op %s has no DSL call in lowerExamples (compiler/ops_test.go)", op)
			continue
		}
		t.Run(op.String(), func(t *testing.T) {
			src := lowerDecls + "output y = " + call + "\n"
			f, err := Parse("ops.g", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			g, _, err := Lower(f, nil, nil, nil)
			if err != nil {
				t.Fatalf("%s: %v", call, err)
			}
			if y := g.Outputs[0]; y.Op != op {
				t.Errorf("%s lowers to op %s", call, y.Op)
			}
		})
	}
}

// TestDSLReferenceListsEveryOp: docs/dsl.md's list of the DSL's functions
// names every op of the table (view as view_1d…view_4d), and each op's
// keyword parameters, and every dtype of the type table the DSL takes.
func TestDSLReferenceListsEveryOp(t *testing.T) {
	doc, err := os.ReadFile("../docs/dsl.md")
	if err != nil {
		t.Fatal(err)
	}
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(string(doc), func(r rune) bool { return r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		words[w] = true
	}
	for _, op := range ops.All() {
		name := op.String()
		if op == ops.View {
			name = "view_1d"
		}
		if !words[name] {
			t.Errorf("docs/dsl.md does not name op %s", name)
		}
		for _, k := range keys(op) {
			if !strings.Contains(string(doc), k.Key+"=") {
				t.Errorf("docs/dsl.md does not name %s's parameter %s=", op, k.Key)
			}
		}
	}
	for _, dt := range dsl.DTypes() {
		if !words[dt] {
			t.Errorf("docs/dsl.md does not name dtype %s", dt)
		}
	}
}
