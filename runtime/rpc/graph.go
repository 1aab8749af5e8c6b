package rpc

// graph is the ggml graph of the kernels a backend has been given since
// it last sent one: nodes in launch order, and every tensor they name.
// Each kernel's sources are leaves of their own (op NONE) naming memory:
// the server computes nodes in order, so a leaf over memory an earlier
// node wrote reads that node's result, as it does in graphc's stream.
type graph struct {
	nodes   []uint64
	tensors []wireTensor
	nextID  uint64
}

func (g *graph) add(t wireTensor) uint64 {
	g.nextID++
	t.ID = g.nextID
	g.tensors = append(g.tensors, t)
	return t.ID
}

func (g *graph) reset() {
	g.nodes, g.tensors, g.nextID = g.nodes[:0], g.tensors[:0], 0
}
