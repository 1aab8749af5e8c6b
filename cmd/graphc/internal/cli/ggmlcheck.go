package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/graphc/graphc/backend/libs"
	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/ggmltrace"
	"github.com/graphc/graphc/internal/planview"
	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/runtime/rpc/rpcserver"
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
	RPC               *rpcRun          `json:"rpc_run,omitempty"`
	Vulkan            *gpuRun          `json:"vulkan_run,omitempty"`
	CUDA              *gpuRun          `json:"cuda_run,omitempty"`

	tr *ggmltrace.Trace // for printing
}

func cmdGGMLCheck(e *env, args []string) error {
	fs := newFlags(e, "ggml-check")
	run := fs.Bool("run", false, "also run the graph on the cpu with the trace's fill and input rules and compare its output (1e-4, relative above 1)")
	sim := fs.Bool("sim", false, "with -run, also run ggml's own plan with its backends mapped onto ones any machine runs (GPU/RPC: sim0, sim1, …; BLAS: blas; CPU: cpu) and compare it with the cpu-only run (bit for bit; 1e-5 with BLAS)")
	rpc := fs.Bool("rpc", false, "with -run, also run ggml's own plan with its RPC devices as rpc0, rpc1, … on ggml rpc-servers started here, one per device on a free loopback port and killed when done, and compare it with ggml's recorded output (1e-4, relative above 1) and the bytes ggml moved, of expert weights read by MUL_MAT_ID only the used experts (the server binary: $"+rpcserver.EnvBinary+", or rpc-server on $PATH)")
	vulkan := fs.Bool("vulkan", false, "with -run, also run ggml's own plan with its GPU-like devices as vulkan0, vulkan1, … (ggml's Vulkan devices: $"+libs.GGMLPathEnv+" names ggml's libraries) and compare it with the cpu-only run and ggml's recorded output (2e-4, relative above 1) and the plan's bytes copied")
	cuda := fs.Bool("cuda", false, "with -run, like -vulkan with ggml's CUDA devices as cuda0, cuda1, …")
	asJSON := fs.Bool("json", false, "print one JSON object per trace, in argument order: the differences, graphc's plan and ggml's compute buffers (docs/plan-json.md)")
	files, err := parseFlags(fs, args, 1, -1)
	if err != nil {
		return err
	}
	if *sim && !*run {
		return &usageError{"-sim runs ggml's plan of the trace, which needs -run"}
	}
	if *rpc && !*run {
		return &usageError{"-rpc runs ggml's plan of the trace, which needs -run"}
	}
	if *vulkan && !*run {
		return &usageError{"-vulkan runs ggml's plan of the trace, which needs -run"}
	}
	if *cuda && !*run {
		return &usageError{"-cuda runs ggml's plan of the trace, which needs -run"}
	}
	// A trace that differs or fails is reported and the others still run:
	// one command checks a whole directory of traces.
	var failed []string
	for _, file := range files {
		report, err := checkTrace(e.ctx, file, *run, *sim, *rpc, *vulkan, *cuda)
		var user *compiler.UserError
		if err != nil && !errors.As(err, &user) {
			return err
		}
		if report != nil {
			if *asJSON {
				if err := writeJSON(e.stdout, report); err != nil {
					return err
				}
			} else {
				printCheck(e.stdout, report)
			}
		}
		if err != nil {
			failed = append(failed, err.Error())
		}
	}
	if len(failed) > 0 {
		return &compiler.UserError{Msg: strings.Join(failed, "\n")}
	}
	return nil
}

// checkTrace compares graphc's plan of one trace with ggml's decisions and,
// with run (and sim, rpc, vulkan, cuda), runs it. It returns the report when there is
// one, and a user error when the trace differs or cannot be checked.
func checkTrace(ctx context.Context, file string, run, sim, rpc, vulkan, cuda bool) (*ggmlCheckReport, error) {
	tr, _, diffs, err := ggmltrace.Check(file)
	if err != nil {
		return nil, traceError(file, err)
	}
	full, _, err := tr.Plan("", 0)
	if err != nil {
		return nil, traceError(file, err)
	}
	report := &ggmlCheckReport{Trace: file, Identical: len(diffs) == 0, Differences: diffs, Plan: planview.JSON(full), GGMLComputeBuffer: tr.Result.ComputeBufferSize, tr: tr}
	if report.Differences == nil {
		report.Differences = []ggmltrace.Diff{}
	}
	if run {
		worst, err := runTrace(ctx, tr)
		if err != nil {
			return report, err
		}
		report.MaxAbsDiff = &worst
		if worst > 1e-4 {
			return report, &compiler.UserError{Msg: fmt.Sprintf("%s: output %s differs from ggml's by up to %g (tolerance 1e-4, relative above 1)", file, tr.Output.Tensor, worst)}
		}
		if sim {
			if report.Mapped, err = runTraceMapped(ctx, tr); err != nil {
				return report, err
			}
			if err := report.Mapped.check(file, tr); err != nil {
				return report, err
			}
		}
		if rpc {
			if report.RPC, err = runTraceRPC(ctx, tr); err != nil {
				return report, err
			}
			if err := report.RPC.check(file, tr); err != nil {
				return report, err
			}
		}
		for _, gpu := range []struct {
			on     traceBackends
			want   bool
			report **gpuRun
		}{{ggmlOnVulkan, vulkan, &report.Vulkan}, {ggmlOnCUDA, cuda, &report.CUDA}} {
			if !gpu.want {
				continue
			}
			if *gpu.report, err = runTraceGPU(ctx, tr, gpu.on); err != nil {
				return report, err
			}
			if err := (*gpu.report).check(file, tr); err != nil {
				return report, err
			}
		}
	}
	if len(diffs) > 0 {
		return report, &compiler.UserError{Msg: fmt.Sprintf("%s: %d decisions differ from ggml's", file, len(diffs))}
	}
	return report, nil
}

// traceError is err as a user error that names the trace once (reading
// errors name it already, planning errors do not).
func traceError(file string, err error) error {
	msg := err.Error()
	if !strings.Contains(msg, file) {
		msg = file + ": " + msg
	}
	return &compiler.UserError{Msg: msg}
}

// printCheck prints a trace's differences, one indented line each, then
// its summary line: the trace, identical or not, graphc's compute buffers
// with ggml's, and what -run, -sim, -rpc, -vulkan and -cuda measured.
func printCheck(w io.Writer, r *ggmlCheckReport) {
	for _, d := range r.Differences {
		fmt.Fprintf(w, "  %s\n", d)
	}
	verdict := "identical"
	if !r.Identical {
		verdict = fmt.Sprintf("%d decisions differ from ggml's", len(r.Differences))
	}
	var bufs []string
	for _, b := range r.Plan.Buffers {
		ggml := "-"
		for name, size := range r.GGMLComputeBuffer {
			if be := backendOfBuffer(r.tr, name); be == b.BufferType && size > 0 {
				ggml = fmt.Sprintf("%d", size)
			}
		}
		bufs = append(bufs, fmt.Sprintf("%s %d bytes (ggml %s)", b.BufferType, b.Bytes, ggml))
	}
	parts := []string{verdict, "compute buffers " + strings.Join(bufs, ", ")}
	if r.MaxAbsDiff != nil {
		parts = append(parts, fmt.Sprintf("output %s within %.3g of ggml's", r.tr.Output.Tensor, *r.MaxAbsDiff))
	}
	if r.Mapped != nil {
		parts = append(parts, r.Mapped.summary())
	}
	if r.RPC != nil {
		parts = append(parts, r.RPC.summary(r.tr))
	}
	for _, g := range []*gpuRun{r.Vulkan, r.CUDA} {
		if g != nil {
			parts = append(parts, g.summary(r.tr))
		}
	}
	fmt.Fprintf(w, "%s: %s\n", r.Trace, strings.Join(parts, "; "))
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
func runTrace(ctx context.Context, tr *ggmltrace.Trace) (float64, error) {
	run, err := runTraceOn(ctx, tr, cpuOnly)
	if err != nil {
		return 0, err
	}
	return diffFromGGML(tr, run.values), nil
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
