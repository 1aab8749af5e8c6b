// Command llama generates tokens with the compiled llama example: the
// prompt in batches, then greedy decoding one token per evaluation over the
// KV cache. Weights come from a GGUF file (by mmap) or are the conformance
// traces' deterministic fill.
//
//	go run ./examples/llama/cmd/llama -tokens 1,2,3 -n 8
//	graphc gguf new examples/llama/llama.g llama.gguf
//	go run ./examples/llama/cmd/llama -weights llama.gguf -tokens 1,2,3 -n 8
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/graphc/graphc/examples/llama"
	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/runtime"
)

func main() {
	tokens := flag.String("tokens", "1,2,3", "prompt token ids, comma-separated")
	n := flag.Int("n", 8, "tokens to generate")
	threads := flag.Int("threads", 0, "worker threads (0: every core)")
	weightsFile := flag.String("weights", "", "GGUF file with the model's f32 weights (default: the traces' fill)")
	flag.Parse()
	if err := run(*tokens, *n, *threads, *weightsFile); err != nil {
		fmt.Fprintln(os.Stderr, "llama:", err)
		os.Exit(1)
	}
}

func run(tokens string, n, threads int, weightsFile string) error {
	var prompt []int32
	for _, s := range strings.Split(tokens, ",") {
		t, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
		if err != nil {
			return fmt.Errorf("-tokens: %v", err)
		}
		prompt = append(prompt, int32(t))
	}
	weights := map[string]runtime.Tensor{}
	if weightsFile != "" {
		f, err := gguf.Open(weightsFile)
		if err != nil {
			return err
		}
		defer f.Close()
		if weights, err = f.Weights(llama.Weights); err != nil {
			return err
		}
	} else {
		for k, w := range llama.Weights {
			t := runtime.NewTensor(w.Type, w.Ne)
			runtime.Fill(&t, runtime.GGMLFill(k))
			weights[w.Name] = t
		}
	}
	m, err := llama.New(weights, threads)
	if err != nil {
		return err
	}
	defer m.Close()
	fmt.Printf("prompt: %v\n", prompt)
	start := time.Now()
	var first time.Duration
	out, err := m.Generate(prompt, n, func(t int32) {
		if first == 0 {
			first = time.Since(start)
		}
		fmt.Printf("%d ", t)
	})
	fmt.Println()
	if err != nil {
		return err
	}
	if len(out) > 1 {
		decode := time.Since(start) - first
		fmt.Printf("%d tokens; prompt %v, then %.0f tokens/s\n", len(out), first.Round(time.Microsecond), float64(len(out)-1)/decode.Seconds())
	}
	return nil
}
