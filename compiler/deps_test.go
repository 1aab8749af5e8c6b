package compiler

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinksNoKernels: the compiler, codegen and the backend registry they
// plan with link no runtime package (kernels, the scheduler, library
// loaders) and no purego, so that graphc stays a static binary that loads
// nothing and a backend's kernels are linked only by the programs whose
// target names it.
func TestLinksNoKernels(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list the dependencies with: %v", err)
	}
	const module = "github.com/graphc/graphc"
	for _, pkg := range []string{module + "/compiler", module + "/codegen", module + "/backend"} {
		out, err := exec.Command(goCmd, "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				t.Fatalf("go list -deps %s: %v\n%s", pkg, err, ee.Stderr)
			}
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == module+"/runtime" || strings.HasPrefix(dep, module+"/runtime/") ||
				dep == "github.com/ebitengine/purego" || strings.HasPrefix(dep, "github.com/ebitengine/purego/") {
				t.Errorf("%s links %s", pkg, dep)
			}
		}
	}
}
