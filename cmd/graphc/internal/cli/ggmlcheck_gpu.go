package cli

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/ggmltrace"
)

// gpuRun is ggml-check -run -vulkan's (and -cuda's) report: ggml's own
// plan of a trace with its GPU-like devices on ggml's Vulkan (CUDA)
// devices, compared with the cpu-only run and with what ggml recorded.
type gpuRun struct {
	// Backends maps the trace's backends, in order, to the ones run.
	Backends []string `json:"backends"`
	// MaxDiffCPU and MaxDiffGGML are the largest differences from the
	// cpu-only run and from ggml's recorded output, absolute, relative for
	// values above 1; both must be within Tolerance.
	MaxDiffCPU  float64 `json:"max_diff_cpu"`
	MaxDiffGGML float64 `json:"max_diff_ggml"`
	Tolerance   float64 `json:"tolerance"`
	// BytesCopied is what the run reported copying between backends;
	// PlanBytesCopied the plan's bytes_copied_per_eval.
	BytesCopied     int64 `json:"bytes_copied"`
	PlanBytesCopied int64 `json:"plan_bytes_copied"`
}

// gpuTolerance is what -vulkan and -cuda allow, relative above 1: a
// device's products sum in another order than the cpu's, and ggml-vulkan
// rounds the right operand of some product shapes through f16 (it picks
// its shader by shape), as it does in llama.cpp. On Mesa's lavapipe the
// traces land within 5.8e-5 (llama_full); the file models' logits within
// what llama.cpp's own Vulkan build shows on the same file
// (internal/llamacpp's TestVulkanAsCloseAsLlamaCpp).
const gpuTolerance = 2e-4

// runTraceGPU runs ggml's own plan of the trace with its GPU-like devices
// on ggml's devices, as on says (ggmlOnVulkan, ggmlOnCUDA).
func runTraceGPU(ctx context.Context, tr *ggmltrace.Trace, on traceBackends) (*gpuRun, error) {
	cpu, err := runTraceOn(ctx, tr, cpuOnly)
	if err != nil {
		return nil, err
	}
	run, err := runTraceOn(ctx, tr, on)
	if err != nil {
		return nil, err
	}
	r := &gpuRun{
		Backends: run.backends, MaxDiffGGML: diffFromGGML(tr, run.values), Tolerance: gpuTolerance,
		BytesCopied: run.bytesCopied, PlanBytesCopied: run.planBytesCopied,
	}
	for i, v := range cpu.values {
		r.MaxDiffCPU = max(r.MaxDiffCPU, math.Abs(run.values[i]-v)/max(1, math.Abs(v)))
		if math.IsNaN(run.values[i]) {
			r.MaxDiffCPU = math.NaN()
			break
		}
	}
	return r, nil
}

// summary is the GPU run in the words of ggml-check's summary line.
func (r *gpuRun) summary(tr *ggmltrace.Trace) string {
	return fmt.Sprintf("ggml's plan on %s: output %s within %.3g of the cpu-only run and %.3g of ggml's, %d bytes copied per evaluation (the plan's %d)",
		strings.Join(r.Backends, ", "), tr.Output.Tensor, r.MaxDiffCPU, r.MaxDiffGGML, r.BytesCopied, r.PlanBytesCopied)
}

// check reports a GPU run outside its tolerance or copying other than
// the bytes ggml moved.
func (r *gpuRun) check(file string, tr *ggmltrace.Trace) error {
	on := strings.Join(r.Backends, ", ")
	for _, d := range []struct {
		from string
		diff float64
	}{{"the cpu-only run", r.MaxDiffCPU}, {"ggml's", r.MaxDiffGGML}} {
		if d.diff > r.Tolerance || math.IsNaN(d.diff) {
			return &compiler.UserError{Msg: fmt.Sprintf("%s: ggml's plan on %s: output %s differs from %s by up to %g (tolerance %g, relative above 1)",
				file, on, tr.Output.Tensor, d.from, d.diff, r.Tolerance)}
		}
	}
	// The plan's bytes are the most a run moves: an expert copy moves
	// the experts the ids choose, those ggml's recorded evaluation moved.
	if want := tr.Result.BytesMoved(); r.BytesCopied != want {
		return &compiler.UserError{Msg: fmt.Sprintf("%s: ggml's plan on %s copied %d bytes per evaluation, ggml %d (the plan's at most %d)",
			file, on, r.BytesCopied, want, r.PlanBytesCopied)}
	}
	return nil
}
