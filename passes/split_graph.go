package passes

import (
	"errors"

	"github.com/graphc/graphc/ir"
)

// splitGraph is a placeholder being written (TODO before landing).
func splitGraph(g *ir.Graph, pc *Context) error { return errors.New("split_graph: not written yet") }
