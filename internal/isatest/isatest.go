// Package isatest runs a package's tests at every instruction-set level of
// graphc's CPU kernels the machine has (runtime/cpu.ISAs), so that a
// difference between the AVX-512, AVX2 and Go kernels fails wherever the
// tests run, not only on machines of one kind.
package isatest

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/graphc/graphc/runtime/cpu"
)

// Main is a TestMain: it runs the tests at the level the kernels start at
// (the best, or $GRAPHC_CPU_ISA's), then, unless $GRAPHC_CPU_ISA is set,
// runs the test binary again, with the same flags, once for each lower
// level. Benchmarks and fuzzing run once, at the starting level.
func Main(m *testing.M) {
	flag.Parse()
	code := m.Run()
	for _, f := range []string{"test.bench", "test.fuzz", "test.list", "test.coverprofile", "test.cpuprofile", "test.memprofile", "test.trace"} {
		if flagSet(f) {
			os.Exit(code)
		}
	}
	if os.Getenv(cpu.ISAEnv) != "" {
		os.Exit(code)
	}
	var args []string
	for _, a := range os.Args[1:] {
		// The go command's log of what the tests read, for its cache: the
		// parent's alone.
		if !strings.HasPrefix(a, "-test.testlogfile=") {
			args = append(args, a)
		}
	}
	for _, l := range cpu.ISAs() {
		if l == cpu.ISA() {
			continue
		}
		fmt.Printf("=== the tests again with %s=%s\n", cpu.ISAEnv, l)
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), cpu.ISAEnv+"="+l)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Printf("--- FAIL: the tests with %s=%s: %v\n", cpu.ISAEnv, l, err)
			code = 1
		}
	}
	os.Exit(code)
}

func flagSet(name string) bool {
	f := flag.Lookup(name)
	return f != nil && f.Value.String() != ""
}
