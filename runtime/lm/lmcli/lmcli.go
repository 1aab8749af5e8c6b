// Package lmcli is the generate, chat and serve commands of programs graphc generates for language models.
package lmcli

import (
	"fmt"
	"os"

	"github.com/graphc/graphc/runtime/lm"
	"github.com/graphc/graphc/tensor"
)

type Program struct {
	Source  string                                                                        // the DSL file the model was compiled from
	Weights []tensor.Decl                                                                 // the weights New expects
	Meta    []tensor.Meta                                                                 // the metadata values the model was compiled for
	New     func(weights map[string]tensor.Tensor, threads int) (lm.Model, func(), error) // the model and its Close
}

// IsCommand reports whether arg is one of the commands Main runs.
func IsCommand(arg string) bool { return arg == "generate" || arg == "chat" || arg == "serve" }

// Main runs the command args[0] with its flags args[1:] and exits.
func Main(args []string, p Program) { fmt.Fprintln(os.Stderr, "lmcli: not yet"); os.Exit(2) }
