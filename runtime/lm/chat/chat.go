// Package chat formats conversations with a model's chat template, the
// Jinja source a GGUF file keeps in tokenizer.chat_template, the way
// llama.cpp's llama-cli and llama-server do (common_chat_templates_apply
// with --jinja): the template sees messages, add_generation_prompt,
// bos_token, eos_token and llama.cpp's extra variables, and a template that
// ignores system messages gets the system prompt merged into the next
// message. Templates run on github.com/ardanlabs/jinja.
//
// Render formats a whole conversation (a server request); Delta formats
// the text one new message adds to a conversation already evaluated (the
// interactive chat loop).
//
// Where the engine differs from Jinja2: whitespace control ("-" markers,
// and trim_blocks/lstrip_blocks, which it applies as transformers does)
// trims the nearest text, even past an expression between it and the tag,
// so "\n {{ x }}{% endif %}" loses its space (llama.cpp's ChatGLM3 test
// case); and some filter misuses panic, which Render turns into errors.
package chat

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ardanlabs/jinja"
)

// Message is one turn.
type Message struct {
	Role    string `json:"role"` // "system", "user", "assistant", ...
	Content string `json:"content"`
}

// ChatML is the template llama.cpp uses when a file has none: its
// CHATML_TEMPLATE_SRC (common/chat.cpp), the Jinja form of the "chatml"
// builtin.
const ChatML = "{%- for message in messages -%}\n" +
	"  {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' -}}\n" +
	"{%- endfor -%}\n" +
	"{%- if add_generation_prompt -%}\n" +
	"  {{- '<|im_start|>assistant\n' -}}\n" +
	"{%- endif -%}"

// ErrHistoryChanged is Delta's error when adding a message changes the text
// of the turns before it (a template that moves the system prompt to the
// last user turn, or drops the last assistant turn): no suffix can be
// appended, and the whole conversation has to be evaluated again.
var ErrHistoryChanged = errors.New("chat: the template rewrites earlier turns when a message is added")

// Template is a parsed chat template. It is safe for concurrent use.
type Template struct {
	src      string
	bos, eos string
	prog     *jinja.Template

	// systemRole is whether the template renders a system message, as
	// Parse found it by rendering one (llama.cpp's capability check in
	// common/jinja/caps.cpp).
	systemRole bool

	now func() time.Time // the clock of strftime_now, date_string and datetime
}

// Parse parses a Jinja chat template source; bos and eos are the
// vocabulary's bos/eos token texts (empty if none), passed to the template
// as bos_token/eos_token as llama.cpp does.
func Parse(src, bos, eos string) (*Template, error) {
	prog, err := jinja.Compile(src)
	if err != nil {
		// The engine's message names the line (and column, for an unclosed tag).
		return nil, fmt.Errorf("chat: template: %w", err)
	}
	t := &Template{src: src, bos: bos, eos: eos, prog: prog, now: time.Now}
	t.probe()
	return t, nil
}

// probeSystem is the content of the probe's system message; a template
// supports the system role if it lands in the output.
const probeSystem = "graphc probe: system message"

// probe sets systemRole. llama.cpp renders a system and a user message
// and records whether the template read the system message's content;
// this engine offers no such hook, so the content has to reach the output.
func (t *Template) probe() {
	// As in llama.cpp's probe: empty bos/eos, tools an empty list, a
	// generation prompt.
	p := *t
	p.bos, p.eos = "", ""
	out, err := p.render([]Message{{Role: "system", Content: probeSystem}, {Role: "user", Content: "User message"}}, true, jinja.NewList(nil))
	t.systemRole = err == nil && strings.Contains(out, probeSystem)
}

// Render renders msgs; addGenerationPrompt opens the assistant's turn
// (add_generation_prompt). Errors (raise_exception, bad template) are
// returned, never panics.
//
// Like llama.cpp, Render maps the role "developer" to "system" (except for
// GPT-OSS templates, which know it) and, when the template ignores or
// rejects system messages, prepends a leading system message's content and
// a newline to the next message. It keeps any bos_token the template
// writes: llama.cpp strips a leading BOS only when its tokenizer adds one.
func (t *Template) Render(msgs []Message, addGenerationPrompt bool) (string, error) {
	return t.render(t.adapt(msgs), addGenerationPrompt, jinja.Undefined())
}

// adapt applies llama.cpp's workarounds (common/chat.cpp, namespace
// workaround) to a copy of msgs.
func (t *Template) adapt(msgs []Message) []Message {
	msgs = append([]Message(nil), msgs...)
	if !strings.Contains(t.src, "<|channel|>") {
		for i := range msgs {
			if msgs[i].Role == "developer" {
				msgs[i].Role = "system"
			}
		}
	}
	if !t.systemRole && len(msgs) > 0 && msgs[0].Role == "system" {
		if len(msgs) > 1 {
			msgs[1].Content = msgs[0].Content + "\n" + msgs[1].Content
		}
		msgs = msgs[1:]
	}
	return msgs
}

// render runs the template on msgs as they are; tools, unless undefined, is
// the tools variable (llama.cpp leaves it undefined when there are none).
func (t *Template) render(msgs []Message, addGenerationPrompt bool, tools jinja.Value) (out string, err error) {
	// Template sources come from model files: an engine panic on a
	// strange one is an error of that template, not of the program.
	defer func() {
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("chat: render: template engine panic: %v", r)
		}
	}()
	list := make([]jinja.Value, len(msgs))
	for i, m := range msgs {
		d := jinja.NewDict()
		d.AsDict().Set("role", jinja.NewString(m.Role))
		d.AsDict().Set("content", jinja.NewString(m.Content))
		list[i] = d
	}
	now := t.now()
	vars := map[string]jinja.Value{
		"messages":        jinja.NewList(list),
		"bos_token":       jinja.NewString(t.bos),
		"eos_token":       jinja.NewString(t.eos),
		"enable_thinking": jinja.NewBool(true), // llama.cpp's default
		// llama.cpp's extra context (common_chat_extra_context).
		"datetime":    jinja.NewString(strftime("%b %d %Y", now)),
		"date_string": jinja.NewString(strftime("%d %b %Y", now)),
		"strftime_now": jinja.NewCallable("strftime_now", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
			if len(args) != 1 || !args[0].IsString() {
				return jinja.Undefined(), errors.New("strftime_now: want one string argument")
			}
			return jinja.NewString(strftime(args[0].AsString(), now)), nil
		}),
	}
	// llama.cpp sets add_generation_prompt only when true; "is defined"
	// tells the difference.
	if addGenerationPrompt {
		vars["add_generation_prompt"] = jinja.NewBool(true)
	}
	if !tools.IsUndefined() {
		vars["tools"] = tools
	}
	out, err = t.prog.RenderValues(vars)
	if err != nil {
		return "", fmt.Errorf("chat: render: %w", err)
	}
	return out, nil
}

// Delta returns the text to append to an evaluated conversation, history,
// when next is added: Render(history+next) minus Render(history) (with no
// generation prompt), as llama.cpp's common_chat_format_single computes it
// for llama-cli. With an empty history it is the whole rendering.
//
// After an assistant turn the evaluated text is what the model generated,
// which ends at its end-of-turn token, before any newline the template
// writes after it; so when history ends with an assistant message, its
// rendering ends with a newline and addGenerationPrompt is set (a user
// turn), the delta starts with that newline. llama.cpp adds it whatever
// the last role; Delta only after an assistant, since after a system
// prompt, evaluated from its own delta, the newline is already there.
//
// Delta returns ErrHistoryChanged when Render(history) is not a prefix of
// Render(history+next), where llama.cpp would cut at Render(history)'s
// length anyway.
func (t *Template) Delta(history []Message, next Message, addGenerationPrompt bool) (string, error) {
	var past string
	if len(history) > 0 {
		var err error
		if past, err = t.Render(history, false); err != nil {
			return "", err
		}
	}
	full, err := t.Render(append(history[:len(history):len(history)], next), addGenerationPrompt)
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(full, past) {
		return "", ErrHistoryChanged
	}
	delta := full[len(past):]
	if addGenerationPrompt && len(history) > 0 && history[len(history)-1].Role == "assistant" && strings.HasSuffix(past, "\n") {
		delta = "\n" + delta
	}
	return delta, nil
}

// Source is the template's text.
func (t *Template) Source() string { return t.src }

// strftime formats tm as Python's time.strftime does format, for the
// directives chat templates use; "%-d" and the like drop the padding, as
// glibc's do. Other directives are kept as written.
func strftime(format string, tm time.Time) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 == len(format) {
			b.WriteByte(format[i])
			continue
		}
		start := i
		i++
		pad := true
		if format[i] == '-' && i+1 < len(format) {
			pad = false
			i++
		}
		num := func(n, width int) {
			if pad {
				fmt.Fprintf(&b, "%0*d", width, n)
			} else {
				fmt.Fprintf(&b, "%d", n)
			}
		}
		switch format[i] {
		case 'Y':
			num(tm.Year(), 4)
		case 'y':
			num(tm.Year()%100, 2)
		case 'm':
			num(int(tm.Month()), 2)
		case 'd':
			num(tm.Day(), 2)
		case 'e':
			fmt.Fprintf(&b, "%2d", tm.Day())
		case 'j':
			num(tm.YearDay(), 3)
		case 'H':
			num(tm.Hour(), 2)
		case 'I':
			num((tm.Hour()+11)%12+1, 2)
		case 'M':
			num(tm.Minute(), 2)
		case 'S':
			num(tm.Second(), 2)
		case 'p':
			b.WriteString(tm.Format("PM"))
		case 'b':
			b.WriteString(tm.Format("Jan"))
		case 'B':
			b.WriteString(tm.Format("January"))
		case 'a':
			b.WriteString(tm.Format("Mon"))
		case 'A':
			b.WriteString(tm.Format("Monday"))
		case 'Z':
			b.WriteString(tm.Format("MST"))
		case 'z':
			b.WriteString(tm.Format("-0700"))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteString(format[start : i+1])
		}
	}
	return b.String()
}
