package gguf

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/graphc/graphc/tensor"
)

// This file is llama.cpp's choice of each tensor's type when it quantizes
// a model to a file type (src/llama-quant.cpp: llama_tensor_get_type and
// what it calls), without an importance matrix, tensor type overrides or
// --pure unless asked, for dense models (no experts) of the architectures
// whose rules are the common ones (llama, qwen2 and the like; not falcon).
// It is a set of tables, one per concept: the file types and their mixes
// (fileTypes), the tensor categories by name (categories), the names never
// quantized (keepNames), the fallbacks for rows a type's blocks do not
// divide (fallbacks) and the architectures' sizes that change the mix
// (archs). Mix reads them; nothing else decides a type.

// FileType is llama.cpp's enum llama_ftype: the value of general.file_type
// and the name of a mix of tensor types, as llama-quantize takes it
// ("q4_K_m").
type FileType uint32

// The file types, as include/llama.h numbers them. Those Mix has a row for
// are FileTypes.
const (
	FileF32    FileType = 0
	FileF16    FileType = 1
	FileQ4_0   FileType = 2
	FileQ4_1   FileType = 3
	FileQ8_0   FileType = 7
	FileQ5_0   FileType = 8
	FileQ5_1   FileType = 9
	FileQ2_K   FileType = 10
	FileQ3_K_S FileType = 11
	FileQ3_K_M FileType = 12
	FileQ3_K_L FileType = 13
	FileQ4_K_S FileType = 14
	FileQ4_K_M FileType = 15
	FileQ5_K_S FileType = 16
	FileQ5_K_M FileType = 17
	FileQ6_K   FileType = 18
	FileIQ4_NL FileType = 25
	FileIQ3_S  FileType = 26
	FileIQ3_M  FileType = 27
	FileIQ4_XS FileType = 30
	FileBF16   FileType = 32
	FileTQ1_0  FileType = 36
	FileTQ2_0  FileType = 37
)

// QuantizationVersion is general.quantization_version as llama.cpp's
// quantizer writes it (GGML_QNT_VERSION).
const QuantizationVersion uint32 = 2

// category is llama.cpp's tensor_category: what a tensor is to the mix.
type category int

const (
	catOther category = iota
	catTokenEmbd
	catOutput
	catAttnQ
	catAttnK
	// attn_v, and attn_qkv and attn_kv_b (category_is_attn_v, which
	// llama.cpp tests before its branch of attn_qkv's own, so that
	// branch is never taken)
	catAttnV
	catAttnOutput
	catFFNUp
	catFFNGate
	catFFNDown
)

// categories is tensor_get_category: the first row whose name matches
// (exactly, or containing sub) gives the category.
var categories = []struct {
	exact, sub string
	cat        category
}{
	{exact: "output.weight", cat: catOutput},
	{exact: "token_embd.weight", cat: catTokenEmbd},
	{exact: "per_layer_token_embd.weight", cat: catTokenEmbd},
	{sub: "attn_qkv.weight", cat: catAttnV},
	{sub: "attn_kv_b.weight", cat: catAttnV},
	{sub: "attn_v.weight", cat: catAttnV},
	{sub: "attn_k.weight", cat: catAttnK},
	{sub: "attn_q.weight", cat: catAttnQ},
	{sub: "attn_output.weight", cat: catAttnOutput},
	{sub: "ffn_up", cat: catFFNUp},
	{sub: "ffn_gate", cat: catFFNGate},
	{sub: "ffn_down", cat: catFFNDown},
}

func categoryOf(name string) category {
	for _, c := range categories {
		if c.exact != "" && name == c.exact || c.sub != "" && strings.Contains(name, c.sub) {
			return c.cat
		}
	}
	return catOther
}

// keepNames are tensor_allows_quantization's names: a 2-D or larger
// tensor whose name ends in "weight" is quantized unless its name contains
// one of these (norms, expert gates, small or positional tables).
var keepNames = []string{
	"_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
	"per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight",
	"indexer.k_proj.weight", "indexer.q_proj.weight",
	"time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight", "time_mix_w2.weight",
	"time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight", "time_mix_a0.weight",
	"time_mix_a1.weight", "time_mix_a2.weight", "time_mix_g1.weight", "time_mix_g2.weight",
	"time_mix_decay_w1.weight", "time_mix_decay_w2.weight", "time_mix_lerp_fused.weight",
	"attn_rel_b.weight", ".position_embd", "sam.pos_embd", "sam.neck.", "sam.net_", ".rel_pos",
	".patch_embd", ".patch_merger", "a.rvq.codebook", "mm.a.code_embd",
}

// keepExact are the whole names tensor_allows_quantization keeps (the
// position embeddings and token types of BERT-like models).
var keepExact = []string{"position_embd.weight", "token_types.weight"}

// quantizable is tensor_allows_quantization with the default parameters.
func quantizable(name string, ne []int64) bool {
	if nDims(ne) < 2 || !strings.HasSuffix(name, "weight") || slices.Contains(keepExact, name) {
		return false
	}
	for _, s := range keepNames {
		if strings.Contains(name, s) {
			return false
		}
	}
	return true
}

// nDims is ggml_n_dims: the dimensions up to the last one above 1.
func nDims(ne []int64) int {
	n := 1
	for i, d := range ne {
		if d > 1 {
			n = i + 1
		}
	}
	return n
}

// fallbacks is tensor_type_fallback's table: the type a tensor gets when
// its rows (ne0) are not whole blocks of the type the mix chose. Where the
// fallback's blocks do not divide them either, or the type has no
// fallback (the 32-blocks: q8_0, q4_0, iq4_nl, …), the tensor is f16, as
// in the release internal/llamacpp's oracle carries (llama.cpp's newest
// source refuses a type without a fallback instead).
var fallbacks = map[tensor.DType]tensor.DType{
	tensor.IQ1_S: tensor.IQ4_NL, tensor.IQ1_M: tensor.IQ4_NL, tensor.IQ2_XXS: tensor.IQ4_NL,
	tensor.IQ2_XS: tensor.IQ4_NL, tensor.IQ2_S: tensor.IQ4_NL, tensor.IQ3_XXS: tensor.IQ4_NL,
	tensor.IQ3_S: tensor.IQ4_NL, tensor.IQ4_XS: tensor.IQ4_NL,
	tensor.Q2_0: tensor.Q4_0, tensor.Q2_K: tensor.Q4_0, tensor.Q3_K: tensor.Q4_0,
	tensor.TQ1_0: tensor.Q4_0, tensor.TQ2_0: tensor.Q4_0,
	tensor.Q4_K: tensor.Q5_0, tensor.Q5_K: tensor.Q5_1, tensor.Q6_K: tensor.Q8_0,
}

// fallback is tensor_type_fallback: t where ne0 is whole blocks of it.
func fallback(ne0 int64, t tensor.DType) tensor.DType {
	if ne0%int64(t.BlockSize()) == 0 {
		return t
	}
	if f, ok := fallbacks[t]; ok && ne0%int64(f.BlockSize()) == 0 {
		return f
	}
	return tensor.F16
}

// archs are the architectures whose size changes the mix: is70B is
// whether llama.cpp's load_hparams makes a model of these hyperparameters
// LLM_TYPE_70B, whose attn_v is given more bits. An architecture not
// listed is never 70B.
var archs = map[string]struct {
	is70B func(m MixModel) bool
}{
	"llama": {is70B: func(m MixModel) bool { return m.Layers == 80 && m.Heads != m.KVHeads }},
	"qwen2": {is70B: func(m MixModel) bool { return m.Layers == 80 }},
}

// eightExpertsAttnOutput are the file types whose attn_output is q5_K in a
// model of exactly 8 experts (Mixtral's), llama_tensor_get_type_impl's
// rule for them in place of the file type's own. Such models' attn_v and
// attn_k are q8_0 in every quantized file type, and iq3_m's ffn_down takes
// q4_K where use_more_bits holds too; expert counts other than 8 change
// nothing in the file types Mix knows.
var eightExpertsAttnOutput = []FileType{FileQ2_K, FileQ3_K_S, FileQ3_K_M, FileIQ4_NL, FileQ4_K_S, FileQ4_K_M, FileIQ3_S, FileIQ3_M, FileIQ4_XS}

// unsupportedArchs have rules of their own in llama_tensor_get_type that
// Mix does not implement.
var unsupportedArchs = []string{"falcon"}

// mixCtx is what a mix rule reads of one tensor: the type chosen so far
// (the file type's default), the tensor's position (i of n: the attn_v
// counter of llama.cpp's quantize state for attn_v, the layer for
// ffn_down) and the model's grouped-query factor n_head/n_head_kv.
type mixCtx struct {
	typ  tensor.DType
	i, n int
	gqa  int
}

// rule picks a tensor's type from its context.
type rule func(c mixCtx) tensor.DType

// to always picks t.
func to(t tensor.DType) rule { return func(mixCtx) tensor.DType { return t } }

// when picks t where cond holds, else keeps the type chosen so far.
func when(cond func(mixCtx) bool, t tensor.DType) rule {
	return func(c mixCtx) tensor.DType {
		if cond(c) {
			return t
		}
		return c.typ
	}
}

// pick picks a where cond holds, else b.
func pick(cond func(mixCtx) bool, a, b tensor.DType) rule {
	return func(c mixCtx) tensor.DType {
		if cond(c) {
			return a
		}
		return b
	}
}

// moreBits is llama.cpp's use_more_bits: the first and last eighth of the
// positions and every third one between.
func moreBits(c mixCtx) bool {
	return c.i < c.n/8 || c.i >= 7*c.n/8 || (c.i-c.n/8)%3 == 2
}

// before(k): the first k positions; beforeFrac(d): the first n/d.
func before(k int) func(mixCtx) bool     { return func(c mixCtx) bool { return c.i < k } }
func beforeFrac(d int) func(mixCtx) bool { return func(c mixCtx) bool { return c.i < c.n/d } }
func gqaAtLeast(g int) func(mixCtx) bool { return func(c mixCtx) bool { return c.gqa >= g } }

// fileTypes are the file types Mix knows: llama-quantize's name, the
// default type (llama_ftype_get_default_type) and the mix, the rules by
// category that change it (llama_tensor_get_type_impl's branches for the
// file type); a category without a rule keeps the default. The output
// head, and a tied token_embd, follow outputRule in every quantized file
// type. Those needing an importance matrix (iq1, iq2, iq3_xxs, iq3_xs,
// q2_K_s) are left out: llama_model_quantize refuses them without one.
var fileTypes = []struct {
	ft   FileType
	name string
	def  tensor.DType
	mix  map[category]rule
}{
	{FileF32, "f32", tensor.F32, nil},
	{FileF16, "f16", tensor.F16, nil},
	{FileBF16, "bf16", tensor.BF16, nil},
	{FileQ8_0, "q8_0", tensor.Q8_0, nil},
	{FileQ4_0, "q4_0", tensor.Q4_0, nil},
	{FileQ4_1, "q4_1", tensor.Q4_1, nil},
	{FileQ5_0, "q5_0", tensor.Q5_0, nil},
	{FileQ5_1, "q5_1", tensor.Q5_1, nil},
	{FileQ2_K, "q2_K", tensor.Q2_K, map[category]rule{
		catAttnV:      pick(gqaAtLeast(4), tensor.Q4_K, tensor.Q3_K),
		catFFNDown:    to(tensor.Q3_K),
		catAttnOutput: to(tensor.Q3_K),
	}},
	{FileQ3_K_S, "q3_K_s", tensor.Q3_K, nil},
	{FileQ3_K_M, "q3_K_m", tensor.Q3_K, map[category]rule{
		catAttnV:      pick(before(2), tensor.Q5_K, tensor.Q4_K),
		catFFNDown:    pick(beforeFrac(16), tensor.Q5_K, tensor.Q4_K),
		catAttnOutput: to(tensor.Q4_K),
	}},
	{FileQ3_K_L, "q3_K_l", tensor.Q3_K, map[category]rule{
		catAttnV:      to(tensor.Q5_K),
		catFFNDown:    to(tensor.Q5_K),
		catAttnOutput: to(tensor.Q5_K),
	}},
	{FileQ4_K_S, "q4_K_s", tensor.Q4_K, map[category]rule{
		catAttnV:   when(before(4), tensor.Q5_K),
		catFFNDown: when(beforeFrac(8), tensor.Q5_K),
	}},
	{FileQ4_K_M, "q4_K_m", tensor.Q4_K, map[category]rule{
		catAttnV:   when(moreBits, tensor.Q6_K),
		catFFNDown: when(moreBits, tensor.Q6_K),
	}},
	{FileQ5_K_S, "q5_K_s", tensor.Q5_K, nil},
	{FileQ5_K_M, "q5_K_m", tensor.Q5_K, map[category]rule{
		catAttnV:   when(moreBits, tensor.Q6_K),
		catFFNDown: when(moreBits, tensor.Q6_K),
	}},
	{FileQ6_K, "q6_K", tensor.Q6_K, nil},
	{FileIQ4_NL, "iq4_nl", tensor.IQ4_NL, map[category]rule{
		catAttnV:   when(gqaAtLeast(4), tensor.Q5_K),
		catFFNDown: when(beforeFrac(8), tensor.Q5_K),
	}},
	{FileIQ4_XS, "iq4_xs", tensor.IQ4_XS, map[category]rule{
		catAttnV:   when(gqaAtLeast(4), tensor.Q5_K),
		catFFNDown: when(beforeFrac(8), tensor.Q5_K),
	}},
	{FileIQ3_S, "iq3_s", tensor.IQ3_S, map[category]rule{
		catAttnV: when(gqaAtLeast(4), tensor.Q4_K),
	}},
	{FileIQ3_M, "iq3_m", tensor.IQ3_S, map[category]rule{
		catAttnV:      to(tensor.Q4_K),
		catFFNDown:    when(beforeFrac(8), tensor.Q4_K),
		catAttnOutput: to(tensor.Q4_K),
	}},
	{FileTQ1_0, "tq1_0", tensor.TQ1_0, map[category]rule{
		catTokenEmbd: to(tensor.Q4_K),
	}},
	{FileTQ2_0, "tq2_0", tensor.TQ2_0, map[category]rule{
		catTokenEmbd: to(tensor.Q4_K),
	}},
}

// outputRule is the output head's type (and a tied token_embd's) in every
// quantized file type: q8_0 where the default's blocks do not divide its
// rows or the default is q8_0, else q6_K.
func outputRule(def tensor.DType, ne0 int64) tensor.DType {
	if ne0%int64(def.BlockSize()) != 0 || def == tensor.Q8_0 {
		return tensor.Q8_0
	}
	return tensor.Q6_K
}

func fileTypeRow(ft FileType) (int, bool) {
	for i, r := range fileTypes {
		if r.ft == ft {
			return i, true
		}
	}
	return 0, false
}

// FileTypes lists the file types Mix knows, in the table's order.
func FileTypes() []FileType {
	out := make([]FileType, len(fileTypes))
	for i, r := range fileTypes {
		out[i] = r.ft
	}
	return out
}

// ParseFileType maps llama-quantize's name of a file type, in any case
// ("q4_K_m", "Q4_K_M"), to the file type, where Mix knows it.
func ParseFileType(s string) (FileType, bool) {
	for _, r := range fileTypes {
		if strings.EqualFold(r.name, s) {
			return r.ft, true
		}
	}
	return 0, false
}

// Known reports whether Mix knows ft.
func (ft FileType) Known() bool { _, ok := fileTypeRow(ft); return ok }

func (ft FileType) String() string {
	if i, ok := fileTypeRow(ft); ok {
		return fileTypes[i].name
	}
	return fmt.Sprintf("ftype(%d)", uint32(ft))
}

// Default is the type of ft's matrices where the mix keeps the default
// (llama_ftype_get_default_type); 0 (f32) for a file type Mix does not
// know.
func (ft FileType) Default() tensor.DType {
	if i, ok := fileTypeRow(ft); ok {
		return fileTypes[i].def
	}
	return 0
}

// MixModel is what the mix reads of a model besides its tensors:
// general.architecture and the hyperparameters llama.cpp's quantizer
// loads (<arch>.block_count, attention.head_count and head_count_kv,
// expert_count).
type MixModel struct {
	Arch                   string
	Layers, Heads, KVHeads int
	Experts                int
}

// MixModelOf reads f's MixModel from its metadata; head_count_kv defaults
// to head_count, as llama.cpp's loader does.
func MixModelOf(f *File) (MixModel, error) {
	arch, ok := f.MetaString("general.architecture")
	if !ok {
		return MixModel{}, fmt.Errorf("gguf: no general.architecture")
	}
	m := MixModel{Arch: arch}
	get := func(key string, into *int, required bool) error {
		v, ok := f.MetaInt(arch + "." + key)
		if !ok && required {
			return fmt.Errorf("gguf: no %s.%s", arch, key)
		}
		if ok {
			*into = int(v)
		}
		return nil
	}
	if err := get("block_count", &m.Layers, true); err != nil {
		return m, err
	}
	if err := get("attention.head_count", &m.Heads, true); err != nil {
		return m, err
	}
	m.KVHeads = m.Heads
	if err := get("attention.head_count_kv", &m.KVHeads, false); err != nil {
		return m, err
	}
	return m, get("expert_count", &m.Experts, false)
}

// MixTensor is a tensor as the mix sees it: its name, shape (ggml order)
// and type in the file being quantized.
type MixTensor struct {
	Name string
	Ne   []int64
	Type tensor.DType
}

// LoaderCompare orders tensor names as llama.cpp's model loader's
// weights_map does (weight_name_comparer), the order its quantizer visits
// and writes tensors in: tensors outside the blocks first, then block by
// block (blk.N. by N), by name within each. It returns -1, 0 or +1, for
// slices.SortFunc.
func LoaderCompare(a, b string) int {
	if la, lb := blockOf(a), blockOf(b); la != lb {
		return cmp.Compare(la, lb)
	}
	return strings.Compare(a, b)
}

// blockOf is N of a name starting blk.N., else -1 (sscanf's "blk.%d.").
func blockOf(name string) int {
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return -1
	}
	n, digits, neg := 0, 0, false
	if strings.HasPrefix(rest, "-") || strings.HasPrefix(rest, "+") {
		neg, rest = rest[0] == '-', rest[1:]
	}
	for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
		n = n*10 + int(rest[digits]-'0')
		digits++
	}
	if digits == 0 {
		return -1
	}
	if neg {
		n = -n
	}
	return n
}

// Mix returns the type llama_model_quantize gives each of ts (in ts's
// order) when it quantizes a model m to file type ft with its default
// parameters; pure is llama-quantize --pure (every quantizable tensor the
// default type, but for the fallbacks). A tensor Mix does not quantize
// keeps its type.
func Mix(ft FileType, m MixModel, ts []MixTensor, pure bool) ([]tensor.DType, error) {
	row, ok := fileTypeRow(ft)
	if !ok {
		return nil, fmt.Errorf("gguf: file type %s has no mix here", ft)
	}
	if slices.Contains(unsupportedArchs, m.Arch) {
		return nil, fmt.Errorf("gguf: llama.cpp's mix for %s has rules of its own, not implemented", m.Arch)
	}
	if m.Layers < 1 || m.Heads < 1 || m.KVHeads < 1 {
		return nil, fmt.Errorf("gguf: a model of %d layers, %d heads and %d key/value heads", m.Layers, m.Heads, m.KVHeads)
	}
	def, mix := fileTypes[row].def, fileTypes[row].mix
	is70B := false
	if a, ok := archs[m.Arch]; ok {
		is70B = a.is70B(m)
	}

	// llama.cpp's quantize state: attn_v's count and counter; the
	// ffn_down counter stands for the layer, out of n_layer.
	order := make([]int, len(ts))
	tied := true
	nAttnV := 0
	for i, t := range ts {
		order[i] = i
		switch categoryOf(t.Name) {
		case catOutput:
			tied = false
		case catAttnV:
			nAttnV++
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return LoaderCompare(ts[a].Name, ts[b].Name) })
	iAttnV, iFFNDown := 0, 0

	out := make([]tensor.DType, len(ts))
	for _, k := range order {
		t := ts[k]
		out[k] = t.Type
		if !quantizable(t.Name, t.Ne) {
			continue
		}
		typ := def
		if !def.Quantized() {
			out[k] = typ
			continue
		}
		if !pure {
			cat := categoryOf(t.Name)
			c := mixCtx{typ: def, gqa: m.Heads / m.KVHeads}
			switch {
			case cat == catOutput || cat == catTokenEmbd && tied:
				typ = outputRule(def, t.Ne[0])
			case cat == catAttnV:
				c.i, c.n = iAttnV, nAttnV
				if r := mix[cat]; r != nil {
					typ = r(c)
				}
				if is70B && (typ == tensor.Q3_K || typ == tensor.Q4_K) {
					typ = tensor.Q5_K
				}
				if m.Experts == 8 {
					typ = tensor.Q8_0
				}
				iAttnV++
			case cat == catAttnK && m.Experts == 8:
				typ = tensor.Q8_0
			case cat == catAttnOutput && m.Experts == 8:
				if slices.Contains(eightExpertsAttnOutput, ft) {
					typ = tensor.Q5_K
				}
			case cat == catFFNDown:
				c.i, c.n = iFFNDown, m.Layers
				if r := mix[cat]; r != nil {
					typ = r(c)
				}
				if ft == FileIQ3_M && m.Experts == 8 && moreBits(c) {
					typ = tensor.Q4_K
				}
				iFFNDown++
			default:
				if r := mix[cat]; r != nil {
					typ = r(c)
				}
			}
		}
		out[k] = fallback(t.Ne[0], typ)
	}
	return out, nil
}

// QuantizedMeta is the metadata llama.cpp's quantizer writes for a file
// of metadata meta quantized to ft: meta as it is, but that
// general.quantization_version (u32) and then general.file_type (u32) are
// set, each moved to the end (gguf_set_val_u32 removes a key before
// appending it), and the split keys are removed.
func QuantizedMeta(meta []KV, ft FileType) []KV {
	drop := []string{"general.quantization_version", "general.file_type", "split.no", "split.count", "split.tensors.count"}
	out := make([]KV, 0, len(meta)+2)
	for _, kv := range meta {
		if !slices.Contains(drop, kv.Key) {
			out = append(out, kv)
		}
	}
	return append(out,
		KV{Key: "general.quantization_version", Value: QuantizationVersion},
		KV{Key: "general.file_type", Value: uint32(ft)})
}
