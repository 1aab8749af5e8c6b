// Command graphc compiles graph DSL models into Go programs. See the
// README for the commands; `graphc help` lists them.
package main

import (
	"os"

	"github.com/graphc/graphc/compiler"
)

func main() {
	os.Exit(compiler.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
