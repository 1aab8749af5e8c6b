// Command llama generates tokens with the compiled llama example: the
// prompt in batches, then greedy decoding one token per evaluation over the
// KV cache. Weights come from a GGUF file (by mmap) or are the conformance
// traces' deterministic fill.
//
//	go run ./examples/llama/cmd/llama -tokens 1,2,3 -n 8
//	graphc gguf new examples/llama/llama.g llama.gguf
//	go run ./examples/llama/cmd/llama -weights llama.gguf -tokens 1,2,3 -n 8
//
// With -prompt, the text is encoded with the vocabulary in the -weights
// file and the generated text is printed as it comes; generation stops at
// the vocabulary's end-of-generation token (eos or eot).
//
//	go run ./examples/llama/cmd/llama -weights llama.gguf -prompt "Once upon a time" -n 8
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/graphc/graphc/examples/llama"
	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/tensor"
	"github.com/graphc/graphc/tokenizer"
)

func main() {
	tokens := flag.String("tokens", "1,2,3", "prompt token ids, comma-separated")
	n := flag.Int("n", 8, "tokens to generate")
	threads := flag.Int("threads", 0, "worker threads (0: every core)")
	weightsFile := flag.String("weights", "", "GGUF file with the model's f32 weights (default: the traces' fill)")
	prompt := flag.String("prompt", "", "prompt text, encoded with the -weights file's vocabulary (instead of -tokens)")
	flag.Parse()
	var err error
	if *prompt != "" {
		err = runText(os.Stdout, *prompt, *n, *threads, *weightsFile)
	} else {
		err = run(*tokens, *n, *threads, *weightsFile)
	}
	if err != nil {
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
	weights := map[string]tensor.Tensor{}
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
			t := tensor.NewTensor(w.Type, w.Ne)
			tensor.Fill(&t, tensor.GGMLFill(k))
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
	out, err := m.Generate(prompt, n, func(t int32) bool {
		if first == 0 {
			first = time.Since(start)
		}
		fmt.Printf("%d ", t)
		return true
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

// runText encodes prompt with the weights file's tokenizer and writes the
// generated text to w as it comes: a character split across tokens
// appears when its last byte does. Generation stops at the end-of-
// generation token, or after n tokens.
func runText(w io.Writer, prompt string, n, threads int, weightsFile string) error {
	if weightsFile == "" {
		return fmt.Errorf("-prompt needs -weights FILE: a GGUF file with the model's weights and its tokenizer's vocabulary")
	}
	f, err := gguf.Open(weightsFile)
	if err != nil {
		return err
	}
	defer f.Close()
	tk, err := tokenizer.FromGGUF(f.File)
	if err != nil {
		return fmt.Errorf("%s: %v", weightsFile, err)
	}
	weights, err := f.Weights(llama.Weights)
	if err != nil {
		return err
	}
	ids := tk.Encode(prompt, true, true)
	if len(ids) == 0 {
		return fmt.Errorf("-prompt %q encodes to no tokens", prompt)
	}
	m, err := llama.New(weights, threads)
	if err != nil {
		return err
	}
	defer m.Close()
	fmt.Fprint(w, prompt)
	d := tk.NewDecoder(false)
	start := time.Now()
	var first time.Duration
	stopped := false
	out, err := m.Generate(ids, n, func(t int32) bool {
		if first == 0 {
			first = time.Since(start)
		}
		if tk.EndOfGeneration(t) {
			stopped = true
			return false
		}
		fmt.Fprint(w, d.Add(t))
		return true
	})
	fmt.Fprintln(w, d.Flush())
	if err != nil {
		return err
	}
	if stopped {
		fmt.Fprintln(w, "[end of generation]")
	}
	// The first token comes with the prompt's evaluation; the rest are
	// one decode step each.
	if len(out) > 1 {
		decode := time.Since(start) - first
		fmt.Fprintf(w, "%d prompt tokens, %d generated; prompt %v, then %.0f tokens/s\n", len(ids), len(out), first.Round(time.Microsecond), float64(len(out)-1)/decode.Seconds())
	}
	return nil
}
