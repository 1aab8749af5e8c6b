package lmcli

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"

	"github.com/graphc/graphc/runtime/lm"
	"github.com/graphc/graphc/runtime/lm/chat"
	"github.com/graphc/graphc/runtime/lm/server"
)

// engine is *lm.Engine as the server's Engine: its Start's stream as the
// server's interface.
type engine struct{ *lm.Engine }

func (e engine) Start(ctx context.Context, r lm.Request) (server.Stream, error) {
	s, err := e.Engine.Start(ctx, r)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// serve answers the HTTP API until ctx is done (Ctrl-C, SIGTERM).
func serve(ctx context.Context, f *Flags, l *loaded, stdout, stderr io.Writer) error {
	tmpl, err := template(l.file.File, l.tok)
	if err != nil {
		return err
	}
	c := server.Config{
		Model:     filepath.Base(f.Model),
		Engine:    engine{l.engine},
		Tokenizer: l.tok,
		Chat: func(msgs []server.Message) (string, error) {
			cm := make([]chat.Message, len(msgs))
			for i, m := range msgs {
				cm[i] = chat.Message(m)
			}
			return tmpl.Render(cm, true)
		},
		Sampling:     f.Sampling,
		MaxTokens:    f.maxTokens(),
		ContextShift: f.ContextShift,
		Keep:         f.Keep,
		Log:          stderr,
	}
	info := l.engine.Info()
	fmt.Fprintf(stderr, "%s: %d-token context, %d per sequence, %d decoded together\n", c.Model, info.NCtx, l.engine.SeqCtx(), f.Parallel)
	return server.Serve(ctx, net.JoinHostPort(f.Host, strconv.Itoa(f.Port)), c)
}
