package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"time"

	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// A Result is one measured case. GFLOPS is set for matrix products, GBps
// (bytes read plus written per second) for bandwidth-bound ops; NsPerOp
// always.
type Result struct {
	Kernel  string  `json:"kernel"`
	DType   string  `json:"dtype"`
	M       int     `json:"m"`
	N       int     `json:"n"`
	K       int     `json:"k"`
	Threads int     `json:"threads"`
	GFLOPS  float64 `json:"gflops,omitempty"`
	GBps    float64 `json:"gbps,omitempty"`
	NsPerOp float64 `json:"ns_per_op"`
}

// A Case is one thing to measure: Setup prepares it on a backend with
// Threads threads and returns the operation to time (and a cleanup).
type Case struct {
	Kernel  string
	DType   string
	M, N, K int
	Threads int
	Flops   float64 // per operation; 0 for bandwidth-bound ops
	Bytes   float64 // read plus written per operation
	Setup   func(threads int) (op func(), cleanup func())
}

// Name is the case's benchmark name, e.g. "gemm/f32/m=1024,n=1024,k=1024/threads=2".
func (c *Case) Name() string {
	return fmt.Sprintf("%s/%s/m=%d,n=%d,k=%d/threads=%d", c.Kernel, c.DType, c.M, c.N, c.K, c.Threads)
}

// Result turns a time per operation into the case's Result.
func (c *Case) Result(nsPerOp float64) Result {
	r := Result{Kernel: c.Kernel, DType: c.DType, M: c.M, N: c.N, K: c.K, Threads: c.Threads, NsPerOp: round3(nsPerOp)}
	if c.Flops > 0 {
		r.GFLOPS = round3(c.Flops / nsPerOp)
	}
	if c.Bytes > 0 {
		r.GBps = round3(c.Bytes / nsPerOp)
	}
	return r
}

func round3(v float64) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	p := math.Pow(10, 3-math.Ceil(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

// Options select and time the cases.
type Options struct {
	Run     *regexp.Regexp // only cases whose Name matches; nil: all
	Threads []int          // thread counts; nil: 1 and 2
	MinTime time.Duration  // time per case; 0: 300ms
}

// Cases lists the standard cases for the given thread counts.
func Cases(threads []int) []Case {
	if len(threads) == 0 {
		threads = []int{1, 2}
	}
	var cs []Case
	for _, th := range threads {
		for _, n := range []int{256, 1024, 2048} {
			cs = append(cs, mulMatCase("gemm", tensor.F32, n, n, n, th))
		}
		cs = append(cs, mulMatCase("gemm", tensor.F16, 1024, 1024, 1024, th))
		cs = append(cs, mulMatCase("matvec", tensor.F32, 4096, 1, 4096, th))
		cs = append(cs, mulMatCase("matvec", tensor.F16, 4096, 1, 4096, th))
		cs = append(cs, quantMulMatCases(th)...)
		cs = append(cs, bandwidthCases(th)...)
	}
	return cs
}

// Run measures the selected cases one after the other and returns their
// results in order.
func Run(opts Options) []Result {
	var out []Result
	for _, c := range Cases(opts.Threads) {
		if opts.Run != nil && !opts.Run.MatchString(c.Name()) {
			continue
		}
		out = append(out, c.Result(Measure(&c, opts.MinTime)))
	}
	return out
}

// Measure times c for about minTime and returns the best nanoseconds per
// operation over five batches: the machine is shared, so the fastest batch
// is the one least disturbed by other processes.
func Measure(c *Case, minTime time.Duration) float64 {
	if minTime <= 0 {
		minTime = 300 * time.Millisecond
	}
	op, cleanup := c.Setup(c.Threads)
	defer cleanup()
	op() // warm up: scratch, caches, page faults
	const batches = 5
	n := 1
	for {
		t0 := time.Now()
		for i := 0; i < n; i++ {
			op()
		}
		if el := time.Since(t0); el >= minTime/(2*batches) || n >= 1<<30 {
			n = max(1, int(float64(n)*float64(minTime/batches)/float64(max(el, time.Nanosecond))))
			break
		}
		n *= 4
	}
	best := math.Inf(1)
	for b := 0; b < batches; b++ {
		t0 := time.Now()
		for i := 0; i < n; i++ {
			op()
		}
		best = min(best, float64(time.Since(t0).Nanoseconds())/float64(n))
	}
	return best
}

// WriteTable prints results as an aligned table.
func WriteTable(w io.Writer, rs []Result) error {
	if _, err := fmt.Fprintf(w, "%-13s %-6s %6s %6s %6s %7s %10s %9s %12s\n",
		"kernel", "dtype", "m", "n", "k", "threads", "GFLOP/s", "GB/s", "ns/op"); err != nil {
		return err
	}
	num := func(v float64) string {
		if v == 0 {
			return "-"
		}
		return fmt.Sprintf("%.4g", v)
	}
	for _, r := range rs {
		if _, err := fmt.Fprintf(w, "%-13s %-6s %6d %6d %6d %7d %10s %9s %12.0f\n", r.Kernel, r.DType, r.M, r.N, r.K, r.Threads,
			num(r.GFLOPS), num(r.GBps), r.NsPerOp); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSON prints {"isa": …, "results": […]}.
func WriteJSON(w io.Writer, rs []Result) error {
	if rs == nil {
		rs = []Result{}
	}
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(struct {
		ISA     string   `json:"isa"`
		Results []Result `json:"results"`
	}{cpu.ISA(), rs})
}

// Names lists the case names (for -run help and tests).
func Names(threads []int) []string {
	var ns []string
	for _, c := range Cases(threads) {
		ns = append(ns, c.Name())
	}
	sort.Strings(ns)
	return ns
}
