// Command story generates text with a model compiled into it ahead of
// time: examples/llamafile, llama.cpp's llama architecture compiled by
// graphc for one file shape, linked as a plain Go package — no cgo, no
// compiler at run time. It is what a program embedding a model does:
//
//	graphc gguf new -arch llama /tmp/tiny.gguf      # the shape llamafile is compiled for
//	go run ./examples/story -m /tmp/tiny.gguf -p "Once upon a time"
//
// For another file, compile the package for it (see
// docs/generated-code.md): go generate runs
// graphc compile -weights FILE.gguf examples/llamafile/llama.g.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/graphc/graphc/examples/llamafile"
	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/runtime/lm"
	"github.com/graphc/graphc/runtime/lm/sample"
	"github.com/graphc/graphc/tokenizer"
)

func main() {
	path := flag.String("m", "", "the GGUF file")
	prompt := flag.String("p", "Once upon a time", "the prompt")
	n := flag.Int("n", 32, "tokens to generate")
	params := sample.Defaults()
	params.Flags(flag.CommandLine)
	flag.Parse()
	if err := story(context.Background(), os.Stdout, *path, *prompt, *n, params); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// story prints prompt and up to n tokens after it.
func story(ctx context.Context, w io.Writer, path, prompt string, n int, params sample.Params) error {
	f, err := gguf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	// The file must have the shapes the package was compiled for.
	if err := f.CheckMeta(llamafile.Meta); err != nil {
		return err
	}
	weights, err := f.Weights(llamafile.Weights) // mapped, not copied
	if err != nil {
		return err
	}
	tok, err := tokenizer.FromGGUF(f.File)
	if err != nil {
		return err
	}
	m, err := llamafile.New(weights, 0)
	if err != nil {
		return err
	}
	defer m.Close()
	e := lm.NewEngine(m.LM(), tok, lm.Options{})
	defer e.Close()
	s, err := e.Start(ctx, lm.Request{Prompt: tok.Encode(prompt, true, true), MaxTokens: n, Sampling: params})
	if err != nil {
		return err
	}
	fmt.Fprint(w, prompt)
	for t := range s.Tokens() {
		fmt.Fprint(w, t.Text)
	}
	fmt.Fprintln(w)
	_, err = s.Result()
	return err
}
