package cli

import (
	"bytes"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/dsl"
	"github.com/graphc/graphc/internal/atomicfile"
)

// cmdFmt is `graphc fmt`: the model in canonical form.
func cmdFmt(e *env, args []string) error {
	fs := newFlags(e, "fmt")
	write := fs.Bool("w", false, "rewrite the file in place")
	files, err := parseFlags(fs, args, 1, 1)
	if err != nil {
		return err
	}
	src, err := readModel(files[0])
	if err != nil {
		return err
	}
	f, err := dsl.Parse(files[0], src)
	if err != nil {
		return &compiler.UserError{Msg: dsl.Render(err, src)}
	}
	out := dsl.Format(f)
	if *write {
		if bytes.Equal(out, src) {
			return nil
		}
		return atomicfile.Write(files[0], out, 0o644)
	}
	_, err = e.stdout.Write(out)
	return err
}
