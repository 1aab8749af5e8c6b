package cli

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/graphc/graphc/backend/libs"
	"github.com/graphc/graphc/internal/bench"
)

// cmdBench is `graphc bench`: the internal/bench cases, as a table or JSON.
func cmdBench(e *env, args []string) error {
	fs := newFlags(e, "bench")
	asJSON := fs.Bool("json", false, `print {"isa":…,"results":[{"kernel":…,"dtype":…,"m":…,"n":…,"k":…,"threads":…,"gflops"|"gbps":…,"ns_per_op":…}]}`)
	run := fs.String("run", "", "only the cases whose name (kernel/dtype/m=,n=,k=/threads=) matches this regular expression")
	threads := fs.String("threads", "1,2", "comma-separated thread counts")
	minTime := fs.Duration("time", 300*time.Millisecond, "time spent on each case")
	withGGML := fs.Bool("ggml", false, "instead of the kernels: the quantized products (matvec and gemm, n 1, 8, 32, 512: q4_0 and q8_0 4096×4096 weights, q4_K, q6_K, q5_K, q2_K, q3_K, iq4_xs, q5_0, q4_1, q5_1 and iq4_nl 8192×2048), graphc's plain and packed (where it packs the type) beside ggml's CPU mul_mat with the weight in ggml's plain buffer and in each extra buffer type that repacks it (CPU_REPACK, AMX), and flash attention (f16 K/V, 32 heads over 8 of 64, causal mask: one token against 4096 keys, 512 against 4608) beside ggml's CPU flash_attn_ext, run in turns, with the ratios ggml/graphc (-json, -run, -threads, -time apply; ggml's libraries from $"+libs.GGMLPathEnv+")")
	llama := fs.Bool("llama", false, "instead of the kernels: llama-bench's pp512 and tg128 for graphc (the package generated for each file, built with go build and run in a process per thread count; see -interp) and for llama.cpp on the same GGUF files, interleaved, with their ratios (see -file, -short)")
	var lb llamaBench
	lb.register(fs)
	if _, err := parseFlags(fs, args, 0, 0); err != nil {
		return err
	}
	if !*llama && (lb.short || lb.interp || lb.files != nil || lb.types != nil || lb.reps != 0 || lb.pp != 0 || lb.tg != 0 || lb.ctx != 0 || lb.backends != "" || lb.ngl != -1) {
		return &usageError{"-short, -interp, -file, -type, -reps, -pp, -tg, -ctx, -backends and -ngl go with -llama"}
	}
	opts := bench.Options{MinTime: *minTime}
	if *run != "" {
		re, err := regexp.Compile(*run)
		if err != nil {
			return &usageError{fmt.Sprintf("-run: %v", err)}
		}
		opts.Run = re
	}
	for _, f := range strings.Split(*threads, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return &usageError{fmt.Sprintf("-threads: %q is not a positive number", f)}
		}
		opts.Threads = append(opts.Threads, n)
	}
	if *withGGML {
		if *llama {
			return &usageError{"-ggml and -llama: one or the other"}
		}
		r, err := bench.CompareGGML(opts)
		if err != nil {
			return err
		}
		if r.GGML == nil {
			fmt.Fprintf(e.stderr, "graphc: bench: ggml's columns skipped: %s\n", r.Skipped)
		}
		if *asJSON {
			return bench.WriteGGMLJSON(e.stdout, r)
		}
		return bench.WriteGGMLTable(e.stdout, r)
	}
	if *llama {
		if *asJSON || *run != "" {
			return &usageError{"-json and -run measure the kernels, not -llama"}
		}
		lb.threads = opts.Threads
		return cmdBenchLlama(e, &lb)
	}
	rs := bench.Run(opts)
	if *asJSON {
		return bench.WriteJSON(e.stdout, rs)
	}
	return bench.WriteTable(e.stdout, rs)
}
