package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"
)

// subcommands are the commands whose first argument chooses a flag set of
// its own; Reference documents each.
var subcommands = map[string][]string{"gguf": {"new", "info"}}

// machineDefaults are the defaults that depend on the machine graphc runs
// on, by "command -flag": Reference writes these words instead of the
// value, so that the reference reads the same everywhere.
var machineDefaults = map[string]string{
	"calibrate -threads": "the number of CPUs",
}

// Reference writes the command line's reference in Markdown: a table of
// the commands, then for each its usage line, what it does and every flag
// with its default. It reads what `graphc help COMMAND` prints — the
// command table and each command's flag set — so the two cannot differ;
// docs/cli.md holds its text between two markers, and TestCLIReference
// fails when they do (go test ./cmd/graphc/internal/cli -run
// TestCLIReference -update rewrites it).
func Reference(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| command | what it does |\n| --- | --- |\n")
	for _, c := range commands {
		if c.run == nil {
			continue
		}
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s |\n", c.name, c.name, markdownText(c.summary, true))
	}
	used := map[string]bool{}
	for _, c := range commands {
		if c.run == nil {
			continue
		}
		sets, err := flagSets(c)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "\n## %s\n\n```\ngraphc %s\n```\n\n%s.\n", c.name, strings.TrimSpace(c.name+" "+c.args), markdownText(sentence(c.summary), false))
		for _, fs := range sets {
			var flags []*flag.Flag
			fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f) })
			name := fs.Name()
			switch {
			case len(flags) == 0 && name != c.name:
				fmt.Fprintf(&b, "\n`%s` has no flags.\n", name)
				continue
			case len(flags) == 0:
				b.WriteString("\nNo flags.\n")
				continue
			case name != c.name:
				fmt.Fprintf(&b, "\nFlags of `%s`:\n\n", name)
			default:
				b.WriteString("\nFlags:\n\n")
			}
			for _, f := range flags {
				typ, usage := flag.UnquoteUsage(f)
				fmt.Fprintf(&b, "- `-%s`: %s", strings.TrimSpace(f.Name+" "+typ), markdownText(usage, false))
				key := c.name + " -" + f.Name
				if words, ok := machineDefaults[key]; ok {
					used[key] = true
					fmt.Fprintf(&b, " (default: %s)", words)
				} else if !isZeroValue(f) {
					fmt.Fprintf(&b, " (default `%s`)", f.DefValue)
				}
				b.WriteString("\n")
			}
		}
	}
	for key := range machineDefaults {
		if !used[key] {
			return fmt.Errorf("machineDefaults: no flag %q", key)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// flagSets returns the flag sets of command c, one per subcommand, as its
// help builds them: c runs with -h and an env that collects them.
func flagSets(c *command) ([]*flag.FlagSet, error) {
	var sets []*flag.FlagSet
	e := &env{ctx: context.Background(), stdout: io.Discard, stderr: io.Discard, flagSets: &sets}
	calls := [][]string{{"-h"}}
	if subs := subcommands[c.name]; subs != nil {
		calls = nil
		for _, s := range subs {
			calls = append(calls, []string{s, "-h"})
		}
	}
	for _, args := range calls {
		n := len(sets)
		if err := c.run(e, args); !errors.Is(err, flag.ErrHelp) {
			return nil, fmt.Errorf("graphc %s %s: %v; want its help", c.name, strings.Join(args, " "), err)
		}
		if len(sets) != n+1 {
			return nil, fmt.Errorf("graphc %s %s made %d flag sets; want one", c.name, strings.Join(args, " "), len(sets)-n)
		}
	}
	return sets, nil
}

// isZeroValue reports whether f's default is its type's zero value, which
// the flag package's help leaves unsaid, as Reference does.
func isZeroValue(f *flag.Flag) bool {
	if f.DefValue == "" {
		return true
	}
	t := reflect.TypeOf(f.Value)
	var z reflect.Value
	if t.Kind() == reflect.Pointer {
		z = reflect.New(t.Elem())
	} else {
		z = reflect.Zero(t)
	}
	v, ok := z.Interface().(flag.Value)
	return ok && v.String() == f.DefValue
}

// sentence is s with its first letter upper case.
func sentence(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// markdownText escapes what Markdown would read as markup in help text:
// emphasis, code, links, HTML tags, and in a table cell its bars. An
// underscore inside a word (n_copies) is left as it is, which Markdown
// does too.
func markdownText(s string, cell bool) string {
	var b strings.Builder
	rs := []rune(s)
	word := func(i int) bool {
		return i >= 0 && i < len(rs) && (unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i]))
	}
	for i, r := range rs {
		switch {
		case r == '_' && word(i-1) && word(i+1):
		case strings.ContainsRune("\\`*_[]<>", r), cell && r == '|':
			b.WriteRune('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
