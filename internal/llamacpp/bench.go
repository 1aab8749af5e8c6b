package llamacpp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// Bencher is the harness in its timing mode (-bench) on one model: a
// process that keeps the model and one context (llama.cpp's default
// parameters: 512 slots, batches of up to 512 tokens; flash attention off
// where the harness can turn it off) and runs llama-bench's tests on
// request, so that a caller can interleave them with its own.
type Bencher struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *strings.Builder
	// NVocab is the model's vocabulary size.
	NVocab int `json:"n_vocab"`
	// FlashAttnOff says the harness could turn flash attention off (see
	// Result.FlashAttnSet).
	FlashAttnOff bool `json:"flash_attn_off"`
}

// Bench starts the harness in timing mode on model, with one thread until
// Threads says otherwise.
func (h *Harness) Bench(model string) (*Bencher, error) {
	b := &Bencher{cmd: exec.Command(h.bin, model, "-libdir", h.libDir, "-bench"), stderr: &strings.Builder{}}
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

// PP times one llama_decode of a batch of n tokens (n <= 512) on an empty
// KV cache: llama-bench's pp<n>.
func (b *Bencher) PP(n int) (time.Duration, error) { return b.test("pp", n) }

// TG times n llama_decode calls of one token each, the KV cache growing
// from empty: llama-bench's tg<n>.
func (b *Bencher) TG(n int) (time.Duration, error) { return b.test("tg", n) }

func (b *Bencher) test(kind string, n int) (time.Duration, error) {
	if _, err := fmt.Fprintf(b.in, "%s %d\n", kind, n); err != nil {
		return 0, err
	}
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
