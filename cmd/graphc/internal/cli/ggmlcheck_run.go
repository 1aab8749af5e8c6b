package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"strings"

	"github.com/graphc/graphc/codegen"
	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/ggmltrace"
	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/passes"
)

// mappedRun is ggml-check -run -sim's report: ggml's own plan of a trace,
// run on backends any machine has, compared with the cpu-only run.
type mappedRun struct {
	// Backends maps the trace's backends, in order, to the ones run.
	Backends []string `json:"backends"`
	// MaxDiffCPU is the largest difference from the cpu-only run,
	// absolute, relative for values above 1; BitIdentical says every
	// value is the same to the bit.
	MaxDiffCPU   float64 `json:"max_diff_cpu"`
	BitIdentical bool    `json:"bit_identical"`
	// Tolerance is what the comparison allows: 0 without BLAS, 1e-5 with.
	Tolerance float64 `json:"tolerance"`
	// BytesCopied is what the run reported copying between backends;
	// PlanBytesCopied the plan's bytes_copied_per_eval.
	BytesCopied     int64 `json:"bytes_copied"`
	PlanBytesCopied int64 `json:"plan_bytes_copied"`
}

// summary is the mapped run in the words of ggml-check's summary line.
func (r *mappedRun) summary() string {
	how := fmt.Sprintf("within %.3g of the cpu-only run", r.MaxDiffCPU)
	if r.BitIdentical {
		how = "bit for bit the cpu-only run"
	}
	return fmt.Sprintf("ggml's plan on %s: %s, %d bytes copied per evaluation (the plan's %d)",
		strings.Join(r.Backends, ", "), how, r.BytesCopied, r.PlanBytesCopied)
}

// check reports a mapped run outside its tolerance or copying other than
// the bytes ggml moved.
func (r *mappedRun) check(file string, tr *ggmltrace.Trace) error {
	if r.MaxDiffCPU > r.Tolerance || math.IsNaN(r.MaxDiffCPU) {
		return &compiler.UserError{Msg: fmt.Sprintf("%s: ggml's plan on %s: output %s differs from the cpu-only run by up to %g (tolerance %g)",
			file, strings.Join(r.Backends, ", "), tr.Output.Tensor, r.MaxDiffCPU, r.Tolerance)}
	}
	// The plan's bytes are the most a run moves: an expert copy moves
	// the experts the ids choose, those ggml's recorded evaluation moved.
	if want := tr.Result.BytesMoved(); r.BytesCopied != want {
		return &compiler.UserError{Msg: fmt.Sprintf("%s: ggml's plan on %s copied %d bytes per evaluation, ggml %d (the plan's at most %d)",
			file, strings.Join(r.Backends, ", "), r.BytesCopied, want, r.PlanBytesCopied)}
	}
	return nil
}

// runTraceMapped runs ggml's own plan of the trace on backends any machine
// has (see mapTraceBackends) and compares it with the cpu-only run.
func runTraceMapped(ctx context.Context, tr *ggmltrace.Trace) (*mappedRun, error) {
	cpu, err := runTraceOn(ctx, tr, cpuOnly)
	if err != nil {
		return nil, err
	}
	mapped, err := runTraceOn(ctx, tr, ggmlOnSim)
	if err != nil {
		return nil, err
	}
	r := &mappedRun{Backends: mapped.backends, BytesCopied: mapped.bytesCopied, PlanBytesCopied: mapped.planBytesCopied}
	for _, n := range mapped.backends {
		if n == "blas" {
			r.Tolerance = 1e-5
		}
	}
	r.BitIdentical = len(cpu.values) == len(mapped.values)
	for i := range cpu.values {
		if i >= len(mapped.values) {
			break
		}
		d := math.Abs(mapped.values[i]-cpu.values[i]) / max(1, math.Abs(cpu.values[i]))
		if math.IsNaN(d) {
			r.MaxDiffCPU = math.NaN()
			r.BitIdentical = false
			break
		}
		r.MaxDiffCPU = max(r.MaxDiffCPU, d)
		r.BitIdentical = r.BitIdentical && math.Float32bits(float32(mapped.values[i])) == math.Float32bits(float32(cpu.values[i]))
	}
	return r, nil
}

// traceBackends is what runTraceOn runs a trace's graph on.
type traceBackends int

const (
	cpuOnly      traceBackends = iota // graphc's plan for the cpu alone
	ggmlOnSim                         // ggml's plan, its GPU-like devices as sim<N>
	ggmlOnRPC                         // ggml's plan, its RPC devices as rpc<N> on servers started for the run
	ggmlOnVulkan                      // ggml's plan, its GPU-like devices as vulkan<N>, ggml's Vulkan devices
	ggmlOnCUDA                        // ggml's plan, its GPU-like devices as cuda<N>, ggml's CUDA devices
)

// gpuKind is the backend kind on maps GPU-like devices to, or "".
func (on traceBackends) gpuKind() string {
	switch on {
	case ggmlOnVulkan:
		return "vulkan"
	case ggmlOnCUDA:
		return "cuda"
	}
	return ""
}

// traceRun is one run of a trace's graph: its output's values, the
// backends it ran on (the trace's, in order, renamed), the rpc-servers'
// endpoints, and the bytes copied per evaluation, measured and planned.
type traceRun struct {
	values          []float64
	backends        []string
	endpoints       []string
	bytesCopied     int64
	planBytesCopied int64
}

// runTraceOn computes the traced graph with the trace's weights and inputs.
// For cpuOnly it plans for the cpu alone; otherwise it plans as ggml did
// (the trace's own capability tables, so ggml's splits and copies) and runs
// that plan on the backends on says, reporting what was copied.
func runTraceOn(ctx context.Context, tr *ggmltrace.Trace, on traceBackends) (*traceRun, error) {
	g, backends, opts, err := tr.Graph()
	if err != nil {
		return nil, err
	}
	for _, t := range g.Inputs {
		f, err := traceInputFill(tr, t.Name)
		if err != nil {
			return nil, &compiler.UserError{Msg: err.Error()}
		}
		t.Fill = f
	}
	run := &traceRun{}
	if on == cpuOnly {
		for _, t := range g.Tensors {
			t.Placement = ""
		}
		target, err := compiler.Target([]string{"cpu"}, 0)
		if err != nil {
			return nil, err
		}
		if err := passes.Run(g, &passes.Context{Backends: target}, true, ""); err != nil {
			return nil, err
		}
	} else {
		if err := passes.Run(g, &passes.Context{Backends: backends, Options: opts}, true, ""); err != nil {
			return nil, err
		}
		if run.backends, err = mapTraceBackends(tr, g, on); err != nil {
			return nil, err
		}
		run.planBytesCopied = g.BytesCopiedPerEval()
	}
	code, err := compiler.Generate(&compiler.Result{Graph: g}, codegen.Options{PkgName: "main", Main: true, Source: tr.Case + ".json"})
	if err != nil {
		return nil, err
	}
	bin, cleanup, err := buildMain(ctx, code)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	// Asked after the build, so that a machine without the backends still
	// builds the program into $GRAPHC_PROGRAMS for one that has them.
	if why := compiler.Unavailable(run.backends); len(why) > 0 {
		var reasons []string
		for _, b := range run.backends {
			if r, ok := why[b]; ok {
				reasons = append(reasons, b+": "+r)
			}
		}
		return nil, &compiler.UserError{Msg: fmt.Sprintf("trace %s: running ggml's plan needs %s; %s", tr.Case, strings.Join(run.backends, ", "), strings.Join(reasons, "; "))}
	}
	args := []string{"-json", "-stats"}
	if on == ggmlOnRPC {
		// Started after the build, which takes seconds, so that the
		// servers live only as long as the run; killed on every return.
		servers, kill, err := startRPCServers(ctx, run.backends)
		defer kill()
		if err != nil {
			return nil, err
		}
		for _, s := range servers {
			run.endpoints = append(run.endpoints, s.Endpoint)
		}
		if len(run.endpoints) > 0 {
			args = append(args, "-rpc", strings.Join(run.endpoints, ","))
		}
	}
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	killGroupOnCancel(cmd)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if on == ggmlOnRPC && ctx.Err() == nil {
			// A server that fails (it aborts on a graph it cannot
			// compute) is the run's failure, not graphc's bug.
			return nil, &compiler.UserError{Msg: fmt.Sprintf("trace %s: running ggml's plan on %s (rpc-servers at %s): %v\n%s",
				tr.Case, strings.Join(run.backends, ", "), strings.Join(run.endpoints, ", "), err, errb.String())}
		}
		if on.gpuKind() != "" && ctx.Err() == nil {
			// A missing device or library, or an op the device refuses,
			// is reported by the program with what to do about it.
			return nil, &compiler.UserError{Msg: fmt.Sprintf("trace %s: running ggml's plan on %s: %v\n%s",
				tr.Case, strings.Join(run.backends, ", "), err, errb.String())}
		}
		return nil, &compiler.InternalError{Msg: fmt.Sprintf("running the traced graph: %v\n%s", err, errb.String())}
	}
	if on != cpuOnly {
		if run.bytesCopied, err = statsBytesCopied(errb.String()); err != nil {
			return nil, &compiler.InternalError{Msg: err.Error()}
		}
	}
	var got struct {
		Outputs []struct {
			Name   string    `json:"name"`
			Values []float64 `json:"values"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		return nil, err
	}
	for _, o := range got.Outputs {
		if o.Name != tr.Output.Tensor {
			continue
		}
		if len(o.Values) != len(tr.Output.Values) {
			return nil, &compiler.UserError{Msg: fmt.Sprintf("output %s: %d values, ggml has %d", o.Name, len(o.Values), len(tr.Output.Values))}
		}
		run.values = o.Values
		return run, nil
	}
	return nil, &compiler.UserError{Msg: fmt.Sprintf("the traced graph has no output %s", tr.Output.Tensor)}
}

// statsBytesCopied reads the bytes copied from a generated program's
// -stats report (engine.Stats.String).
func statsBytesCopied(report string) (int64, error) {
	for _, line := range strings.Split(report, "\n") {
		var n int64
		var copies int
		if _, err := fmt.Sscanf(line, "%d bytes copied in %d copies", &n, &copies); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("no bytes copied in the statistics:\n%s", report)
}

// mapTraceBackends renames the backends of g, planned with the trace's
// target, to backends any machine can run, in place: every GPU-like one
// (ggml's RPC in the traces) to sim0, sim1, …, BLAS to blas and the CPU to
// cpu, with their buffer types; for ggmlOnRPC, ggml's RPC devices to rpc0,
// rpc1, … instead, and for ggmlOnVulkan (ggmlOnCUDA) the GPU-like ones to
// vulkan0, vulkan1, … (cuda0, …). The plan stays ggml's, offsets included (the simulated
// devices' alignment is the traces' RPC alignment, and rpc's is ggml-cpu's
// as the traces' servers reported it). It returns the new names in order.
func mapTraceBackends(tr *ggmltrace.Trace, g *ir.Graph, on traceBackends) ([]string, error) {
	if len(tr.Backends) != len(g.Backends) {
		return nil, fmt.Errorf("BUG: trace %s: %d backends, plan %d", tr.Case, len(tr.Backends), len(g.Backends))
	}
	rename := map[string]string{} // backend names
	bufts := map[string]string{}  // buffer type names
	var names []string
	sims, rpcs, gpus := 0, 0, 0
	for i, b := range g.Backends {
		tb := tr.Backends[i]
		var name string
		switch {
		case tb.DeviceType == "CPU":
			name = "cpu"
		case tb.Kind == "BLAS":
			name = "blas"
		case on == ggmlOnRPC && tb.Kind == "RPC":
			name = fmt.Sprintf("rpc%d", rpcs)
			rpcs++
		case on.gpuKind() != "" && (tb.DeviceType == "GPU" || tb.DeviceType == "ACCEL"):
			name = fmt.Sprintf("%s%d", on.gpuKind(), gpus)
			gpus++
		case tb.DeviceType == "GPU" || tb.DeviceType == "ACCEL":
			name = fmt.Sprintf("sim%d", sims)
			sims++
		default:
			return nil, &compiler.UserError{Msg: fmt.Sprintf("trace %s: backend %s (%s, %s) has no runnable counterpart", tr.Case, tb.Name, tb.Kind, tb.DeviceType)}
		}
		d, err := backendNamed(name)
		if err != nil {
			return nil, err
		}
		if d.Host != b.Host {
			return nil, &compiler.UserError{Msg: fmt.Sprintf("trace %s: backend %s's memory is host memory: %v, %s's: %v", tr.Case, tb.Name, b.Host, name, d.Host)}
		}
		if prev, ok := bufts[b.BufferType]; ok && prev != d.BufferType {
			return nil, &compiler.UserError{Msg: fmt.Sprintf("trace %s: buffer type %s maps to both %s and %s", tr.Case, b.BufferType, prev, d.BufferType)}
		}
		rename[b.Name] = name
		bufts[b.BufferType] = d.BufferType
		names = append(names, name)
	}
	for _, b := range g.Backends {
		b.Name, b.BufferType = rename[b.Name], bufts[b.BufferType]
		for k, r := range b.Reads {
			b.Reads[k] = bufts[r]
		}
	}
	for _, buf := range g.Buffers {
		buf.BufferType = bufts[buf.BufferType]
	}
	for _, t := range g.Tensors {
		if n, ok := rename[t.Placement]; ok {
			t.Placement = n
		}
		if t.Kind == ir.KindCopy {
			for old, n := range rename {
				if rest, ok := strings.CutPrefix(t.Name, old+"#"); ok {
					t.Name = n + "#" + rest
					break
				}
			}
		}
	}
	return names, nil
}

// backendNamed is the planning form of one backend: the first of a target
// that lists it before the cpu, which every target ends with.
func backendNamed(name string) (*passes.Backend, error) {
	names := []string{name, "cpu"}
	if name == "cpu" {
		names = names[1:]
	}
	target, err := compiler.Target(names, 0)
	if err != nil {
		return nil, err
	}
	return target[0], nil
}
