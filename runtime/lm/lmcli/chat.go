package lmcli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/runtime/lm"
	"github.com/graphc/graphc/runtime/lm/chat"
	"github.com/graphc/graphc/tokenizer"
)

// template is the file's chat template, or llama.cpp's fallback, ChatML.
func template(file *gguf.File, tok *tokenizer.Tokenizer) (*chat.Template, error) {
	src, ok := file.MetaString("tokenizer.chat_template")
	if !ok {
		src = chat.ChatML
	}
	t, err := chat.Parse(src, special(tok, tok.BOS()), special(tok, tok.EOS()))
	if err != nil {
		return nil, fmt.Errorf("the file's chat template: %v", err)
	}
	return t, nil
}

func special(tok *tokenizer.Tokenizer, id int32) string {
	if id == tokenizer.NoToken {
		return ""
	}
	return tok.Piece(id, true)
}

// encodeChat tokenizes a rendered conversation, its special tokens'
// text as those tokens, with the bos token unless the template wrote it.
func encodeChat(tok *tokenizer.Tokenizer, prompt string) []int32 {
	bos := special(tok, tok.BOS())
	return tok.Encode(prompt, bos == "" || !strings.HasPrefix(prompt, bos), true)
}

// chat talks with the model: each turn renders the whole conversation,
// whose beginning the engine finds in its cache, so only the new turn is
// evaluated. Ctrl-C stops an answer; at the prompt, or after EOF, it
// ends the chat.
func runChat(f *Flags, l *loaded, stdin io.Reader, stdout, stderr io.Writer) error {
	tmpl, err := template(l.file.File, l.tok)
	if err != nil {
		return err
	}
	var msgs []chat.Message
	if f.System != "" {
		msgs = append(msgs, chat.Message{Role: "system", Content: f.System})
	}
	interrupt := make(chan os.Signal, 1)
	signal.Notify(interrupt, os.Interrupt)
	defer signal.Stop(interrupt)
	lines := make(chan string)
	go func() {
		in := bufio.NewScanner(stdin)
		in.Buffer(make([]byte, 64<<10), 16<<20)
		for in.Scan() {
			lines <- in.Text()
		}
		close(lines)
	}()
	fmt.Fprintf(stderr, "Ctrl-C stops an answer; Ctrl-D, or Ctrl-C at the prompt, ends the chat.\n")
	for {
		fmt.Fprint(stdout, "\n> ")
		var line string
		select {
		case l, ok := <-lines:
			if !ok {
				fmt.Fprintln(stdout)
				return nil
			}
			line = l
		case <-interrupt:
			fmt.Fprintln(stdout)
			return nil
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		msgs = append(msgs, chat.Message{Role: "user", Content: line})
		prompt, err := tmpl.Render(msgs, true)
		if err != nil {
			return fmt.Errorf("the chat template: %v", err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		s, err := l.engine.Start(ctx, f.request(encodeChat(l.tok, prompt)))
		var ce *lm.ContextError
		if errors.As(err, &ce) {
			cancel()
			msgs = msgs[:len(msgs)-1]
			fmt.Fprintf(stderr, "%v: the conversation is full; say less, or start again with a larger -ctx\n", err)
			continue
		}
		if err != nil {
			cancel()
			return err
		}
		answered := make(chan struct{})
		go func() {
			select {
			case <-interrupt:
				cancel()
			case <-answered:
			}
		}()
		var answer strings.Builder
		for t := range s.Tokens() {
			fmt.Fprint(stdout, t.Text)
			answer.WriteString(t.Text)
		}
		close(answered)
		_, err = s.Result()
		cancel()
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		if err != nil {
			fmt.Fprint(stdout, " [stopped]")
		}
		fmt.Fprintln(stdout)
		msgs = append(msgs, chat.Message{Role: "assistant", Content: answer.String()})
	}
}
