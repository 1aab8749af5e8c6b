// Command graphc compiles graph DSL models into Go programs. docs/cli.md
// describes the commands; `graphc help` lists them.
package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/graphc/graphc/cmd/graphc/internal/cli"
)

func main() {
	// A write to a closed stdout (graphc plan … | head) then returns
	// EPIPE, which the command line ends quietly on, instead of killing
	// graphc with SIGPIPE.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
