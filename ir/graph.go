package ir

import "github.com/graphc/graphc/tensor"

// Graph is a model: its dims, declared tensors and the computation, in the
// node order ggml_build_forward_expand produces, plus the scheduling
// decisions the passes add. After the passes run, the Graph is the plan:
// codegen reads nothing else.
type Graph struct {
	Source string // DSL file name, for generated headers and messages

	Dims    []*Dim
	Tensors []*Tensor // every tensor ever created, by ID

	// Meta are the weights-file metadata values the model was compiled
	// for (the DSL's meta(…)), each key once, in first-use order.
	Meta []tensor.Meta

	// Declared tensors in declaration order. Weights and states together, in
	// declaration order, define the ggml fill index of each (Params).
	Inputs  []*Tensor
	Params  []*Tensor // weights and states, interleaved as declared
	Outputs []*Tensor

	// Leafs and Nodes in ggml graph order: depth first from each root in
	// turn, sources in operand order (ggml_visit_parents).
	Leafs []*Tensor
	Nodes []*Tensor

	// Target and plan.
	Backends []*Backend
	Splits   []*Split
	Regions  []*Region // parallel regions of multi-threaded backends' splits, in node order
	Buffers  []*Buffer
	NCopies  int

	// InputCopies are, with NCopies > 1, the pipeline versions of the graph
	// inputs (ggml's sched->graph_inputs): Tensor is the input, Copies its
	// NCopies versions on the input's backend, Copies[0] being the input
	// itself (ggml's "CPU#inp#1" are Copies[1:]). All of them are live for
	// the whole evaluation. Empty with NCopies == 1.
	InputCopies []*SplitInput

	// MemoryStrategy selects plan_memory's placement strategy: "" or
	// "best" (every strategy, the smallest buffer wins per buffer type),
	// "ggml" (ggml-alloc's decisions, offset for offset), "greedy_size" or
	// "greedy_breadth". The driver sets it before running the passes.
	MemoryStrategy string

	inGraph map[*Tensor]bool
}

// Backend is one entry of the target, in priority order.
type Backend struct {
	Name       string // cpu, cuda0, sim0, …
	BufferType string // name of its buffer type; equal names share a buffer
	Host       bool   // buffer type is host memory
	Alignment  int64
	MaxSize    int64 // largest single buffer allocation (ggml's buft max_size); 0 = unlimited
	// Reads lists the other buffer types the backend's ops read directly
	// (ggml_backend_supports_buft), in target order; a split imports a
	// tensor from any other buffer type with a copy.
	Reads []string
}

// Split is a run of consecutive nodes on one backend, with the inputs it
// copies in from other backends before running.
type Split struct {
	Backend int
	First   int // index into Graph.Nodes
	End     int // one past the last node
	Inputs  []*SplitInput
	// EstimateNs is the cost model's estimate of the split's time, its
	// copies in included (plans made with -placement cost), 0 otherwise.
	EstimateNs int64
}

// SplitInput is a tensor a split reads from another backend's memory: the
// original, and its NCopies copies on the split's backend (KindCopy
// tensors). Nodes of the split read Copies[0]; pipelined evaluations
// rotate through the others.
type SplitInput struct {
	Tensor *Tensor
	Copies []*Tensor
	// Experts, when set, makes this an expert copy
	// (ggml_backend_sched_compute_splits' rule for mixtures of experts):
	// Tensor is an expert weight in host memory, [.., .., n_expert], that
	// the split's first node, a mul_mat_id, reads as its source 0. The
	// copy's memory is planned for the whole tensor (the worst case), but
	// an evaluation copies only the experts its ids name, consecutive ones
	// in one piece: the plan decides what is copied, the ids which rows.
	Experts *ExpertCopy
}

// ExpertCopy is what an expert copy needs at run time.
type ExpertCopy struct {
	// IDs is the tensor the chosen experts (i32, [n_used, n_tokens]) are
	// read from on the host before the copy: the mul_mat_id's ids where
	// they already are on the split's backend, or, when the split itself
	// copies them in after this input, their original (ggml reads the
	// ids where they are at that moment).
	IDs *Tensor
}

// Buffer is a compute buffer of one buffer type.
type Buffer struct {
	BufferType string
	Backend    int   // the first backend using this buffer type
	Size       int64 // planned bytes
	LowerBound int64 // max over steps of live bytes
	NaiveSize  int64 // sum of all allocated tensors

	Alignment int64 // every offset and size is a multiple of this
	MaxSize   int64 // largest chunk the backend can allocate; 0 = unlimited
	// Chunks are the sizes of the separately allocated pieces of the
	// buffer (ggml's vbuffer chunks, needed when Size exceeds MaxSize);
	// they sum to Size. A tensor lives in Chunks[Alloc.Chunk]. Nil when
	// the buffer is empty.
	Chunks   []int64
	Strategy string // the plan_memory strategy that placed it
}

// NewGraph returns an empty graph for source file name.
func NewGraph(source string) *Graph { return &Graph{Source: source, NCopies: 1} }

// Expand appends root and everything it depends on to the graph order, like
// ggml_build_forward_expand: a tensor already in the graph is not visited
// again, sources are visited in operand order, and view sources before the
// view (ggml visits src[] only; a view's src[0] is its view source).
func (g *Graph) Expand(root *Tensor) {
	if g.inGraph == nil {
		g.inGraph = map[*Tensor]bool{}
	}
	g.visit(root)
}

func (g *Graph) visit(t *Tensor) {
	if g.inGraph[t] {
		return
	}
	g.inGraph[t] = true
	for _, s := range t.Src {
		g.visit(s)
	}
	if t.IsLeaf() {
		g.Leafs = append(g.Leafs, t)
	} else {
		g.Nodes = append(g.Nodes, t)
	}
}

// InGraph reports whether t was reached by Expand.
func (g *Graph) InGraph(t *Tensor) bool { return g.inGraph[t] }

// BytesCopiedPerEval is what one evaluation of the plan copies between
// backends: every split input once (pipeline copies rotate, they do not
// add), at the dims' bounds. An expert copy counts whole: it is the most
// it moves, when the evaluation uses every expert.
func (g *Graph) BytesCopiedPerEval() int64 {
	var n int64
	for _, s := range g.Splits {
		for _, in := range s.Inputs {
			n += in.Tensor.MaxBytes()
		}
	}
	return n
}
