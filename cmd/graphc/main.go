// Command graphc compiles graph DSL models into Go programs. See the
// README for the commands; `graphc help` lists them.
package main

import (
	"os"

	"github.com/graphc/graphc/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
