//go:build unix

package lmcli

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/graphc/graphc/gguf/ggufarch"
	"github.com/graphc/graphc/runtime/lm"
	"github.com/graphc/graphc/tensor"
)

// slowModel answers every token with the same one, slowly enough for a
// test to interrupt an answer.
type slowModel struct{ info lm.Info }

func (s slowModel) Info() lm.Info { return s.info }

func (s slowModel) Decode(b *lm.Batch) ([]float32, error) {
	time.Sleep(2 * time.Millisecond)
	out := make([]float32, len(b.Outputs)*s.info.NVocab)
	for i := range b.Outputs {
		out[i*s.info.NVocab+100] = 1
	}
	return out, nil
}

// syncBuffer is stdout, written by the command and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestChatInterrupt: Ctrl-C stops the answer being written, not the
// chat, which answers the next line and ends at EOF.
func TestChatInterrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.gguf")
	o := ggufarch.Defaults("llama")
	if err := ggufarch.WriteFile(path, o); err != nil {
		t.Fatal(err)
	}
	p := Program{Source: "test.g", New: func(map[string]tensor.Tensor, int) (lm.Model, func(), error) {
		return slowModel{lm.Info{NCtx: 4096, NBatch: 64, NVocab: o.Vocab}}, func() {}, nil
	}}
	in, feed := io.Pipe()
	var out, errs syncBuffer
	code := make(chan int)
	go func() {
		code <- run([]string{"chat", "-m", path, "-allow-unused", "-n", "300", "-temp", "0"}, p, in, &out, &errs)
	}()
	io.WriteString(feed, "Hello!\n")
	for deadline := time.Now().Add(10 * time.Second); len(out.String()) < 20; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no answer:\n%s\n%s", out.String(), errs.String())
		}
	}
	syscall.Kill(syscall.Getpid(), syscall.SIGINT)
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), "[stopped]"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Ctrl-C did not stop the answer:\n%s\n%s", out.String(), errs.String())
		}
	}
	io.WriteString(feed, "Again, briefly.\n")
	feed.Close()
	if c := <-code; c != 0 {
		t.Fatalf("exit %d:\n%s", c, errs.String())
	}
	turns := strings.Split(out.String(), "\n> ")
	if len(turns) != 4 || !strings.Contains(turns[1], "[stopped]") || strings.Contains(turns[2], "[stopped]") || len(turns[2]) < 300 {
		t.Errorf("want an interrupted answer, then a whole one of 300 tokens, then the end:\n%q", out.String())
	}
}
