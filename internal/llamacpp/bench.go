package llamacpp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/graphc/graphc/tensor"
)

// Bencher is the harness in its timing mode (-bench) on one model: a
// process that keeps the model and one context (llama.cpp's default
// parameters but BenchOptions': 512 slots, batches of up to 512 tokens;
// flash attention off where the harness can turn it off) and runs
// llama-bench's tests on request, so that a caller can interleave them
// with its own.
type Bencher struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *strings.Builder
	// NVocab is the model's vocabulary size.
	NVocab int `json:"n_vocab"`
	// FlashAttnSet says the harness could set flash attention as
	// BenchOptions asked (see Result.FlashAttnSet).
	FlashAttnSet bool `json:"flash_attn_set"`
}

// BenchOptions are the context's parameters that differ from llama.cpp's
// defaults, as llama-bench's flags set them.
type BenchOptions struct {
	// Ctx is the context's size in tokens (-c; 0: the default, 512): at
	// least the depth plus the longest test.
	Ctx int
	// FlashAttn turns flash attention on (-fa 1) instead of off.
	FlashAttn bool
	// CacheK and CacheV are the KV cache's types (-ctk, -ctv; zero, f32,
	// keeps f16). A quantized V needs FlashAttn.
	CacheK, CacheV tensor.DType
	// Variant is the CPU build to load, one of OracleVariants ("haswell":
	// AVX2 only); empty: the best this processor runs, as ggml chooses.
	Variant string
}

// Bench starts the harness in timing mode on model, with one thread until
// Threads says otherwise.
func (h *Harness) Bench(model string, o BenchOptions) (*Bencher, error) {
	libDir := h.libDir
	if o.Variant != "" {
		var err error
		if libDir, err = h.variantDir(o.Variant); err != nil {
			return nil, err
		}
	}
	args := []string{model, "-libdir", libDir, "-bench"}
	if o.Ctx > 0 {
		args = append(args, "-ctx", fmt.Sprint(o.Ctx))
	}
	if o.FlashAttn {
		args = append(args, "-fa")
	}
	if o.CacheK != 0 {
		args = append(args, "-ctk", fmt.Sprint(int(o.CacheK)))
	}
	if o.CacheV != 0 {
		args = append(args, "-ctv", fmt.Sprint(int(o.CacheV)))
	}
	b := &Bencher{cmd: exec.Command(h.bin, args...), stderr: &strings.Builder{}}
	b.cmd.Stderr = b.stderr
	var err error
	if b.in, err = b.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := b.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	b.out = bufio.NewScanner(out)
	if err := b.cmd.Start(); err != nil {
		return nil, err
	}
	if err := b.read(b); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

func (b *Bencher) read(v any) error {
	if !b.out.Scan() {
		err := b.out.Err()
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		b.cmd.Wait()
		return fmt.Errorf("llama.cpp harness: %v\n%s", err, b.stderr.String())
	}
	if err := json.Unmarshal(b.out.Bytes(), v); err != nil {
		return fmt.Errorf("llama.cpp harness output %q: %v\n%s", b.out.Text(), err, b.stderr.String())
	}
	return nil
}

// Threads sets the threads of the tests that follow (llama_set_n_threads,
// for batches and single tokens alike).
func (b *Bencher) Threads(n int) error {
	if _, err := fmt.Fprintf(b.in, "threads %d\n", n); err != nil {
		return err
	}
	var r struct{ Threads int }
	return b.read(&r)
}

// PP times one llama_decode of a batch of n tokens (n <= 512) on the
// cache Depth left (empty by default): llama-bench's pp<n>.
func (b *Bencher) PP(n int) (time.Duration, error) { return b.test("pp", n) }

// TG times n llama_decode calls of one token each, the KV cache growing
// from what Depth left: llama-bench's tg<n>.
func (b *Bencher) TG(n int) (time.Duration, error) { return b.test("tg", n) }

// TTFT times a prompt of n tokens (n <= 512) to its first token, the
// argmax of the last one's logits: the time to first token of a greedy
// generation.
func (b *Bencher) TTFT(n int) (time.Duration, error) { return b.test("ttft", n) }

// Depth evaluates d prompt tokens, untimed as llama-bench's -d, that every
// later pp and tg test finds in the cache (0: an empty one); it returns
// how long they took.
func (b *Bencher) Depth(d int) (time.Duration, error) { return b.test("depth", d) }

// BD is llama-batched-bench's generation phase: seqs sequences of n
// tokens each, from an empty cache, decoded together (n evaluations of one
// token of each), on a context of its own with room for them.
func (b *Bencher) BD(seqs, n int) (time.Duration, error) {
	if _, err := fmt.Fprintf(b.in, "bd %d %d\n", seqs, n); err != nil {
		return 0, err
	}
	return b.answer("bd", n)
}

func (b *Bencher) test(kind string, n int) (time.Duration, error) {
	if _, err := fmt.Fprintf(b.in, "%s %d\n", kind, n); err != nil {
		return 0, err
	}
	return b.answer(kind, n)
}

// answer reads the answer to the test kind over n tokens.
func (b *Bencher) answer(kind string, n int) (time.Duration, error) {
	var r struct {
		Test    string
		N       int
		Seconds float64
	}
	if err := b.read(&r); err != nil {
		return 0, err
	}
	if r.Test != kind || r.N != n {
		return 0, fmt.Errorf("llama.cpp harness answered %s %d to %s %d", r.Test, r.N, kind, n)
	}
	return time.Duration(r.Seconds * float64(time.Second)), nil
}

// Close ends the harness process.
func (b *Bencher) Close() error {
	if b.cmd.ProcessState != nil {
		return nil // closed before
	}
	b.in.Close()
	return b.cmd.Wait()
}

// Pid is the harness process's id (for its memory use, while it runs).
func (b *Bencher) Pid() int { return b.cmd.Process.Pid }
