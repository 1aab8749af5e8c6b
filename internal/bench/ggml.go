package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/backend/libs"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// `graphc bench -ggml`: graphc's quantized products beside ggml's own CPU
// mul_mat on the same weights and x, the weight in ggml's plain CPU buffer
// and in each of the CPU device's extra buffer types (CPU_REPACK, AMX…),
// which store it in layouts of their own at load and have kernels for
// them: the products llama.cpp computes on this machine.

// GGMLHowTo says how to get ggml's CPU libraries for -ggml.
const GGMLHowTo = "get them with `npm pack @node-llama-cpp/linux-x64@3.22.1 && tar xzf node-llama-cpp-linux-x64-3.22.1.tgz` " +
	"and `export " + libs.GGMLPathEnv + "=$PWD/package/bins/linux-x64`"

// A Comparison is one quantized product measured by graphc and by ggml,
// in turns. Times are the best nanoseconds per product over the batches.
type Comparison struct {
	Kernel       string     `json:"kernel"`
	DType        string     `json:"dtype"`
	M            int        `json:"m"`
	N            int        `json:"n"`
	K            int        `json:"k"`
	Threads      int        `json:"threads"`
	Graphc       float64    `json:"graphc_ns"`                  // the weight as given
	GraphcPacked float64    `json:"graphc_packed_ns,omitempty"` // after (*cpu.Backend).Pack; 0 for a type it does not pack
	GGML         []GGMLTime `json:"ggml,omitempty"`
	// Note says where graphc's product differs from ggml's plain one
	// (more than 1% of its largest value): a number not worth reading.
	Note string `json:"note,omitempty"`
}

// GGMLTime is ggml's time with the weight in one buffer type.
type GGMLTime struct {
	BufferType string  `json:"buffer_type"`
	NsPerOp    float64 `json:"ns_per_op,omitempty"`
	// Ratio is NsPerOp over graphc's packed time (its time on the weight
	// as given, for a type it does not pack): above 1, graphc is faster.
	Ratio float64 `json:"ratio,omitempty"`
	// Layout is what ggml logged storing the weight ("repack tensor with
	// q4_0_8x8"): the layout, hence the kernels, it chose.
	Layout string `json:"layout,omitempty"`
	// Declined: the buffer type does not take this weight here
	// (ggml_backend_dev_supports_op is false, as when llama.cpp places a
	// weight), so there is no time.
	Declined bool `json:"declined,omitempty"`
	// Note says where the product differs from the plain buffer's (more
	// than 0.1%) or the weight's bytes were kept as given.
	Note string `json:"note,omitempty"`
}

// GGMLReport is -ggml's output.
type GGMLReport struct {
	ISA  string `json:"isa"`
	CPUs int    `json:"cpus"`
	// LoadAverage is /proc/loadavg's 1, 5 and 15-minute averages before
	// the run, where the system has it: ggml's thread pool waits at its
	// barriers by spinning, so with fewer idle cores than threads its
	// times grow many-fold, where graphc's workers share out the work.
	LoadAverage string        `json:"load_average,omitempty"`
	GGML        *GGMLLibrary  `json:"ggml,omitempty"`
	Skipped     string        `json:"ggml_skipped,omitempty"` // why ggml's side did not run
	Results     []*Comparison `json:"results"`
}

// GGMLLibrary is the ggml measured.
type GGMLLibrary struct {
	Version          string   `json:"version"`
	Commit           string   `json:"commit"`
	Library          string   `json:"cpu_library,omitempty"` // the CPU variant ggml loaded
	Features         []string `json:"features,omitempty"`
	BufferType       string   `json:"buffer_type"`
	ExtraBufferTypes []string `json:"extra_buffer_types,omitempty"`
}

// GGMLCases are the cases -ggml compares, named as the plain graphc cases
// (Options.Run selects among them by those names).
func GGMLCases(threads []int) []Case {
	var cs []Case
	for _, c := range Cases(threads) {
		if dt, _ := tensor.ParseDType(c.DType); (c.Kernel == "matvec" || c.Kernel == "gemm") && dt.Quantized() {
			cs = append(cs, c)
		}
	}
	return cs
}

// CompareGGML measures the selected GGMLCases: per case and thread count,
// graphc on the weight as given, graphc on it packed, and ggml with the
// weight in each of its CPU buffer types, each for minTime, in turns (see
// race); then the selected GGMLFlashAttnCases (compareFlashAttn). Without ggml's libraries only graphc's columns are measured and
// Skipped says why.
func CompareGGML(opts Options) (*GGMLReport, error) {
	r := &GGMLReport{ISA: cpu.ISA(), CPUs: runtime.NumCPU(), LoadAverage: loadAverage(), Results: []*Comparison{}}
	var bufts []string
	if _, err := libs.FindGGML(); err != nil {
		r.Skipped = "ggml's libraries not found in $" + libs.GGMLPathEnv + ", beside the executable or in the system's library path; " + GGMLHowTo
	} else if info, err := ggmlCPU(); err != nil {
		r.Skipped = err.Error()
	} else {
		lib := filepath.Base(info.Library)
		if info.Library == "" {
			lib = ""
		}
		r.GGML = &GGMLLibrary{Version: info.Version, Commit: info.Commit, Library: lib, Features: info.Features,
			BufferType: info.BufferType, ExtraBufferTypes: info.ExtraBufferTypes}
		bufts = append([]string{info.BufferType}, info.ExtraBufferTypes...)
	}
	for _, c := range GGMLCases(opts.Threads) {
		if opts.Run != nil && !opts.Run.MatchString(c.Name()) {
			continue
		}
		cmp, err := compareCase(&c, bufts, opts.MinTime)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", c.Name(), err)
		}
		r.Results = append(r.Results, cmp)
	}
	plain := ""
	if len(bufts) > 0 {
		plain = bufts[0]
	}
	for _, c := range GGMLFlashAttnCases(opts.Threads) {
		if opts.Run != nil && !opts.Run.MatchString(c.Name()) {
			continue
		}
		cmp, err := compareFlashAttn(&c, plain, opts.MinTime)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", c.Name(), err)
		}
		r.Results = append(r.Results, cmp)
	}
	return r, nil
}

// loadAverage is /proc/loadavg's first three fields, or "".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return ""
}

// A contender is one implementation of a case, ready to run: batch
// computes the product n times and returns their time.
type contender struct {
	batch  func(n int) (time.Duration, error)
	result func() []float32
	close  func()
	best   float64 // ns per product
}

func compareCase(c *Case, bufts []string, minTime time.Duration) (_ *Comparison, err error) {
	dt, _ := tensor.ParseDType(c.DType)
	a, x, _ := quantOperands(dt, c.M, c.K, c.N)
	var cs []*contender
	defer func() {
		for _, ct := range cs {
			ct.close()
		}
	}()
	// Each contender reads a weight of its own, as ggml's buffers are:
	// none finds another's weight in the caches. A type runtime/cpu does
	// not pack has one graphc contender, the ratios' reference.
	modes := []bool{false}
	if backend.CPUPackable(dt) {
		modes = append(modes, true)
	}
	for _, packed := range modes {
		be := cpu.New(c.Threads)
		w := tensor.Clone(a)
		d := filled(tensor.F32, 3, c.M, c.N)
		if packed {
			mustPack(be, &w)
		}
		cs = append(cs, &contender{
			batch: func(n int) (time.Duration, error) {
				start := time.Now()
				for range n {
					be.MulMat(d, &w, x, ops.MulMatParams{})
				}
				return time.Since(start), nil
			},
			result: func() []float32 { return d.F32s() },
			close:  be.Close,
		})
	}
	cmp := &Comparison{Kernel: c.Kernel, DType: c.DType, M: c.M, N: c.N, K: c.K, Threads: c.Threads}
	ggmlAt := map[int]int{} // contender → its GGMLTime
	for _, b := range bufts {
		t := GGMLTime{BufferType: b}
		m, err := newGGMLMulMat(b, a, x, c.Threads)
		switch {
		case errors.Is(err, errDeclined):
			t.Declined = true
			t.Note = err.Error()
		case err != nil:
			return nil, err
		default:
			t.Layout = m.Log
			if b != bufts[0] && !m.Repacked {
				t.Note = "the weight's bytes were kept as given: not repacked"
			}
			ggmlAt[len(cs)] = len(cmp.GGML)
			cs = append(cs, &contender{
				batch: m.Run,
				result: func() []float32 {
					r := make([]float32, c.M*c.N)
					m.Result(r)
					return r
				},
				close: m.Close,
			})
		}
		cmp.GGML = append(cmp.GGML, t)
	}
	if err := race(cs, minTime); err != nil {
		return nil, err
	}
	ng := len(modes) // graphc's contenders, then ggml's
	ref := cs[ng-1]  // packed where the type packs
	cmp.Graphc = round3(cs[0].best)
	if ng > 1 {
		cmp.GraphcPacked = round3(cs[1].best)
	}
	for i, j := range ggmlAt {
		t := &cmp.GGML[j]
		t.NsPerOp = round3(cs[i].best)
		t.Ratio = round3(cs[i].best / ref.best)
	}
	// Every product is checked against ggml's plain one (the first
	// contender after graphc's, when ggml runs): a fast wrong product is
	// no result.
	if len(cmp.GGML) > 0 && !cmp.GGML[0].Declined {
		want := cs[ng].result()
		var notes []string
		for i, name := range []string{"graphc", "graphc packed"}[:ng] {
			if d := maxRelDiff(cs[i].result(), want); d > 1e-2 {
				notes = append(notes, fmt.Sprintf("%s differs from ggml's %s product by %.2g of its largest value", name, bufts[0], d))
			}
		}
		cmp.Note = strings.Join(notes, "; ")
		for i, j := range ggmlAt {
			if d := maxRelDiff(cs[i].result(), want); j > 0 && d > 1e-3 {
				t := &cmp.GGML[j]
				t.Note = strings.TrimPrefix(t.Note+fmt.Sprintf("; differs from the %s product by %.2g of its largest value", bufts[0], d), "; ")
			}
		}
	}
	return cmp, nil
}

// maxRelDiff is the largest |a-b| over the largest |b|.
func maxRelDiff(a, b []float32) float64 {
	var d, m float64
	for i := range b {
		d = max(d, math.Abs(float64(a[i]-b[i])))
		m = max(m, math.Abs(float64(b[i])))
	}
	if m == 0 {
		return d
	}
	return d / m
}

// race measures contenders in turns: each runs once (caches, pages, ggml's
// work buffer), is timed on growing counts until one batch takes a tenth
// of minTime, then five rounds run a batch of each in order, so that the
// load other processes put on a shared machine falls on all of them
// alike. Each keeps its fastest batch, the least disturbed.
func race(cs []*contender, minTime time.Duration) error {
	if minTime <= 0 {
		minTime = 300 * time.Millisecond
	}
	const batches = 5
	counts := make([]int, len(cs))
	for i, c := range cs {
		if _, err := c.batch(1); err != nil {
			return err
		}
		n := 1
		for {
			el, err := c.batch(n)
			if err != nil {
				return err
			}
			if el >= minTime/(2*batches) || n >= 1<<30 {
				counts[i] = max(1, int(float64(n)*float64(minTime/batches)/float64(max(el, time.Nanosecond))))
				break
			}
			n *= 4
		}
		c.best = math.Inf(1)
	}
	for range batches {
		for i, c := range cs {
			el, err := c.batch(counts[i])
			if err != nil {
				return err
			}
			c.best = min(c.best, float64(el.Nanoseconds())/float64(counts[i]))
		}
	}
	return nil
}

// WriteGGMLTable prints r: milliseconds per product, and beside each of
// ggml's the ratio to graphc's packed time; then the layouts ggml chose
// and every note.
func WriteGGMLTable(w io.Writer, r *GGMLReport) error {
	var bufts []string
	if g := r.GGML; g != nil {
		var feats []string
		for _, f := range g.Features {
			name, val, _ := strings.Cut(f, "=")
			if val == "1" {
				feats = append(feats, name)
			} else {
				feats = append(feats, f)
			}
		}
		lib := g.Library
		if lib == "" {
			lib = "library not known"
		}
		fmt.Fprintf(w, "ggml %s (%s), CPU backend %s [%s]; buffer types %s and extra %s\n", g.Version, g.Commit, lib,
			strings.Join(feats, " "), g.BufferType, orNone(g.ExtraBufferTypes))
		bufts = append([]string{g.BufferType}, g.ExtraBufferTypes...)
	} else {
		fmt.Fprintf(w, "ggml's side skipped: %s\n", r.Skipped)
	}
	if r.LoadAverage != "" {
		fmt.Fprintf(w, "%d CPUs, load average %s before the run: ggml's threads spin at its barriers, so its times with more threads than idle cores mean little\n", r.CPUs, r.LoadAverage)
	}
	fmt.Fprintf(w, "ms per product, the best of 5 batches run in turns; ×: ggml's time over graphc packed's (graphc's where it does not pack), above 1 graphc is faster; flashattn: m keys, n tokens, k the head size (32 heads over 8 K/V heads, f16 K/V, causal mask), ggml in its plain buffer\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "kernel\tdtype\tm\tn\tk\tthreads\tgraphc\tgraphc packed\t"
	for _, b := range bufts {
		head += "ggml " + b + "\t×\t"
	}
	fmt.Fprintln(tw, head)
	ms := func(ns float64) string { // three digits, never an exponent
		v := ns / 1e6
		switch {
		case v >= 100:
			return fmt.Sprintf("%.0f", v)
		case v >= 10:
			return fmt.Sprintf("%.1f", v)
		case v >= 1:
			return fmt.Sprintf("%.2f", v)
		}
		return fmt.Sprintf("%.3f", v)
	}
	var notes []string
	seen := map[string]bool{}
	note := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			notes = append(notes, s)
		}
	}
	for _, c := range r.Results {
		packed := "-"
		if c.GraphcPacked > 0 {
			packed = ms(c.GraphcPacked)
		}
		row := fmt.Sprintf("%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t", c.Kernel, c.DType, c.M, c.N, c.K, c.Threads, ms(c.Graphc), packed)
		for _, t := range c.GGML {
			switch {
			case t.Declined:
				row += "declined\t-\t"
			default:
				mark := ""
				if t.Note != "" {
					mark = " !"
				}
				row += ms(t.NsPerOp) + mark + fmt.Sprintf("\t%.2f\t", t.Ratio)
			}
			if t.Layout != "" {
				note(fmt.Sprintf("ggml %s, %s: %s", t.BufferType, c.DType, t.Layout))
			}
			if t.Note != "" {
				note(fmt.Sprintf("ggml %s, %s: %s", t.BufferType, c.DType, t.Note))
			}
		}
		for range len(bufts) - len(c.GGML) { // flash attention: the plain buffer only
			row += "-\t-\t"
		}
		if c.Note != "" {
			note(fmt.Sprintf("%s/%s n=%d threads=%d: %s", c.Kernel, c.DType, c.N, c.Threads, c.Note))
		}
		fmt.Fprintln(tw, row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(notes) > 0 {
		sort.Strings(notes)
		fmt.Fprintln(w)
		for _, n := range notes {
			if _, err := fmt.Fprintln(w, n); err != nil {
				return err
			}
		}
	}
	return nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// WriteGGMLJSON prints r as JSON.
func WriteGGMLJSON(w io.Writer, r *GGMLReport) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(r)
}
