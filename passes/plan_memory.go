package passes

import (
	"errors"

	"github.com/graphc/graphc/ir"
)

// planMemory is a placeholder being written (TODO before landing).
func planMemory(g *ir.Graph, pc *Context) error { return errors.New("plan_memory: not written yet") }
