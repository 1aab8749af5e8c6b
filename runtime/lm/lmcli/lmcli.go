// Package lmcli is the generate, chat and serve commands of the programs
// graphc generates for language models (graphc compile -main), which
// graphc's own generate, chat and serve commands build and run: one
// static binary per model, no cgo.
package lmcli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/runtime/lm"
	"github.com/graphc/graphc/runtime/lm/sample"
	"github.com/graphc/graphc/tensor"
	"github.com/graphc/graphc/tokenizer"
)

// Program is a compiled model, as its generated main hands it over.
type Program struct {
	Source  string        // the DSL file the model was compiled from
	Weights []tensor.Decl // the weights New expects
	Meta    []tensor.Meta // the metadata values the model was compiled for
	// New makes the model and returns its Close.
	New func(weights map[string]tensor.Tensor, threads int) (lm.Model, func(), error)
}

// Commands are the commands Main runs, with their summaries.
var Commands = []struct{ Name, Summary string }{
	{"generate", "generate text after a prompt, printing it as it comes (llama-cli -no-cnv)"},
	{"chat", "chat with the model through its file's chat template, the cache kept across turns"},
	{"serve", "serve an OpenAI-compatible HTTP API, decoding concurrent requests together"},
}

// IsCommand reports whether arg is one of the commands Main runs.
func IsCommand(arg string) bool {
	for _, c := range Commands {
		if c.Name == arg {
			return true
		}
	}
	return false
}

// Flags are the commands' options, with llama.cpp's flag names.
type Flags struct {
	Model       string // -m: the GGUF file
	Threads     int
	AllowUnused bool
	Sampling    sample.Params
	N           int // -n: tokens to generate, -1 until the end of generation or a full context
	// -context-shift and -keep: generation past a full context
	// (lm.Request's ContextShift and Keep).
	ContextShift bool
	Keep         int

	Prompt, PromptFile string // generate
	NoDisplayPrompt    bool

	System string // chat

	Host     string // serve
	Port     int
	Parallel int
	Queue    int
}

// Register adds command's flags to fs: the same in the generated program
// and in graphc, which passes them on.
func (f *Flags) Register(fs *flag.FlagSet, command string) {
	fs.StringVar(&f.Model, "m", "", "the GGUF `file` of the model's weights (the file the model was compiled for, or one of its shapes)")
	fs.IntVar(&f.Threads, "threads", 0, "worker threads (0: every core)")
	fs.BoolVar(&f.AllowUnused, "allow-unused", false, "load the file even though the model does not read all of its tensors")
	f.Sampling = sample.Defaults()
	f.Sampling.Flags(fs)
	fs.IntVar(&f.N, "n", -1, "tokens to generate (-1: until the end of generation or a full context)")
	fs.BoolVar(&f.ContextShift, "context-shift", false, "go on past a full context: keep the first -keep tokens, drop half of the rest, and evaluate the tokens after them again (llama.cpp's --context-shift)")
	fs.IntVar(&f.Keep, "keep", 0, "tokens of the prompt a context shift keeps, beside a bos (-1: all of the prompt)")
	switch command {
	case "generate":
		fs.StringVar(&f.Prompt, "p", "", "the prompt")
		fs.StringVar(&f.PromptFile, "f", "", "read the prompt from this `file`")
		fs.BoolVar(&f.NoDisplayPrompt, "no-display-prompt", false, "print only the generated text, not the prompt before it")
	case "chat":
		fs.StringVar(&f.System, "sys", "", "a system message to begin the conversation")
	case "serve":
		fs.StringVar(&f.Host, "host", "127.0.0.1", "the address to listen on")
		fs.IntVar(&f.Port, "port", 8080, "the port to listen on (0: any free one)")
		fs.IntVar(&f.Parallel, "parallel", 1, "sequences decoded together, each with NCtx/N of the cache (llama-server's -np)")
		fs.IntVar(&f.Queue, "queue", 0, "requests that may wait beyond the parallel ones before the server answers 503 (0: 4 × -parallel)")
	}
}

// Main runs the command args[0] with its flags args[1:] and exits.
func Main(args []string, p Program) {
	os.Exit(run(args, p, os.Stdin, os.Stdout, os.Stderr))
}

type usageError struct{ error }

func run(args []string, p Program, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || !IsCommand(args[0]) {
		fmt.Fprintln(stderr, "want a command: generate, chat or serve")
		return 2
	}
	cmd := args[0]
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f Flags
	f.Register(fs, cmd)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	err := f.check(cmd, fs)
	if err == nil {
		err = execute(cmd, &f, p, stdin, stdout, stderr)
	}
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return 2
	case errors.Is(err, context.Canceled):
		return 130
	default:
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return 1
	}
}

func (f *Flags) check(cmd string, fs *flag.FlagSet) error {
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	case f.Model == "":
		return usageError{errors.New("-m FILE.gguf: the model's weights are needed")}
	case f.N < -1:
		return usageError{fmt.Errorf("-n %d: want -1 (no limit) or more", f.N)}
	case cmd == "generate" && f.Prompt != "" && f.PromptFile != "":
		return usageError{errors.New("-p and -f: give the prompt one way")}
	case cmd == "serve" && f.Parallel < 1:
		return usageError{fmt.Errorf("-parallel %d: want at least 1", f.Parallel)}
	case cmd == "serve" && (f.Port < 0 || f.Port > 65535):
		return usageError{fmt.Errorf("-port %d: want 0 to 65535", f.Port)}
	}
	if err := f.Sampling.Check(); err != nil {
		return usageError{err}
	}
	return nil
}

// loaded is a model ready to generate with.
type loaded struct {
	file   *gguf.Mapped
	tok    *tokenizer.Tokenizer
	engine *lm.Engine
	close  func()
}

func load(f *Flags, p Program, parallel, queue int, stderr io.Writer) (*loaded, error) {
	file, err := gguf.Open(f.Model)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			file.Close()
		}
	}()
	if err := file.CheckMeta(p.Meta); err != nil {
		return nil, fmt.Errorf("%s: %v (the model was compiled from %s for another file's shapes)", f.Model, err, p.Source)
	}
	var opts []gguf.WeightsOption
	if f.AllowUnused {
		opts = append(opts, gguf.AllowUnused)
		if u := file.Unused(p.Weights); len(u) > 0 {
			fmt.Fprintf(stderr, "-allow-unused: ignoring them: %s\n", gguf.UnusedList(u))
		}
	}
	w, err := file.Weights(p.Weights, opts...)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.FromGGUF(file.File)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", f.Model, err)
	}
	m, closeModel, err := p.New(w, f.Threads)
	if err != nil {
		return nil, err
	}
	if info := m.Info(); info.NVocab != tok.Len() {
		closeModel()
		return nil, fmt.Errorf("%s: the vocabulary has %d tokens and the model's logits %d", f.Model, tok.Len(), info.NVocab)
	}
	ok = true
	e := lm.NewEngine(m, tok, lm.Options{Parallel: parallel, Queue: queue})
	return &loaded{file: file, tok: tok, engine: e, close: func() { e.Close(); closeModel(); file.Close() }}, nil
}

func execute(cmd string, f *Flags, p Program, stdin io.Reader, stdout, stderr io.Writer) error {
	parallel := 1
	if cmd == "serve" {
		parallel = f.Parallel
	}
	l, err := load(f, p, parallel, f.Queue, stderr)
	if err != nil {
		return err
	}
	defer l.close()
	switch cmd {
	case "generate":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return generate(ctx, f, l, stdout, stderr)
	case "chat":
		return runChat(f, l, stdin, stdout, stderr)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, f, l, stdout, stderr)
}

// request is a Request for prompt with the flags' limits and sampling.
func (f *Flags) request(prompt []int32) lm.Request {
	return lm.Request{Prompt: prompt, MaxTokens: f.maxTokens(), Sampling: f.Sampling, ContextShift: f.ContextShift, Keep: f.Keep}
}

// maxTokens is -n as a Request's MaxTokens.
func (f *Flags) maxTokens() int {
	if f.N < 0 {
		return 0
	}
	return f.N
}

func generate(ctx context.Context, f *Flags, l *loaded, stdout, stderr io.Writer) error {
	text := f.Prompt
	if f.PromptFile != "" {
		b, err := os.ReadFile(f.PromptFile)
		if err != nil {
			return err
		}
		text = string(b)
	}
	ids := l.tok.Encode(text, true, true)
	if len(ids) == 0 {
		return usageError{errors.New("the prompt is empty and the vocabulary adds no bos token: give -p TEXT")}
	}
	if f.N == 0 {
		return nil
	}
	s, err := l.engine.Start(ctx, f.request(ids))
	if err != nil {
		return err
	}
	if !f.NoDisplayPrompt {
		fmt.Fprint(stdout, text)
	}
	for t := range s.Tokens() {
		fmt.Fprint(stdout, t.Text)
	}
	fmt.Fprintln(stdout)
	res, err := s.Result()
	if err == nil && res.Finish == lm.FinishLength && (f.maxTokens() == 0 || res.Tokens < f.maxTokens()) { // not -n's end: the context's
		fmt.Fprintf(stderr, "the context is full: %d tokens, the prompt's and the generated ones (a larger -ctx holds more; -context-shift goes on past it)\n", l.engine.SeqCtx())
	}
	if res.Shifts > 0 {
		fmt.Fprintf(stderr, "the context was shifted %d time(s)\n", res.Shifts)
	}
	printTimes(stderr, res)
	return err
}

// printTimes reports a sequence's speed as llama.cpp's perf lines do:
// the prompt's evaluation, then the generated tokens after the first
// (which the prompt's evaluation gave).
func printTimes(w io.Writer, r lm.Result) {
	rate := func(n int, secs float64) float64 {
		if secs <= 0 {
			return 0
		}
		return float64(n) / secs
	}
	pt := r.PromptTime.Seconds()
	fmt.Fprintf(w, "prompt: %d tokens in %.3f s, %.2f tokens/s\n", r.PromptTokens, pt, rate(r.PromptTokens, pt))
	if r.Tokens > 1 {
		gt := r.GenTime.Seconds()
		fmt.Fprintf(w, "generation: %d tokens in %.3f s after the first, %.2f tokens/s\n", r.Tokens-1, gt, rate(r.Tokens-1, gt))
	}
}
