package llamacpp_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/graphc/graphc/internal/llamacpp"
	"github.com/graphc/graphc/runtime/cpu"
)

// oracleMatrix is what an oracle test compares: each of llama.cpp's CPU
// builds this processor runs (llamacpp.OracleVariants) against graphc at
// each level of its kernels (cpu.ISAs). It logs both lists, so that a run
// states what it checked.
type oracleMatrix struct {
	variants, levels []string
}

func newOracleMatrix(t *testing.T, h *llamacpp.Harness) oracleMatrix {
	t.Helper()
	variants, scores, err := h.Variants()
	if err != nil {
		t.Fatal(err)
	}
	if len(variants) == 0 {
		t.Fatalf("this processor runs none of llama.cpp's builds %v (ggml's scores %v)", llamacpp.OracleVariants, scores)
	}
	m := oracleMatrix{variants: variants, levels: cpu.ISAs()}
	t.Logf("llama.cpp CPU builds compared: %s; graphc kernel levels: %s", strings.Join(m.variants, ", "), strings.Join(m.levels, ", "))
	return m
}

// atLevels runs f with graphc's kernels at each level, then restores the
// starting one.
func (m oracleMatrix) atLevels(t *testing.T, f func(level string)) {
	t.Helper()
	start := cpu.ISA()
	defer func() {
		if err := cpu.SetISA(start); err != nil {
			t.Fatal(err)
		}
	}()
	for _, l := range m.levels {
		if err := cpu.SetISA(l); err != nil {
			t.Fatal(err)
		}
		f(l)
	}
}

// graphcRuns keeps graphc's logits at each level by the steps they
// follow: graphc computes the same whichever of llama.cpp's builds chose
// its greedy steps, so builds that agree on them share one run.
type graphcRuns map[string]map[string][][]float32

// logits are graphc's logits at each level after steps, run by run (at
// the level atLevels set) the first time those steps come.
func (m oracleMatrix) logits(t *testing.T, runs graphcRuns, steps []int32, run func() [][]float32) map[string][][]float32 {
	t.Helper()
	seq := fmt.Sprint(steps)
	if runs[seq] == nil {
		runs[seq] = map[string][][]float32{}
		m.atLevels(t, func(level string) { runs[seq][level] = run() })
	}
	return runs[seq]
}

// stepBounds is how far graphc's logits may lie from llama.cpp's, step
// by step (a step is the prompt's last token, then each decode step).
//
// Every step must agree within roundSteps; all but maxStepped of them
// within float, the bound of two implementations that sum the same values
// in another order. A step beyond float is one where a last-bit difference
// upstream crossed a rounding step (an activation rounded to q8_0 or f16,
// a value stored in the f16 KV cache) and the whole step moved: llama.cpp's
// own CPU builds differ that way on some files (the haswell build against
// the AVX-512 ones by 2.3e-3 on one step of qwen2-gqa's q8_0 file, the
// softmax of the 15th step summed in 8-wide rather than 16-wide pieces
// and then rounded to f16 for the product with the f16 V cache). A bug in
// a graph or a kernel moves most steps: a wrong rope mode in qwen2 moves
// every step, by 2e-3 to 1.4e-2.
type stepBounds struct {
	float, roundSteps float64
	maxStepped        int
}

// check compares got with want (rows of logits, one a step) and reports
// how far apart they are; generated are llama.cpp's greedy tokens, the
// argmax of each row but the last.
func (b stepBounds) check(t *testing.T, what string, got, want [][]float32, generated []int32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: graphc has %d rows of logits, llama.cpp %d", what, len(got), len(want))
	}
	var worst float64
	var stepped []string
	for row := range got {
		if len(got[row]) != len(want[row]) {
			t.Fatalf("%s: graphc has %d logits a row, llama.cpp %d", what, len(got[row]), len(want[row]))
		}
		var d float64
		for i, x := range got[row] {
			d = max(d, math.Abs(float64(x-want[row][i])))
		}
		worst = max(worst, d)
		tol := b.float
		if d > b.float {
			stepped = append(stepped, fmt.Sprintf("step %d by %.3g", row, d))
			tol = b.roundSteps
		}
		if d > b.roundSteps {
			t.Errorf("%s: step %d: logits differ by up to %.3g, more than %g", what, row, d, b.roundSteps)
		}
		// A tie within the step's bound may go either way.
		if row < len(generated) {
			w := want[row]
			if a, g := argmax(got[row]), generated[row]; a != g && float64(w[g]-w[a]) > 2*tol {
				t.Errorf("%s: step %d: graphc picks token %d, llama.cpp %d (llama.cpp's logits %g and %g)", what, row, a, g, w[a], w[g])
			}
		}
	}
	t.Logf("%s: max |graphc − llama.cpp| %.3g over %d×%d logits; beyond %g: %s", what, worst, len(got), len(got[0]), b.float, orNone(stepped))
	if len(stepped) > b.maxStepped {
		t.Errorf("%s: %d of %d steps differ by more than %g (at most %d may, each where a rounding step was crossed): %s",
			what, len(stepped), len(got), b.float, b.maxStepped, strings.Join(stepped, ", "))
	}
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
