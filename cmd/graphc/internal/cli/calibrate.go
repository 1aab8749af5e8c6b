package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"runtime"
	"time"

	"github.com/graphc/graphc/internal/atomicfile"
	"github.com/graphc/graphc/internal/bench"
	"github.com/graphc/graphc/passes"
)

// cmdCalibrate is `graphc calibrate`: measure the kernels the cost model
// prices and write a calibration file for -placement cost -cost FILE.
//
// It measures on this machine what it can run: the CPU kernels (a 256³
// GEMM for the price per FLOP, an elementwise add for the price per byte)
// and the copies a simulated device makes (a host memmove, which is what
// sim copies are). Simulated devices run the CPU kernels, so they get the
// CPU's kernel prices. BLAS and real GPUs need their libraries to be
// measured and keep the built-in defaults; so do the per-node and
// per-split prices, which are the scheduler's overheads, not a kernel's.
func cmdCalibrate(e *env, args []string) error {
	fs := newFlags(e, "calibrate")
	out := fs.String("o", "graphc-cost.json", "the calibration file to write")
	minTime := fs.Duration("time", 100*time.Millisecond, "time per measurement")
	threads := fs.Int("threads", runtime.NumCPU(), "CPU threads, as graphc run uses them")
	if _, err := parseFlags(fs, args, 0, 0); err != nil {
		return err
	}
	if *threads < 1 {
		return &usageError{fmt.Sprintf("-threads %d: want at least 1", *threads)}
	}
	measure := func(pattern string) bench.Result {
		re := regexp.MustCompile(pattern)
		rs := bench.Run(bench.Options{Run: re, Threads: []int{*threads}, MinTime: *minTime})
		if len(rs) == 0 {
			panic("BUG: calibrate: no bench case " + pattern)
		}
		return rs[0]
	}
	gemm := measure(`^gemm/f32/m=256,n=256,k=256/`)
	add := measure(`^add/f32/`)
	cpy := measure(`^cpy/f32/m=4096,n=256,`)

	m := passes.DefaultCostModel()
	cpu := m.Backends["CPU"]
	cpu.NsPerFlop = 1 / gemm.GFLOPS
	cpu.NsPerByte = 1 / add.GBps
	m.Backends["cpu"] = cpu
	m.Backends["sim"] = passes.OpCost{NodeNs: m.Backends["GPU"].NodeNs, NsPerFlop: cpu.NsPerFlop, NsPerByte: cpu.NsPerByte}
	copyCost := passes.CopyCost{CopyNs: m.Copy.CopyNs, NsPerByte: 1 / cpy.GBps}
	m.Copies = map[string]passes.CopyCost{"cpu>sim": copyCost, "sim>cpu": copyCost, "sim>sim": copyCost}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // "cpu>sim", not "cpu\u003esim"
	if err := enc.Encode(m); err != nil {
		return err
	}
	if err := atomicfile.Write(*out, b.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "cpu: %.3g GFLOP/s (gemm f32 256³), %.3g GB/s (add f32); sim copies: %.3g GB/s (memmove)\n", gemm.GFLOPS, add.GBps, cpy.GBps)
	fmt.Fprintf(e.stdout, "wrote %s; use it with -placement cost -cost %s\n", *out, *out)
	return nil
}
