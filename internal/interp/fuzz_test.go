package interp_test

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/internal/interp"
	"github.com/graphc/graphc/ir"
)

// fuzzBudget keeps each input cheap: models needing more are skipped
// before anything is allocated.
var fuzzBudget = interp.Config{Threads: 2, MaxBytes: 64 << 20, MaxWork: 1 << 26}

// hangAfter is how long one input may take: budgets keep them to well under
// a second each.
const hangAfter = 20 * time.Second

// reportedSeeds are a tester's reproducers of crashes and wrong results
// past the compiler (sizes that overflow, views outside or backwards,
// writes to weights, names generated code uses); they stay in the corpus
// whatever the fix.
var reportedSeeds = []string{
	"dim n = 9223372036854775807\ninput x: f32[n]\noutput y = scale(x, 2)\n",
	"dim n <= 9223372036854775807\ninput x: f32[n]\noutput y = scale(x, 2)\n",
	"weight w: f32[4294967296, 4294967296]\noutput y = scale(w, 2)\n",
	"weight w: f32[3037000500, 3037000500]\noutput y = scale(w, 2)\n",
	"input x: f32[3037000500, 3037000500]\noutput y = scale(x, 2)\n",
	"dim n = 1000000000000\nweight w: f32[100000, 100000]\ninput x: f32[100000, 4]\noutput y = mul_mat(w, x)\n",
	"dim n = 1000000000000\ninput x: f32[n]\noutput y = scale(x, 2)\n",
	"input x: f32[16]\noutput y = cont(view_2d(x, 4, 4, -4, 0))\n",
	"input x: f32[16]\noutput y = cont(view_1d(x, 4, -8))\n",
	"input x: f32[16]\noutput y = cont(view_1d(x, 4, 3))\n",
	"weight w: f32[16]\ninput x: f32[4]\noutput y = cpy(x, view_1d(w, 4, 0))\n",
	"input x: f32[4]\noutput named = scale(x, 2)\n",
	"input x: f32[4]\noutput type = scale(x, 2)\noutput Model = scale(x, 3)\noutput m = scale(x, 4)\n",
	"input tok: i32[4] fill i * 100\nweight emb: f32[8, 16]\noutput e = get_rows(emb, tok)\n",
	"dim n <= 4\ninput x: f32[8] fill i\noutput v = cont(view_1d(x, 4, n * 8))\n",
	// A shape that shrinks as its dim grows is largest below the bound,
	// where the planner once reserved it: at n = 0 x overran its place.
	"dim n <= 8\ninput x: f32[16 - n]\noutput y = scale(x, 2)\noutput z = scale(y, 2)\n",
}

// FuzzRun compiles arbitrary models and runs every one that compiles in
// process, with its bounded dims at their bounds, at 1 and at 0: a panic
// while running (a BUG: of the interpreter's, a plan that contradicts
// itself, a kernel's crash) is a failure; compile errors, refused
// evaluations and over-budget models are not, and a compiler bug is
// skipped as FuzzCompile's. testdata/fuzz/FuzzRun holds what it found:
// 178a4a5d7c100264 crashed the DSL's error rendering (fixed);
// 6397bc37b7f1328c overflowed plan_memory's sizes (now a positioned
// error: sizes are checked).
func FuzzRun(f *testing.F) {
	for _, pattern := range []string{"../../golden/*.txtar", "../../compiler/testdata/errors/*.txtar"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				f.Fatal(err)
			}
			for _, s := range ar.Files {
				if s.Name == "model.g" {
					f.Add(string(s.Data))
				}
			}
		}
	}
	for _, file := range []string{"../../examples/llama/llama.g", "../../examples/mlp/mlp.g"} {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	for _, s := range reportedSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		// A hang is a bug too, and the fuzzer reports only crashes: crash
		// the worker, so that the input is saved.
		watchdog := time.AfterFunc(hangAfter, func() { panic(fmt.Sprintf("FuzzRun: still running after %v", hangAfter)) })
		defer watchdog.Stop()
		res, err := compiler.Compile("fuzz.g", []byte(src), compiler.Config{Verify: true})
		if err != nil {
			if ie, ok := err.(*compiler.InternalError); ok {
				// FuzzCompile fails on the same input with the same
				// configuration: this target is about what runs.
				t.Skipf("the compiler's bug, FuzzCompile's to find: %s", ie.Msg)
			}
			return
		}
		m, err := interp.Load(res.Graph, fuzzBudget)
		if err != nil {
			if !errors.Is(err, interp.ErrTooBig) {
				t.Logf("not run: %v", err)
			}
			return
		}
		defer m.Close()
		var last map[string]int
		for _, value := range []func(*ir.Dim) int{
			func(d *ir.Dim) int { return int(d.Bound) },
			func(d *ir.Dim) int { return int(min(d.Bound, 1)) },
			func(*ir.Dim) int { return 0 },
		} {
			dims := map[string]int{}
			for _, d := range res.Graph.Dims {
				if d.Bounded {
					dims[d.Name] = value(d)
				}
			}
			if maps.Equal(dims, last) {
				continue
			}
			last = dims
			if _, err := m.Eval(dims, nil); err != nil {
				t.Logf("dims %v: %v", dims, err)
			}
		}
	})
}
