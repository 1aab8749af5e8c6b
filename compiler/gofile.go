package compiler

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/graphc/graphc/codegen"
)

// CompileFile compiles model into dir/<model>_gen.go (dir: the model's
// directory by default) and returns the file's path.
func CompileFile(model, dir, pkg string, withMain bool, cfg Config) (string, error) {
	src, err := os.ReadFile(model)
	if err != nil {
		return "", &UserError{err.Error()}
	}
	if dir == "" {
		dir = filepath.Dir(model)
	}
	code, err := GenerateFile(model, src, dir, pkg, withMain, cfg)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", &UserError{err.Error()}
	}
	base := strings.TrimSuffix(filepath.Base(model), filepath.Ext(model))
	path := filepath.Join(dir, base+"_gen.go")
	if err := os.WriteFile(path, code, 0o644); err != nil {
		return "", &UserError{err.Error()}
	}
	return path, nil
}

// GenerateFile compiles the model source src and returns the Go file that
// CompileFile would write into dir: the package is named pkg, or after dir.
func GenerateFile(model string, src []byte, dir, pkg string, withMain bool, cfg Config) ([]byte, error) {
	res, err := Compile(model, src, cfg)
	if err != nil {
		return nil, err
	}
	if pkg == "" {
		pkg = packageName(dir, withMain)
	}
	return Generate(res, codegen.Options{PkgName: pkg, Main: withMain, Source: filepath.Base(model)})
}

// packageName is dir's name as a Go package name: lower case, letters and
// digits only (a digit not first), "model" when nothing is left.
func packageName(dir string, withMain bool) string {
	if withMain {
		return "main"
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	var b strings.Builder
	for _, r := range strings.ToLower(filepath.Base(abs)) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' && b.Len() > 0 {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "model"
	}
	return b.String()
}
