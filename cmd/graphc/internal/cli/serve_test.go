package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/graphc/graphc/gguf/ggufarch"
	"github.com/graphc/graphc/runtime/lm/chat"
)

// textFile writes a small llama file with a ChatML template and builds
// its text program.
func textFile(t *testing.T) (path, bin string) {
	t.Helper()
	needGo(t)
	t.Setenv("GRAPHC_CACHE", t.TempDir())
	path = filepath.Join(t.TempDir(), "chat.gguf")
	o := ggufarch.Defaults("llama")
	o.Embd, o.FF, o.Vocab = 128, 256, 512
	o.ChatTemplate = chat.ChatML
	if err := ggufarch.WriteFile(path, o); err != nil {
		t.Fatal(err)
	}
	var tf targetFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	tf.registerText(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	bin, err := textProgram(&env{ctx: context.Background(), stdout: io.Discard, stderr: io.Discard}, &tf, path, "")
	if err != nil {
		t.Fatal(err)
	}
	return path, bin
}

// TestServeEndToEnd runs graphc serve's program on a real model: answers
// decoded four at a time are the ones decoded alone, chat streams, and
// 200 requests from 20 clients all complete.
func TestServeEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	path, bin := textFile(t)
	cmd := exec.Command(bin, "serve", "-m", path, "-port", "0", "-parallel", "4", "-threads", "2")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	listening := make(chan string, 1)
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		re := regexp.MustCompile(`listening on (http://\S+)`)
		s := bufio.NewScanner(stderr)
		for s.Scan() {
			log.WriteString(s.Text() + "\n")
			if m := re.FindStringSubmatch(s.Text()); m != nil {
				listening <- m[1]
			}
		}
	}()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("serve: %v", err)
		}
		<-logged
		if t.Failed() {
			t.Logf("serve's log:\n%s", log.String())
		}
	}()
	var url string
	select {
	case url = <-listening:
	case <-time.After(time.Minute):
		t.Fatal("serve did not say where it listens")
	}

	complete := func(prompt string, n int) (string, error) {
		body, _ := json.Marshal(map[string]any{"prompt": prompt, "max_tokens": n, "temperature": 0})
		r, err := http.Post(url+"/v1/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			return "", err
		}
		defer r.Body.Close()
		var c struct {
			Choices []struct {
				Text         string `json:"text"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
			Usage struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.NewDecoder(r.Body).Decode(&c); err != nil || r.StatusCode != 200 || len(c.Choices) != 1 {
			return "", fmt.Errorf("status %d, %v, %+v", r.StatusCode, err, c)
		}
		if c.Usage.CompletionTokens > n {
			return "", fmt.Errorf("%d tokens for max_tokens %d", c.Usage.CompletionTokens, n)
		}
		return c.Choices[0].Text, nil
	}
	prompts := []string{"Once upon a time", "The quick brown fox", "In a hole in the ground", "It was a dark and stormy night"}
	alone := make([]string, len(prompts))
	for i, p := range prompts {
		if alone[i], err = complete(p, 24); err != nil {
			t.Fatal(err)
		}
	}
	together := make([]string, len(prompts))
	var wg sync.WaitGroup
	for i, p := range prompts {
		wg.Go(func() {
			var err error
			if together[i], err = complete(p, 24); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i := range prompts {
		if together[i] != alone[i] {
			t.Errorf("%q: decoded with three others %q, alone %q", prompts[i], together[i], alone[i])
		}
	}

	// Chat, streamed, sampled with a fixed seed: a random one now and then
	// draws the end of generation before max_tokens.
	body := `{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hello!"}],"stream":true,"max_tokens":8,"seed":1}`
	r, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	events, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || !strings.Contains(string(events), `"finish_reason":"length"`) || !strings.HasSuffix(string(events), "data: [DONE]\n\n") {
		t.Errorf("chat stream: status %d:\n%s", r.StatusCode, events)
	}

	// The official openai client, when runtime/lm/server's tests have it
	// installed: the same greedy text, streamed and not.
	if mods, _ := filepath.Abs("../../../../runtime/lm/server/testdata/node_modules"); fileExists(filepath.Join(mods, "openai", "package.json")) {
		dir := t.TempDir()
		if err := os.Symlink(mods, filepath.Join(dir, "node_modules")); err != nil {
			t.Fatal(err)
		}
		script := `import OpenAI from 'openai';
import assert from 'node:assert/strict';
const [baseURL, prompt, want] = JSON.parse(process.argv[2]);
const client = new OpenAI({ baseURL, apiKey: 'none', maxRetries: 0 });
const c = await client.completions.create({ model: 'chat.gguf', prompt, max_tokens: 24, temperature: 0 });
assert.equal(c.choices[0].text, want);
let text = '';
for await (const chunk of await client.completions.create({ model: 'chat.gguf', prompt, max_tokens: 24, temperature: 0, stream: true })) text += chunk.choices[0]?.text ?? '';
assert.equal(text, want);
const answers = await Promise.all([1, 2, 3].map(() => client.chat.completions.create({ model: 'chat.gguf', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 5, temperature: 0 })));
for (const a of answers) assert.equal(a.choices[0].message.content, answers[0].choices[0].message.content);
`
		if err := os.WriteFile(filepath.Join(dir, "real.mjs"), []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		arg, _ := json.Marshal([]string{url + "/v1", prompts[0], alone[0]}) // the text may hold a NUL, which no argument can
		node := exec.Command("node", "real.mjs", string(arg))
		node.Dir = dir
		if out, err := node.CombinedOutput(); err != nil {
			t.Errorf("the openai client: %v\n%s", err, out)
		}
	} else if os.Getenv("GRAPHC_REQUIRE_NODE") == "1" {
		t.Error("GRAPHC_REQUIRE_NODE=1 and no openai npm package in runtime/lm/server/testdata/node_modules")
	}

	// 200 requests from 20 clients.
	errs := make(chan error, 200)
	for c := range 20 {
		wg.Go(func() {
			for k := range 10 {
				if _, err := complete(fmt.Sprintf("client %d asks %d", c, k), 4); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestChatEndToEnd: graphc chat's program answers each line and ends at
// EOF.
func TestChatEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	path, bin := textFile(t)
	cmd := exec.Command(bin, "chat", "-m", path, "-n", "6", "-temp", "0", "-sys", "Be brief.")
	cmd.Stdin = strings.NewReader("Hello!\nTell me a story.\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chat: %v\n%s", err, stderr.String())
	}
	if n := strings.Count(stdout.String(), "> "); n != 3 {
		t.Errorf("chat prompted %d times, want 3 (two turns, then EOF):\n%s", n, stdout.String())
	}
	if os.Getenv("GRAPHC_TEST_VERBOSE") != "" {
		t.Logf("%s", stdout.String())
	}
}
