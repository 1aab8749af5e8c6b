package passes

import (
	"errors"

	"github.com/graphc/graphc/ir"
)

// assignSrcs is a placeholder being written (TODO before landing).
func assignSrcs(g *ir.Graph, pc *Context) error { return errors.New("assign_srcs: not written yet") }
