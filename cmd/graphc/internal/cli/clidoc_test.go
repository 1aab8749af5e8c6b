package cli

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphc/graphc/internal/golden"
)

// cliDoc is the command line's reference; the part between its markers is
// Reference's text.
const (
	cliDoc      = "../../../../docs/cli.md"
	cliDocBegin = "<!-- Generated from the command table (cmd/graphc/internal/cli) by go test ./cmd/graphc/internal/cli -run TestCLIReference -update: change the commands' help, not this text. -->\n"
	cliDocEnd   = "<!-- End of the generated reference. -->\n"
)

// TestCLIReference: docs/cli.md's reference of every command and flag is
// what Reference renders from the command table and the flag sets that
// `graphc help` prints, so the document cannot drift from the code.
// -update rewrites it.
func TestCLIReference(t *testing.T) {
	var b strings.Builder
	if err := Reference(&b); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	doc, err := os.ReadFile(cliDoc)
	if err != nil {
		t.Fatal(err)
	}
	head, rest, ok := strings.Cut(string(doc), cliDocBegin)
	want, tail, ok2 := strings.Cut(rest, cliDocEnd)
	if !ok || !ok2 {
		t.Fatalf("%s: no generated part between the markers\n%s%s", cliDoc, cliDocBegin, cliDocEnd)
	}
	if golden.Updating() {
		if err := os.WriteFile(cliDoc, []byte(head+cliDocBegin+got+cliDocEnd+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s differs from the command table (-doc +table):\n%s\nrun: go test ./cmd/graphc/internal/cli -run TestCLIReference -update", cliDoc, diff)
	}
}

// TestReferenceHasEveryFlag: each command's section names each flag its
// help lists, the subcommands' included.
func TestReferenceHasEveryFlag(t *testing.T) {
	var b strings.Builder
	if err := Reference(&b); err != nil {
		t.Fatal(err)
	}
	ref := b.String()
	for _, c := range commands {
		if c.run == nil {
			continue
		}
		_, section, ok := strings.Cut(ref, "\n## "+c.name+"\n")
		if !ok {
			t.Errorf("no section for %s", c.name)
			continue
		}
		section, _, _ = strings.Cut(section, "\n## ")
		sets, err := flagSets(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, fs := range sets {
			fs.VisitAll(func(f *flag.Flag) {
				if !strings.Contains(section, "- `-"+f.Name) {
					t.Errorf("%s: flag -%s missing from its section", fs.Name(), f.Name)
				}
			})
		}
	}
}
