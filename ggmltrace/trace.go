package ggmltrace

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Trace is one recorded ggml run: the graph as ggml built it, the target
// (backends with their answers to supports_op, supports_buft and
// offload_op), the scheduler's decisions, and how inputs and weights were
// filled and what came out. Field names follow the JSON (see
// testdata/README.md); the graph order of Leafs and Nodes is ggml's.
type Trace struct {
	Path string `json:"-"` // file it was loaded from, if any

	Case        string         `json:"case"`
	Note        string         `json:"note"`
	GGMLCommit  string         `json:"ggml_commit"`
	CausesBuild bool           `json:"causes_build"`
	MaxCopies   int            `json:"GGML_SCHED_MAX_COPIES"`
	HParams     map[string]any `json:"hparams"`
	Sched       SchedParams    `json:"sched_params"`
	Backends    []Backend      `json:"backends"`
	Buffers     []WeightBuffer `json:"weight_buffers"`

	// How the preallocated tensors and the inputs were filled: FillRule
	// and InputRule are prose; Params gives each weight's and state's
	// init_index, the k of the fill rule.
	FillRule  string  `json:"fill_rule"`
	InputRule string  `json:"input_rule"`
	Params    []Param `json:"params"`

	Leafs  []*Tensor `json:"leafs"`
	Nodes  []*Tensor `json:"nodes"`
	Result Result    `json:"result"`
	Output Output    `json:"output"`

	SchedDebugLog string `json:"sched_debug_log"` // GGML_SCHED_DEBUG=2 report
}

// SchedParams are the arguments ggml_backend_sched_new got.
type SchedParams struct {
	GraphSize int    `json:"graph_size"`
	Parallel  bool   `json:"parallel"` // n_copies = GGML_SCHED_MAX_COPIES
	OpOffload bool   `json:"op_offload"`
	Bufts     string `json:"bufts"`
}

// Backend is one backend of the target, in priority order.
type Backend struct {
	Priority      int             `json:"priority"`
	Name          string          `json:"name"`
	Kind          string          `json:"kind"`
	Device        string          `json:"device"`
	DeviceType    string          `json:"device_type"` // CPU, GPU, ACCEL
	Buft          string          `json:"buft"`
	BuftIsHost    bool            `json:"buft_is_host"`
	BuftAlignment int64           `json:"buft_alignment"`
	SupportsBuft  map[string]bool `json:"supports_buft"`
}

// WeightBuffer is a preallocated buffer: weights, or ("any") KV cache.
type WeightBuffer struct {
	Buft    string   `json:"buft"`
	Usage   string   `json:"usage"`
	Size    int64    `json:"size"`
	Tensors []string `json:"tensors"`
}

// Param gives a weight's or state's fill index.
type Param struct {
	InitIndex int    `json:"init_index"`
	Name      string `json:"name"`
	Kind      string `json:"kind"` // weights, kv_cache, …
}

// Tensor is a leaf or node as ggml had it, with the scheduler's answer.
type Tensor struct {
	Index    int       `json:"index"`
	Name     string    `json:"name"`
	Op       string    `json:"op"`      // GGML_OP_* name without prefix
	OpDesc   string    `json:"op_desc"` // UNARY ops: the unary op's name
	Type     string    `json:"type"`
	Ne       [4]int64  `json:"ne"`
	Nb       [4]int64  `json:"nb"`
	NBytes   int64     `json:"nbytes"`
	ViewSrc  *string   `json:"view_src"`
	ViewOffs int64     `json:"view_offs"`
	Src      []*string `json:"src"`             // before scheduling
	SrcAfter []*string `json:"src_after_sched"` // nodes whose sources were replaced by copies
	Flags    []string  `json:"flags"`           // input, output, param, compute
	OpParams []int32   `json:"op_params_i32"`
	Prealloc *Prealloc `json:"prealloc"`
	// UserOverride is the backend ggml_backend_sched_set_tensor_backend
	// forced: a backend name, or an object with a "name" or "backend".
	UserOverride json.RawMessage `json:"user_override"`

	Backend   string `json:"backend"`
	BackendID int    `json:"backend_id"`
	Cause     string `json:"cause"`
	Alloc     *Alloc `json:"alloc"`

	// Nodes only: the backends' answers, by backend name.
	SupportsOp map[string]bool `json:"supports_op"`
	OffloadOp  map[string]bool `json:"offload_op"`
	IsViewOp   bool            `json:"is_view_op"`
	// IDs are, for a MUL_MAT_ID, the experts its ids operand chose in the
	// recorded evaluation, token by token (ne[1]), slot by slot (ne[0]).
	IDs []int32 `json:"ids_values"`
}

// Prealloc says which preallocated buffer a tensor lives in.
type Prealloc struct {
	Buft   string `json:"buft"`
	Usage  string `json:"usage"` // weights or any
	IsHost bool   `json:"is_host"`
}

// Alloc is where ggml-alloc (or the weight loader) put a tensor.
type Alloc struct {
	Buft   string `json:"buft"`
	Usage  string `json:"usage"` // weights, any, compute
	Offset int64  `json:"offset"`
}

// HasFlag reports whether the tensor had ggml flag f (input, output, …).
func (t *Tensor) HasFlag(f string) bool {
	for _, x := range t.Flags {
		if x == f {
			return true
		}
	}
	return false
}

// Override is the backend the user forced, "" if none.
func (t *Tensor) Override() (string, error) {
	raw := t.UserOverride
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var o struct{ Name, Backend string }
	if err := json.Unmarshal(raw, &o); err != nil {
		return "", fmt.Errorf("%s: user_override %s: %v", t.Name, raw, err)
	}
	if o.Backend != "" {
		return o.Backend, nil
	}
	if o.Name != "" {
		return o.Name, nil
	}
	return "", fmt.Errorf("%s: user_override %s names no backend", t.Name, raw)
}

// Result is the scheduler's plan as ggml made it.
type Result struct {
	NSplits            int     `json:"n_splits"`
	NCopies            int     `json:"n_copies"`
	CurCopy            int     `json:"cur_copy"`
	Splits             []Split `json:"splits"`
	NInputsTotal       int     `json:"n_inputs_total"`
	BytesCopiedPerEval int64   `json:"bytes_copied_per_eval"`
	// BytesMovedPerEval is what the recorded eval copied: the inputs'
	// BytesMoved summed. Traces older than the MoE ones leave it out (0):
	// every input moved all its bytes there.
	BytesMovedPerEval int64 `json:"bytes_moved_per_eval"`
	// Wire is what the recorder counted on the RPC connection in the
	// recorded evaluation (moe_* traces; nil in older ones).
	Wire              *Wire            `json:"bytes_on_wire"`
	GraphInputsPP     json.RawMessage  `json:"graph_inputs_pp"`
	ComputeBufferSize map[string]int64 `json:"compute_buffer_size"`
	SchedGraph        SchedGraph       `json:"sched_graph"`
}

// Wire is the RPC device's traffic in one evaluation: the data of every
// tensor set on it and got from it. FromDevice includes IDsRead, the ids
// ggml read back to choose which experts to copy.
type Wire struct {
	ToDevice   int64 `json:"to_device"`
	FromDevice int64 `json:"from_device"`
	IDsRead    int64 `json:"ids_read"`
}

// Split is one of ggml's splits: nodes [IStart, IEnd) on Backend.
type Split struct {
	ID        int          `json:"id"`
	Backend   string       `json:"backend"`
	BackendID int          `json:"backend_id"`
	IStart    int          `json:"i_start"`
	IEnd      int          `json:"i_end"`
	NInputs   int          `json:"n_inputs"`
	Inputs    []SplitInput `json:"inputs"`
}

// SplitInput is a tensor a split copies in, with its copies.
type SplitInput struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
	// BytesMoved is what the recorded eval copied. It is less than Bytes
	// only for an expert weight in host memory that the split's first node,
	// a MUL_MAT_ID, reads: ggml copies just the experts the ids (IDsFrom)
	// chose, consecutive ones together (ExpertRanges, first and last
	// expert), each range but one ending at the last expert with
	// min(expert size, 512) bytes more. Absent (0) in older traces.
	BytesMoved   int64      `json:"bytes_moved"`
	ExpertRanges [][2]int64 `json:"expert_ranges"`
	IDsFrom      string     `json:"ids_from"`
	FromBackend  string     `json:"from_backend"`
	IsLeaf       bool       `json:"is_leaf"`
	IsWeight     bool       `json:"is_weight"`
	IsGraphInput bool       `json:"is_graph_input"`
	Copies       []Copy     `json:"copies"`
}

// Copy is one copy tensor of a split input.
type Copy struct {
	Name        string `json:"name"`
	Cause       string `json:"cause"`
	AllocBuft   string `json:"alloc_buft"`
	AllocOffset int64  `json:"alloc_offset"`
}

// SchedGraph is ggml's internal graph copy as ggml-alloc placed it: split
// inputs' dependencies and copies interleaved with the nodes.
type SchedGraph struct {
	NNodes int              `json:"n_nodes"`
	NLeafs int              `json:"n_leafs"`
	Nodes  []SchedGraphNode `json:"nodes"`
	Leafs  []SchedGraphNode `json:"leafs"`
}

// SchedGraphNode is one entry of SchedGraph.
type SchedGraphNode struct {
	Name      string `json:"name"`
	Op        string `json:"op"`
	BackendID int    `json:"backend_id"`
	Buft      string `json:"buft"`
	Offset    int64  `json:"offset"`
}

// Output is the graph output ggml computed, for checking a run.
type Output struct {
	Tensor       string    `json:"tensor"`
	Ne           [4]int64  `json:"ne"`
	First16      []float64 `json:"first16"`
	Sum          float64   `json:"sum"`
	SumAbs       float64   `json:"sum_abs"`
	WeightedSum  float64   `json:"weighted_sum_i_mod13_plus1"`
	ChecksumRule string    `json:"checksum_rule"`
	Values       []float64 `json:"values"`
}

// Load reads a trace file.
func Load(path string) (*Trace, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	tr, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	tr.Path = path
	return tr, nil
}

// Parse decodes a trace from its JSON.
func Parse(data []byte) (*Trace, error) {
	tr := new(Trace)
	if err := json.Unmarshal(data, tr); err != nil {
		return nil, err
	}
	if len(tr.Backends) == 0 {
		return nil, fmt.Errorf("trace has no backends")
	}
	if err := tr.validate(); err != nil {
		return nil, err
	}
	return tr, nil
}

// validate rejects what JSON decoding lets through and the importer
// cannot take: a null leaf or node, one without its name, op, type, shape
// or strides, or at another index than its place, and a source after a
// null one (ggml's src[] is filled from the front, and the importer reads
// the sources in order).
func (tr *Trace) validate() error {
	for _, list := range []struct {
		kind    string
		tensors []*Tensor
	}{{"leafs", tr.Leafs}, {"nodes", tr.Nodes}} {
		for i, t := range list.tensors {
			bad := func(format string, a ...any) error {
				return fmt.Errorf("%s[%d]: %s", list.kind, i, fmt.Sprintf(format, a...))
			}
			switch {
			case t == nil:
				return bad("null")
			case t.Name == "":
				return bad("no name")
			case t.Op == "":
				return bad("%s: no op", t.Name)
			case t.Type == "":
				return bad("%s: no type", t.Name)
			case t.Ne == [4]int64{}:
				return bad("%s: no ne", t.Name)
			case t.Nb == [4]int64{}:
				return bad("%s: no nb", t.Name)
			case t.Index != i:
				return bad("%s: index %d", t.Name, t.Index)
			}
			for _, src := range [][]*string{t.Src, t.SrcAfter} {
				for k := 1; k < len(src); k++ {
					if src[k-1] == nil && src[k] != nil {
						return bad("%s: source %d is %s after a null one", t.Name, k, *src[k])
					}
				}
			}
		}
	}
	return nil
}

// ParamOrder lists the weights and states by fill index (init_index).
func (tr *Trace) ParamOrder() []string {
	names := make([]string, len(tr.Params))
	for i, p := range tr.Params {
		names[i] = p.Name
	}
	// The recorded list is in init_index order; keep it robust anyway.
	byIndex := map[int]string{}
	ok := true
	for _, p := range tr.Params {
		if p.InitIndex < 0 || p.InitIndex >= len(tr.Params) || byIndex[p.InitIndex] != "" {
			ok = false
			break
		}
		byIndex[p.InitIndex] = p.Name
	}
	if ok {
		for i := range names {
			names[i] = byIndex[i]
		}
	}
	return names
}

// GraphInput is a graph input ggml gave pipeline versions (n_copies > 1):
// the backend they live on and the versions' names by copy index, the
// input itself at index cur_copy.
type GraphInput struct {
	Name      string   `json:"name"`
	BackendID int      `json:"backend_id"`
	Copies    []string `json:"copies"`
}

// GraphInputs lists the graph inputs ggml gave pipeline versions, in the
// order it registered them (sched->graph_inputs: first read in node
// order). The field is either a list of such objects or, in older traces,
// of bare names (BackendID -1, no Copies).
func (r *Result) GraphInputs() ([]GraphInput, error) {
	if len(r.GraphInputsPP) == 0 || string(r.GraphInputsPP) == "null" {
		return nil, nil
	}
	var names []string
	if json.Unmarshal(r.GraphInputsPP, &names) == nil {
		ins := make([]GraphInput, len(names))
		for i, n := range names {
			ins[i] = GraphInput{Name: n, BackendID: -1}
		}
		return ins, nil
	}
	// A fresh slice: a failed decode above may have filled part of names.
	var ins []GraphInput
	if err := json.Unmarshal(r.GraphInputsPP, &ins); err != nil {
		return nil, fmt.Errorf("graph_inputs_pp: %v", err)
	}
	for i, in := range ins {
		if in.Name == "" {
			return nil, fmt.Errorf("graph_inputs_pp[%d]: no name", i)
		}
	}
	return ins, nil
}

func (tr *Trace) source() string {
	if tr.Path != "" {
		return filepath.Base(tr.Path)
	}
	return tr.Case + ".json"
}

// BytesMoved is what ggml copied between backends in the recorded
// evaluation: bytes_moved_per_eval where the trace records it, else (older
// traces, where every split input moved whole) bytes_copied_per_eval.
func (r *Result) BytesMoved() int64 {
	if r.BytesMovedPerEval != 0 {
		return r.BytesMovedPerEval
	}
	return r.BytesCopiedPerEval
}
