package cli

import (
	"bufio"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/graphc/graphc/codegen"
	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/internal/interp"
	"github.com/graphc/graphc/internal/llamacpp"
	"github.com/graphc/graphc/tensor"
)

// benchSide runs one side's tests at one thread count: pp, one batch of n
// tokens at positions d..d+n-1; tg, n single tokens at positions
// d..d+n-1, the cache growing from the depth d (-d; 0 by default) the
// side evaluated when it started. Both return the time of the evaluations
// alone.
// graphc's side is a driverSide or an interpSide, llama.cpp's a llamaSide.
type benchSide interface {
	pp(n int) (time.Duration, error)
	tg(n int) (time.Duration, error)
	// bd is seqs sequences of n tokens decoded together from an empty
	// cache (llama-batched-bench's generation phase).
	bd(seqs, n int) (time.Duration, error)
	// gen is n tokens of graphc generate's loop; llama.cpp's side runs tg.
	gen(n int) (time.Duration, error)
	// ttft is a prompt of n tokens to its first token, through graphc
	// generate's loop; llama.cpp's side decodes and takes the argmax.
	ttft(n int) (time.Duration, error)
	close()
	// peakRSS is the peak resident memory of the side so far, in bytes; 0
	// where it is not a process of its own.
	peakRSS() int64
}

// llamaSide is llama.cpp's side: the harness in its timing mode.
type llamaSide struct{ b *llamacpp.Bencher }

func (s llamaSide) pp(n int) (time.Duration, error)       { return s.b.PP(n) }
func (s llamaSide) tg(n int) (time.Duration, error)       { return s.b.TG(n) }
func (s llamaSide) bd(seqs, n int) (time.Duration, error) { return s.b.BD(seqs, n) }
func (s llamaSide) gen(n int) (time.Duration, error)      { return s.b.TG(n) }
func (s llamaSide) ttft(n int) (time.Duration, error)     { return s.b.TTFT(n) }
func (s llamaSide) close()                                { s.b.Close() }
func (s llamaSide) peakRSS() int64                        { return peakRSS(s.b.Pid()) }

// interpSide is graphc's side in process, through internal/interp.
type interpSide struct {
	m     *interp.Machine
	vocab int
	depth int
}

// setDepth evaluates d tokens in batches of up to batch, the cache that
// every test then starts from.
func (s *interpSide) setDepth(d, batch int) error {
	for pos := 0; pos < d; pos += batch {
		n := min(batch, d-pos)
		if _, err := s.m.Eval(map[string]int{"n_tokens": n, "n_kv": pos + n, "n_outputs": 1}, batchInputs(n, pos, s.vocab)); err != nil {
			return err
		}
	}
	s.depth = d
	return nil
}

func (s *interpSide) pp(n int) (time.Duration, error) {
	in := batchInputs(n, s.depth, s.vocab)
	start := time.Now()
	_, err := s.m.Eval(map[string]int{"n_tokens": n, "n_kv": s.depth + n, "n_outputs": 1}, in)
	return time.Since(start), err
}

func (s *interpSide) tg(n int) (time.Duration, error) {
	ins := make([]map[string]tensor.Tensor, n)
	for i := range ins {
		ins[i] = batchInputs(1, s.depth+i, s.vocab)
	}
	start := time.Now()
	for i, in := range ins {
		if _, err := s.m.Eval(map[string]int{"n_tokens": 1, "n_kv": s.depth + i + 1, "n_outputs": 1}, in); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

func (s *interpSide) bd(seqs, n int) (time.Duration, error) {
	ins := make([]map[string]tensor.Tensor, n)
	for i := range ins {
		ins[i] = parallelInputs(seqs, i, s.vocab)
	}
	start := time.Now()
	for i, in := range ins {
		if _, err := s.m.Eval(map[string]int{"n_tokens": seqs, "n_kv": (i + 1) * seqs, "n_outputs": seqs}, in); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

func (s *interpSide) gen(int) (time.Duration, error) {
	return 0, errors.New("-generate runs the generated package: not with -interp")
}

func (s *interpSide) ttft(n int) (time.Duration, error) { return s.gen(n) }

func (s *interpSide) close() { s.m.Close() }

func (s *interpSide) peakRSS() int64 { return 0 }

// benchDriverSource is the main package that drives the generated package
// (see the file's comment for its commands). It is a .tmpl file, not a .go
// one, so that go build ./... does not compile it here, where its import
// of the generated package has nothing to resolve to.
//
//go:embed benchdriver.go.tmpl
var benchDriverSource []byte

// haveGo reports whether the Go toolchain that builds the generated
// package is on $PATH, as graphc run needs it.
func haveGo() bool {
	_, err := exec.LookPath("go")
	return err == nil
}

// buildBenchDriver generates the package of the compiled bench model res
// and builds it with the driver into a binary in a temporary module;
// cleanup removes the module.
func buildBenchDriver(ctx context.Context, res *compiler.Result, source string) (bin string, cleanup func(), err error) {
	code, err := compiler.Generate(res, codegen.Options{PkgPath: "graphcrun/llama", PkgName: "llama", Source: filepath.Base(source)})
	if err != nil {
		return "", nil, err
	}
	// As in graphc run: go build needs the memory the plan and its
	// rendering left behind.
	debug.FreeOSMemory()
	return buildModule(ctx, map[string][]byte{"llama/llama_gen.go": code, "main.go": benchDriverSource})
}

// driverSide is graphc's side as users run it: the generated package, in a
// process of its own (benchDriverSource) that keeps the model made by New
// for one thread count and runs the tests it is sent.
type driverSide struct {
	what   string // for errors: the file and thread count
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *lockedBuffer
	done   bool // the process has been waited for
}

// lockedBuffer is the driver's stderr, written by exec's copying goroutine
// and read when the driver has failed.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startDriver starts bin on the GGUF file at path with threads threads,
// evaluations of up to batch tokens, and waits until its model is made.
// The process is killed, with its process group, when ctx ends.
func startDriver(ctx context.Context, bin, path string, threads, vocab, batch int) (*driverSide, error) {
	d := &driverSide{
		what:   fmt.Sprintf("the generated package's bench driver (%s, %d thread(s))", filepath.Base(path), threads),
		cmd:    exec.CommandContext(ctx, bin, "-weights", path, "-threads", fmt.Sprint(threads), "-vocab", fmt.Sprint(vocab), "-batch", fmt.Sprint(batch)),
		stderr: &lockedBuffer{},
	}
	killGroupOnCancel(d.cmd)
	d.cmd.Stderr = d.stderr
	var err error
	if d.in, err = d.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := d.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	d.out = bufio.NewScanner(out)
	if err := d.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %v", d.what, err)
	}
	line, err := d.read()
	if err == nil && line != "ready" {
		err = d.fail(fmt.Sprintf("said %q, want ready", line))
	}
	if err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

// read is the driver's next line; at EOF, an error with how the process
// ended and what it wrote to stderr.
func (d *driverSide) read() (string, error) {
	if d.out.Scan() {
		return d.out.Text(), nil
	}
	why := "closed its output"
	if err := d.out.Err(); err != nil {
		why = err.Error()
	}
	d.done = true
	if err := d.cmd.Wait(); err != nil {
		why = err.Error()
	}
	return "", d.fail(why)
}

func (d *driverSide) fail(why string) error {
	msg := fmt.Sprintf("%s: %s", d.what, why)
	if s := strings.TrimSpace(d.stderr.String()); s != "" {
		msg += ":\n" + s
	}
	return errors.New(msg)
}

func (d *driverSide) pp(n int) (time.Duration, error) {
	return d.test("pp", n, fmt.Sprintf("pp %d", n))
}
func (d *driverSide) tg(n int) (time.Duration, error) {
	return d.test("tg", n, fmt.Sprintf("tg %d", n))
}
func (d *driverSide) gen(n int) (time.Duration, error) {
	return d.test("gen", n, fmt.Sprintf("gen %d", n))
}
func (d *driverSide) ttft(n int) (time.Duration, error) {
	return d.test("ttft", n, fmt.Sprintf("ttft %d", n))
}
func (d *driverSide) bd(seqs, n int) (time.Duration, error) {
	return d.test("bd", n, fmt.Sprintf("bd %d %d", seqs, n))
}

// test sends the command line cmd, the test kind over n tokens.
func (d *driverSide) test(kind string, n int, cmd string) (time.Duration, error) {
	if _, err := fmt.Fprintln(d.in, cmd); err != nil {
		// The driver is gone; its stderr says why.
		_, rerr := d.read()
		if rerr == nil {
			rerr = d.fail(err.Error())
		}
		return 0, rerr
	}
	line, err := d.read()
	if err != nil {
		return 0, err
	}
	var test string
	var got int
	var secs float64
	if _, err := fmt.Sscanf(line, "%s %d %g", &test, &got, &secs); err != nil || test != kind || got != n {
		return 0, d.fail(fmt.Sprintf("answered %q to %s", line, cmd))
	}
	return time.Duration(secs * float64(time.Second)), nil
}

// close ends the driver: EOF on its stdin, and if it has not exited a few
// seconds later (it should at once), a kill of its process group.
func (d *driverSide) peakRSS() int64 {
	if d.done {
		return 0
	}
	return peakRSS(d.cmd.Process.Pid)
}

func (d *driverSide) close() {
	d.in.Close()
	if d.done {
		return
	}
	d.done = true
	t := time.AfterFunc(10*time.Second, func() { d.cmd.Cancel() })
	defer t.Stop()
	d.cmd.Wait()
}
