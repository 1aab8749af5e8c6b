package cli

import (
	"fmt"

	"github.com/graphc/graphc/compiler"
)

// cmdCompile is `graphc compile`: the model's Go file, <model>_gen.go.
func cmdCompile(e *env, args []string) error {
	fs := newFlags(e, "compile")
	var tf targetFlags
	tf.register(fs)
	out := fs.String("o", "", "output directory (default: the model's directory)")
	pkg := fs.String("pkg", "", "package name (default: the output directory's name; main with -main)")
	withMain := fs.Bool("main", false, "also emit a runnable main that fills weights deterministically and prints the outputs")
	force := fs.Bool("f", false, "replace DIR/<model>_gen.go even if graphc did not generate it")
	files, err := parseFlags(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if *pkg != "" {
		if err := compiler.CheckPackageName(*pkg); err != nil {
			return &usageError{"-pkg: " + err.Error()}
		}
	}
	cfg, err := tf.configWithWeights()
	if err != nil {
		return err
	}
	path, err := compiler.CompileFile(files[0], *out, *pkg, *withMain, *force, cfg)
	if err != nil {
		return err
	}
	noteIgnored(e, cfg)
	fmt.Fprintln(e.stderr, "graphc: wrote", path)
	return nil
}
