package passes

import (
	"errors"

	"github.com/graphc/graphc/ir"
)

// upgradeBackends is a placeholder being written (TODO before landing).
func upgradeBackends(g *ir.Graph, pc *Context) error { return errors.New("upgrade_backends: not written yet") }
