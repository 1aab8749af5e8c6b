package cli

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/ggmltrace"
	"github.com/graphc/graphc/internal/planview"
	"github.com/graphc/graphc/ir"
)

// ggmlCheckReport is ggml-check's JSON output: the differences, graphc's
// own plan in the `graphc plan -json` schema, and ggml's buffer sizes.
type ggmlCheckReport struct {
	Trace             string           `json:"trace"`
	Identical         bool             `json:"identical"`
	Differences       []ggmltrace.Diff `json:"differences"`
	Plan              *planview.Plan   `json:"plan"`
	GGMLComputeBuffer map[string]int64 `json:"ggml_compute_buffer_size"`
	MaxAbsDiff        *float64         `json:"run_max_abs_diff,omitempty"`
	Mapped            *mappedRun       `json:"mapped_run,omitempty"`
}

func cmdGGMLCheck(e *env, args []string) error {
	fs := newFlags(e, "ggml-check")
	run := fs.Bool("run", false, "also run the graph on the cpu with the trace's fill and input rules and compare its output (1e-4, relative above 1)")
	sim := fs.Bool("sim", false, "with -run, also run ggml's own plan with its backends mapped onto ones any machine runs (GPU/RPC: sim0, sim1, …; BLAS: blas; CPU: cpu) and compare it with the cpu-only run (bit for bit; 1e-5 with BLAS)")
	asJSON := fs.Bool("json", false, "print the differences and graphc's plan as JSON")
	files, err := parseFlags(fs, args, 1, -1)
	if err != nil {
		return err
	}
	tr, _, diffs, err := ggmltrace.Check(files[0])
	if err != nil {
		return &compiler.UserError{Msg: fmt.Sprintf("%s: %v", files[0], err)}
	}
	full, _, err := tr.Plan("", 0)
	if err != nil {
		return &compiler.UserError{Msg: fmt.Sprintf("%s: %v", files[0], err)}
	}
	report := &ggmlCheckReport{Trace: files[0], Identical: len(diffs) == 0, Differences: diffs, Plan: planview.JSON(full), GGMLComputeBuffer: tr.Result.ComputeBufferSize}
	if report.Differences == nil {
		report.Differences = []ggmltrace.Diff{}
	}
	var runErr error
	if *run {
		worst, err := runTrace(tr)
		if err != nil {
			return err
		}
		report.MaxAbsDiff = &worst
		if worst > 1e-4 {
			runErr = &compiler.UserError{Msg: fmt.Sprintf("%s: output %s differs from ggml's by up to %g (tolerance 1e-4, relative above 1)", files[0], tr.Output.Tensor, worst)}
		}
		if *sim && runErr == nil {
			if report.Mapped, err = runTraceMapped(tr); err != nil {
				return err
			}
			runErr = report.Mapped.check(files[0], tr)
		}
	}
	if *asJSON {
		if err := writeJSON(e.stdout, report); err != nil {
			return err
		}
	} else {
		printCheck(e.stdout, tr, report)
	}
	if runErr != nil {
		return runErr
	}
	if len(diffs) > 0 {
		return &compiler.UserError{Msg: fmt.Sprintf("%s: %d decisions differ from ggml's", files[0], len(diffs))}
	}
	return nil
}

func printCheck(w io.Writer, tr *ggmltrace.Trace, r *ggmlCheckReport) {
	for _, d := range r.Differences {
		fmt.Fprintln(w, d)
	}
	for _, b := range r.Plan.Buffers {
		ggml := "-"
		for name, size := range r.GGMLComputeBuffer {
			if be := backendOfBuffer(tr, name); be == b.BufferType && size > 0 {
				ggml = fmt.Sprintf("%d", size)
			}
		}
		fmt.Fprintf(w, "compute buffer %s: graphc %d bytes, ggml %s (lower bound %d)\n", b.BufferType, b.Bytes, ggml, b.LowerBound)
	}
	if r.MaxAbsDiff != nil {
		fmt.Fprintf(w, "output %s: max |graphc - ggml| / max(1, |ggml|) = %.3g\n", tr.Output.Tensor, *r.MaxAbsDiff)
	}
	if r.Mapped != nil {
		r.Mapped.print(w, tr)
	}
	if r.Identical {
		fmt.Fprintln(w, "identical")
	}
}

// backendOfBuffer maps a backend named in compute_buffer_size to its buffer type.
func backendOfBuffer(tr *ggmltrace.Trace, backend string) string {
	for _, b := range tr.Backends {
		if b.Name == backend {
			return b.Buft
		}
	}
	return ""
}

// runTrace computes the traced graph on the cpu alone, with the trace's
// weights and inputs, and returns the largest difference from ggml's output.
func runTrace(tr *ggmltrace.Trace) (float64, error) {
	values, _, err := runTraceOn(tr, false)
	if err != nil {
		return 0, err
	}
	return diffFromGGML(tr, values), nil
}

// diffFromGGML is the largest difference of values from ggml's output:
// 1e-4 absolute, relative for values above 1: float32's own rounding of a
// value of 700 is 6e-5, and ggml's summation order (OpenBLAS's for upgraded
// matmuls) is not ours.
func diffFromGGML(tr *ggmltrace.Trace, values []float64) float64 {
	worst := 0.0
	for i, v := range tr.Output.Values {
		worst = max(worst, math.Abs(values[i]-v)/max(1, math.Abs(v)))
	}
	return worst
}

// traceInputFill is the traces' input rule (their input_rule field) as fill
// expressions: mlp_in, x_in = cos(i*0.013); inp_tokens[t] = (t*7+3) %
// n_vocab; inp_pos[t] = kv_head + t; KQ_mask[t, j] = 0 if j <= kv_head+t
// else -inf.
func traceInputFill(tr *ggmltrace.Trace, name string) (*ir.FillExpr, error) {
	num := func(v float64) *ir.FillExpr { return &ir.FillExpr{Op: "num", Num: v} }
	v := func(name string) *ir.FillExpr { return &ir.FillExpr{Op: "var", Var: name} }
	op := func(o string, a ...*ir.FillExpr) *ir.FillExpr { return &ir.FillExpr{Op: o, Args: a} }
	hp := func(k string) (*ir.FillExpr, error) {
		x, ok := tr.HParams[k].(float64)
		if !ok {
			return nil, fmt.Errorf("trace %s: input %s needs hparams.%s", tr.Case, name, k)
		}
		return num(x), nil
	}
	switch name {
	case "mlp_in", "x_in":
		return &ir.FillExpr{Op: "call", Func: "cos", Args: []*ir.FillExpr{op("*", v("i"), num(0.013))}}, nil
	case "inp_tokens":
		nv, err := hp("n_vocab")
		if err != nil {
			return nil, err
		}
		return op("%", op("+", op("*", v("i"), num(7)), num(3)), nv), nil
	case "inp_pos":
		kv, err := hp("kv_head")
		return op("+", kv, v("i")), err
	case "KQ_mask":
		kv, err := hp("kv_head")
		if err != nil {
			return nil, err
		}
		return &ir.FillExpr{Op: "call", Func: "where", Args: []*ir.FillExpr{op("<=", v("i0"), op("+", kv, v("i1"))), num(0), op("neg", num(math.Inf(1)))}}, nil
	}
	return nil, fmt.Errorf("trace %s: input %s has no known fill rule (known: %s)", tr.Case, name, strings.Join([]string{"mlp_in", "x_in", "inp_tokens", "inp_pos", "KQ_mask"}, ", "))
}
