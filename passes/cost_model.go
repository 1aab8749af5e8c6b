package passes

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
)

// OpCost is what running nodes costs on one backend, in nanoseconds: a
// fixed price per node (kernel launch, thread barrier) plus a price per
// unit of work, FLOPs for matrix products and bytes moved for the rest,
// which are bound by memory bandwidth.
type OpCost struct {
	NodeNs    float64 `json:"node_ns"`
	NsPerFlop float64 `json:"ns_per_flop"` // mul_mat
	NsPerByte float64 `json:"ns_per_byte"` // every other op: bytes read and written
}

// CopyCost is what copying a tensor between two backends costs.
type CopyCost struct {
	CopyNs    float64 `json:"copy_ns"` // per copy: the transfer's launch and sync
	NsPerByte float64 `json:"ns_per_byte"`
}

// CostModel estimates a plan's evaluation time. Backends are looked up
// by name (sim0), then family (sim), then device kind ("CPU", "GPU",
// "ACCEL"); copies by "FROM>TO" pair of the same, then Copy. A copy between
// backends that read each other's memory costs nothing: there is no copy.
type CostModel struct {
	Backends map[string]OpCost   `json:"backends"`
	Copies   map[string]CopyCost `json:"copies,omitempty"`
	Copy     CopyCost            `json:"copy"`
	SplitNs  float64             `json:"split_ns"` // per split: its events and sync
	Source   string              `json:"-"`        // where the numbers come from, for reports
}

// DefaultCostModel is the model without a calibration file. Its numbers
// are round orders of magnitude, not measurements: a CPU core group at
// 20 GFLOP/s and 10 GB/s with a ~2 µs barrier per node, a discrete GPU at
// 500 GFLOP/s and 500 GB/s with ~1 µs per launched kernel (ggml batches
// launches into CUDA graphs), PCIe-like copies at ~10 GB/s with ~10 µs per
// copy, and ~5 µs per split for its event wait. Only their ratios steer
// the strategy, and these ratios are the ones every real machine shares:
// a GPU beats the CPU on every op, and crossing the bus costs more than
// any small op.
func DefaultCostModel() *CostModel {
	return &CostModel{
		Backends: map[string]OpCost{
			"CPU":   {NodeNs: 2000, NsPerFlop: 0.05, NsPerByte: 0.1},
			"GPU":   {NodeNs: 1000, NsPerFlop: 0.002, NsPerByte: 0.002},
			"ACCEL": {NodeNs: 1000, NsPerFlop: 0.01, NsPerByte: 0.01},
		},
		Copy:    CopyCost{CopyNs: 10000, NsPerByte: 0.1},
		SplitNs: 5000,
		Source:  "built-in defaults",
	}
}

// LoadCostModel reads a calibration file (graphc calibrate writes one);
// what it lacks falls back to the defaults.
func LoadCostModel(path string) (*CostModel, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := DefaultCostModel()
	var f CostModel
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	for k, v := range f.Backends {
		m.Backends[k] = v
	}
	if len(f.Copies) > 0 {
		m.Copies = f.Copies
	}
	if f.Copy != (CopyCost{}) {
		m.Copy = f.Copy
	}
	if f.SplitNs > 0 {
		m.SplitNs = f.SplitNs
	}
	m.Source = path
	return m, nil
}

// keys are the names a backend is looked up by, most specific first: its
// name (sim0), its family (sim: every device of the kind shares kernels),
// its device kind (GPU).
func keys(b *Backend) []string {
	return []string{b.Name, strings.TrimRight(b.Name, "0123456789"), b.Device}
}

func (m *CostModel) op(b *Backend) OpCost {
	for _, k := range keys(b) {
		if c, ok := m.Backends[k]; ok {
			return c
		}
	}
	return m.Backends["CPU"]
}

func (m *CostModel) copyCost(from, to *Backend) CopyCost {
	for i, f := range keys(from) {
		if c, ok := m.Copies[f+">"+keys(to)[i]]; ok {
			return c
		}
	}
	return m.Copy
}

// NodeNs estimates node t on backend b; views run nowhere and cost nothing.
func (m *CostModel) NodeNs(t *ir.Tensor, b *Backend) float64 {
	if t.Op.IsView() || t.Op == ops.None {
		return 0
	}
	c := m.op(b)
	// mul_mat_id's flops are those of its result's columns alone: it reads
	// only the chosen experts.
	if (t.Op == ops.MulMat && len(t.Src) == 2) || t.Op == ops.MulMatID {
		k := t.Src[0].Ne[0].AtBounds()
		return c.NodeNs + c.NsPerFlop*2*float64(k)*float64(elems(t))
	}
	moved := float64(t.MaxBytes())
	for _, s := range t.Src {
		moved += float64(s.MaxBytes())
	}
	return c.NodeNs + c.NsPerByte*moved
}

// CopyNs estimates copying bytes from backend from to backend to.
func (m *CostModel) CopyNs(bytes int64, from, to *Backend) float64 {
	c := m.copyCost(from, to)
	return c.CopyNs + c.NsPerByte*float64(bytes)
}

// ExpertCopyBytes is what the cost model expects an expert copy of w
// (experts along dim 2) to move for the ids ids (i32, [n_used, n_tokens]
// at the dims' bounds): the share of experts a batch uses were each
// token's choice of n_used of the n_expert uniform, 1 - (1 -
// n_used/n_expert)^n_tokens, of the whole tensor. A token uses a quarter
// of 8 experts choosing 2; 32 tokens all but 0.01% of them.
func ExpertCopyBytes(w, ids *ir.Tensor) int64 {
	whole := w.MaxBytes()
	n, used := w.Ne[2].AtBounds(), ids.Ne[0].AtBounds()
	tokens := ids.Ne[1].AtBounds() * ids.Ne[2].AtBounds() * ids.Ne[3].AtBounds()
	if n <= 0 || used <= 0 || used >= n {
		return whole
	}
	share := 1 - math.Pow(1-float64(used)/float64(n), float64(tokens))
	return int64(math.Ceil(share * float64(whole)))
}

// copyBytes is what the cost model expects copying s in for its reader t
// to move: an expert copy's expected bytes when t is a mul_mat_id reading
// s, a weight in host memory, as its experts (ggml copies those expert by
// expert when t starts its split, as it does after a weight's copy),
// else all of s.
func copyBytes(g *ir.Graph, t, s *ir.Tensor) int64 {
	if t.Op == ops.MulMatID && t.Src[0] == s && ownsWeightBuffer(s) {
		if p := g.PlacedBackend(s); p >= 0 && g.Backends[p].Host {
			return ExpertCopyBytes(s, t.Src[2])
		}
	}
	return s.MaxBytes()
}

// home is the backend whose memory holds t's bytes: its placement's for
// a weight or state (or a view of one), else the backend it runs on.
func home(g *ir.Graph, t *ir.Tensor) int {
	if b := g.PlacedBackend(t); b >= 0 {
		return b
	}
	return t.Backend
}

func elems(t *ir.Tensor) int64 {
	n := int64(1)
	for _, e := range t.Ne {
		n *= e.AtBounds()
	}
	return n
}

// SplitEstimate is one split's estimated time.
type SplitEstimate struct {
	Backend   string
	Nodes     int
	ComputeNs float64
	CopyNs    float64 // its input copies
	CopyBytes int64
	SplitNs   float64
}

// Total is the split's whole estimate.
func (s SplitEstimate) Total() float64 { return s.ComputeNs + s.CopyNs + s.SplitNs }

// Estimate prices a split plan: every split pays SplitNs, its input
// copies and its nodes, one after the other. Pipeline overlap is not
// modelled, so the estimate is one evaluation's time end to end.
func (m *CostModel) Estimate(g *ir.Graph, backends []*Backend) []SplitEstimate {
	var out []SplitEstimate
	for _, s := range g.Splits {
		be := backends[s.Backend]
		e := SplitEstimate{Backend: be.Name, SplitNs: m.SplitNs}
		for _, in := range s.Inputs {
			n := in.Tensor.MaxBytes()
			if in.Experts != nil {
				n = ExpertCopyBytes(in.Tensor, in.Experts.IDs)
			}
			e.CopyBytes += n
			e.CopyNs += m.CopyNs(n, backends[home(g, in.Tensor)], be)
		}
		for i := s.First; i < s.End; i++ {
			if t := g.Nodes[i]; !t.Op.IsView() {
				e.Nodes++
				e.ComputeNs += m.NodeNs(t, be)
			}
		}
		out = append(out, e)
	}
	return out
}

// TotalNs sums split estimates.
func TotalNs(es []SplitEstimate) float64 {
	var t float64
	for _, e := range es {
		t += e.Total()
	}
	return t
}

// String names the model's source, for reports.
func (m *CostModel) String() string {
	if m.Source == "" {
		return "cost model"
	}
	return strings.TrimSpace(m.Source)
}
