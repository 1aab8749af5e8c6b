package chat

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

// conversation is the one llama.cpp's test-chat-template.cpp formats.
var conversation = []Message{
	{"system", "You are a helpful assistant"},
	{"user", "Hello"},
	{"assistant", "Hi there"},
	{"user", "Who are you"},
	{"assistant", "   I am an assistant   "},
	{"user", "Another question"},
}

// clock is the time of testdata/jinja2's wants.
var clock = time.Date(2025, 7, 4, 15, 4, 5, 0, time.UTC)

// fixture is a testdata archive's sections. Each section's text is followed
// by one newline that is not part of it (txtar ends every section with one).
type fixture map[string]string

func readFixture(t *testing.T, path string) fixture {
	t.Helper()
	a, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{}
	for _, s := range a.Files {
		f[s.Name] = strings.TrimSuffix(string(s.Data), "\n")
	}
	return f
}

// load parses testdata/<name>.txtar's template, on the clock of its want.
func load(t *testing.T, name string) (*Template, fixture) {
	t.Helper()
	f := readFixture(t, filepath.Join("testdata", name+".txtar"))
	tmpl, err := Parse(f["template.jinja"], f["bos"], f["eos"])
	if err != nil {
		t.Fatal(err)
	}
	tmpl.now = func() time.Time { return clock }
	return tmpl, f
}

// eachArchive runs fn on every archive of testdata/dir, as a subtest named
// after it.
func eachArchive(t *testing.T, dir string, fn func(t *testing.T, name string)) {
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no archives in testdata/%s: %v", dir, err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".txtar")
		t.Run(name, func(t *testing.T) { fn(t, filepath.Join(dir, name)) })
	}
}

// engineDiffs are the llama.cpp cases github.com/ardanlabs/jinja v1.8.0
// renders differently, and why.
var engineDiffs = map[string]string{
	// "|>\n {{ message['content'] }}{% else %}": the engine applies
	// lstrip_blocks for {% else %} to the text before the expression in
	// between, eating the space; Jinja2 strips only text right before a
	// block tag. Whitespace control ("-") reaches across expressions too.
	"chatglm3": "whitespace control skips expressions",
}

// TestLlamaCpp renders llama.cpp's test conversation with the templates of
// its test-chat-template.cpp and compares with the output it expects from
// its Jinja path.
func TestLlamaCpp(t *testing.T) {
	eachArchive(t, "llamacpp", func(t *testing.T, name string) {
		tmpl, f := load(t, name)
		msgs := conversation
		if extra, ok := f["extra.json"]; ok {
			var more []Message
			if err := json.Unmarshal([]byte(extra), &more); err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs[:len(msgs):len(msgs)], more...)
		}
		got, err := tmpl.Render(msgs, true)
		if err != nil {
			t.Fatal(err)
		}
		d := cmp.Diff(f["want"], got)
		why, known := engineDiffs[filepath.Base(name)]
		switch {
		case known && d == "":
			t.Errorf("renders as llama.cpp does now: drop it from engineDiffs (%s)", why)
		case known:
			t.Logf("known difference (%s), -want +got:\n%s", why, d)
		case d != "":
			t.Errorf("Render (-want +got):\n%s", d)
		}
	})
}

// TestJinja2 renders real models' templates (llama.cpp's models/templates)
// and compares with Python Jinja2's rendering.
func TestJinja2(t *testing.T) {
	eachArchive(t, "jinja2", func(t *testing.T, name string) {
		tmpl, f := load(t, name)
		got, err := tmpl.Render(conversation, true)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(f["want"], got); d != "" {
			t.Errorf("Render (-want +got):\n%s", d)
		}
	})
}

// TestChatML checks the fallback template against the output of
// llama.cpp's C++ chatml formatter, which its test expects of the
// OpenHermes template (the same format).
func TestChatML(t *testing.T) {
	_, f := load(t, "llamacpp/openhermes-chatml")
	tmpl, err := Parse(ChatML, "", "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.Render(conversation, true)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(f["want"], got); d != "" {
		t.Errorf("Render (-want +got):\n%s", d)
	}
	if tmpl.Source() != ChatML {
		t.Errorf("Source() = %q, want ChatML", tmpl.Source())
	}
}

func TestGenerationPrompt(t *testing.T) {
	for _, tc := range []struct {
		name, prompt string
	}{
		{"llamacpp/openhermes-chatml", "<|im_start|>assistant\n"},
		{"llamacpp/gemma", "<start_of_turn>model\n"},
		{"llamacpp/phi3-small", "<|assistant|>\n"},
		{"jinja2/meta-llama-Llama-3.2-3B-Instruct", "<|start_header_id|>assistant<|end_header_id|>\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, _ := load(t, tc.name)
			on, err := tmpl.Render(conversation, true)
			if err != nil {
				t.Fatal(err)
			}
			off, err := tmpl.Render(conversation, false)
			if err != nil {
				t.Fatal(err)
			}
			if on != off+tc.prompt {
				t.Errorf("Render(true) = Render(false) + %q, want + %q", strings.TrimPrefix(on, off), tc.prompt)
			}
		})
	}
}

// TestDelta feeds a conversation turn by turn as llama-cli does: the
// deltas of the system prompt and of the user turns, and for each
// assistant turn the text the model generated, which ends with its
// end-of-turn token. Together they are the whole conversation's rendering.
func TestDelta(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  string // the end-of-turn token the model generates
	}{
		{"llamacpp/openhermes-chatml", "<|im_end|>"},
		{"llamacpp/gemma", "<end_of_turn>"},
		{"llamacpp/phi3-small", "<|end|>"},
		{"llamacpp/command-r", "<|END_OF_TURN_TOKEN|>"},
		{"jinja2/meta-llama-Llama-3.1-8B-Instruct", "<|eot_id|>"},
		{"jinja2/Qwen-Qwen2.5-7B-Instruct", "<|im_end|>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, _ := load(t, tc.name)
			// Three turns; assistant contents as the model writes them, so
			// that templates that trim them render them unchanged.
			msgs := []Message{
				{"system", "You are a helpful assistant"},
				{"user", "Hello"}, {"assistant", "Hi there"},
				{"user", "Who are you"}, {"assistant", "I am an assistant"},
				{"user", "Another question"},
			}
			var fed strings.Builder
			for i, m := range msgs {
				if m.Role == "assistant" {
					fed.WriteString(m.Content + tc.end)
					continue
				}
				d, err := tmpl.Delta(msgs[:i], m, m.Role == "user")
				if err != nil {
					t.Fatal(err)
				}
				fed.WriteString(d)
			}
			want, err := tmpl.Render(msgs, true)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, fed.String()); d != "" {
				t.Errorf("deltas (-Render +deltas):\n%s", d)
			}
		})
	}
}

func TestDeltaNewline(t *testing.T) {
	tmpl, err := Parse(ChatML, "", "")
	if err != nil {
		t.Fatal(err)
	}
	history := []Message{{"user", "Hello"}, {"assistant", "Hi"}}
	got, err := tmpl.Delta(history, Message{"user", "How are you"}, true)
	if err != nil {
		t.Fatal(err)
	}
	// llama.cpp's test-chat-template.cpp (before it moved to the Jinja
	// engine) expected this of fmt_single("chatml").
	if want := "\n<|im_start|>user\nHow are you<|im_end|>\n<|im_start|>assistant\n"; got != want {
		t.Errorf("Delta after an assistant turn = %q, want %q", got, want)
	}
	got, err = tmpl.Delta(nil, Message{"system", "Be brief"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := "<|im_start|>system\nBe brief<|im_end|>\n"; got != want {
		t.Errorf("Delta of a first message = %q, want %q", got, want)
	}
}

func TestDeltaHistoryChanged(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int // the messages of the history
	}{
		// Mistral v3 puts the system prompt into the last user turn.
		{"llamacpp/mistral-v3", 2},
		// YandexGPT leaves out a last assistant turn.
		{"llamacpp/yandexgpt5", 5},
	} {
		tmpl, _ := load(t, tc.name)
		m := conversation[tc.n]
		if _, err := tmpl.Delta(conversation[:tc.n], m, m.Role == "user"); !errors.Is(err, ErrHistoryChanged) {
			t.Errorf("%s: Delta: err = %v, want ErrHistoryChanged", tc.name, err)
		}
	}
}

func TestRaiseException(t *testing.T) {
	tmpl, _ := load(t, "llamacpp/gemma")
	out, err := tmpl.Render([]Message{{"user", "a"}, {"user", "b"}}, true)
	if err == nil || !strings.Contains(err.Error(), "Conversation roles must alternate") {
		t.Errorf("Render = %q, %v; want the template's exception", out, err)
	}
}

func TestEnginePanic(t *testing.T) {
	// ardanlabs/jinja v1.8.0 panics on selectattr with no test name.
	tmpl, err := Parse("{{ messages|selectattr('role')|list }}", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := tmpl.Render(conversation, true); err == nil || !strings.Contains(err.Error(), "panic") {
		t.Errorf("Render = %q, %v; want the engine's panic as an error", out, err)
	}
}

func TestParseError(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"Hello\n{{ messages", "line 2, col 1"},
		{"{% for m in messages %}\n{% for %}{% endfor %}{% endfor %}", "line 2"},
		{"{% if add_generation_prompt %}", "unclosed if"},
	} {
		_, err := Parse(tc.src, "", "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q): err = %v, want one naming %q", tc.src, err, tc.want)
		}
	}
}

// TestSystemMerge checks llama.cpp's handling of templates that have no
// system role: the system prompt goes into the next message, or away.
func TestSystemMerge(t *testing.T) {
	tmpl, _ := load(t, "llamacpp/gemma")
	for _, tc := range []struct {
		msgs []Message
		want string
	}{
		{[]Message{{"system", "S"}}, ""},
		{[]Message{{"developer", "S"}, {"user", "U"}}, "<start_of_turn>user\nS\nU<end_of_turn>\n"},
	} {
		got, err := tmpl.Render(tc.msgs, false)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("Render(%v) = %q, want %q", tc.msgs, got, tc.want)
		}
	}
}

// TestVariables checks what the template sees besides the messages.
func TestVariables(t *testing.T) {
	src := "{{ bos_token }}|{{ eos_token }}|{{ add_generation_prompt is defined }}|{{ tools is defined }}|" +
		"{{ enable_thinking }}|{{ date_string }}|{{ datetime }}|" +
		"{{ strftime_now('%Y-%m-%d %H:%M:%S %-d %e %j %I%p %a %A %b %B %y %% %Q') }}"
	tmpl, err := Parse(src, "<s>", "</s>")
	if err != nil {
		t.Fatal(err)
	}
	tmpl.now = func() time.Time { return clock }
	for _, tc := range []struct {
		gen  bool
		want string
	}{
		{false, "<s>|</s>|False|False|True|04 Jul 2025|Jul 04 2025|2025-07-04 15:04:05 4  4 185 03PM Fri Friday Jul July 25 % %Q"},
		{true, "<s>|</s>|True|False|True|04 Jul 2025|Jul 04 2025|2025-07-04 15:04:05 4  4 185 03PM Fri Friday Jul July 25 % %Q"},
	} {
		got, err := tmpl.Render(nil, tc.gen)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("Render(nil, %v) = %q, want %q", tc.gen, got, tc.want)
		}
	}
}

// TestNamed: every named template is one of testdata/jinja2's, so
// TestJinja2 covers it, or ChatML.
func TestNamed(t *testing.T) {
	tested := map[string]bool{}
	paths, _ := filepath.Glob(filepath.Join("testdata", "jinja2", "*.txtar"))
	for _, p := range paths {
		tested[readFixture(t, p)["template.jinja"]] = true
	}
	names := Names()
	if len(names) < 2 || !slices.Contains(names, "chatml") || !slices.IsSorted(names) {
		t.Fatalf("Names() = %v", names)
	}
	for _, name := range names {
		src, ok := Named(name)
		switch {
		case !ok:
			t.Errorf("Named(%q): not found", name)
		case name == "chatml":
			if src != ChatML {
				t.Errorf(`Named("chatml") is not ChatML`)
			}
		case !tested[src]:
			t.Errorf("Named(%q) is none of testdata/jinja2's templates: no test renders it", name)
		}
	}
	if _, ok := Named("no-such-template"); ok {
		t.Error(`Named("no-such-template") found one`)
	}
}
