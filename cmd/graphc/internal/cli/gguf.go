package cli

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"
	"strings"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/gguf/ggufarch"
	"github.com/graphc/graphc/internal/atomicfile"
	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/lm/chat"
	"github.com/graphc/graphc/tensor"
)

func cmdGGUF(e *env, args []string) error {
	if len(args) == 0 {
		return &usageError{"want a subcommand: new or info"}
	}
	switch args[0] {
	case "-h", "-help", "--help":
		// gguf new's help: the usage line shows both subcommands, and
		// only new has flags.
		return cmdGGUFNew(e, args[:1])
	case "new":
		return cmdGGUFNew(e, args[1:])
	case "info":
		return cmdGGUFInfo(e, args[1:])
	}
	return &usageError{fmt.Sprintf("unknown subcommand %q: want new or info", args[0])}
}

func cmdGGUFNew(e *env, args []string) error {
	fs := newFlags(e, "gguf new")
	fill := fs.String("fill", "ggml", "weight values: ggml (the conformance traces' rule) or random (normal, scaled like the ggml rule's 0.1)")
	seed := fs.Uint64("seed", 1, "seed of -fill random")
	typ := fs.String("type", "f32", "type of the weights that only mul_mat and get_rows read: f32, f16, bf16, q8_0 or q4_0, every such weight that type (other weights stay as declared); or a llama.cpp file type, "+mixNames()+", whose mix llama_model_quantize would write (-arch: the file it writes from the f32 file, byte for byte)")
	var arch ggufarch.Options
	fs.StringVar(&arch.Arch, "arch", "", "write a model file of this llama.cpp architecture, "+strings.Join(ggufarch.Archs(), ", ")+", instead of a model's weights: gguf new -arch llama [flags] out.gguf")
	archFlags(fs, &arch)
	chatTemplate := fs.String("chat-template", "", "-arch: tokenizer.chat_template, a template's name ("+strings.Join(chat.Names(), ", ")+") or else a file of its Jinja source")
	files, err := parseFlags(fs, args, 1, 2)
	if err != nil {
		return err
	}
	dt, mix, err := parseGGUFType(*typ)
	if err != nil {
		return err
	}
	if arch.Arch != "" {
		if len(files) != 1 {
			return &usageError{"gguf new -arch writes one file: want only the output file"}
		}
		if *fill != "ggml" && *fill != "random" {
			return &usageError{fmt.Sprintf("-fill %s: want ggml or random", *fill)}
		}
		arch.Type, arch.Seed = dt, *seed
		if arch.SlidingWindow == 0 {
			arch.SlidingWindow = ggufarch.Defaults(arch.Arch).SlidingWindow
		}
		if *chatTemplate != "" {
			if arch.ChatTemplate, err = readChatTemplate(*chatTemplate); err != nil {
				return err
			}
		}
		if mix.Known() {
			arch.Mix = mix.String()
		}
		if err := arch.Check(); err != nil {
			return &usageError{err.Error()}
		}
		if err := ggufarch.WriteFile(files[0], arch); err != nil {
			return &compiler.UserError{Msg: err.Error()}
		}
		fmt.Fprintf(e.stderr, "graphc: wrote %s\n", files[0])
		return nil
	}
	if len(files) != 2 {
		return &usageError{fmt.Sprintf("want 2 file argument(s), got %d", len(files))}
	}
	if *chatTemplate != "" {
		return &usageError{"-chat-template goes with -arch: a model's weights file has no tokenizer"}
	}
	if *fill != "ggml" && *fill != "random" {
		return &usageError{fmt.Sprintf("-fill %s: want ggml or random", *fill)}
	}
	if sameFile(files[0], files[1]) {
		return &usageError{fmt.Sprintf("%s is both the model and the output: not overwriting the model", files[1])}
	}
	src, err := readModel(files[0])
	if err != nil {
		return err
	}
	res, err := compiler.Compile(files[0], src, compiler.Config{})
	if err != nil {
		return err
	}
	w, err := weightsFile(res.Graph, dt, mix, *fill, *seed)
	if err != nil {
		return err
	}
	return writeGGUF(e, w, files[1])
}

// readChatTemplate returns the template -chat-template names: one of
// chat.Named's, or else the file s, which must parse.
func readChatTemplate(s string) (string, error) {
	if src, ok := chat.Named(s); ok {
		return src, nil
	}
	b, err := os.ReadFile(s)
	if err != nil {
		return "", &usageError{fmt.Sprintf("-chat-template %s: no template of that name (%s), and %v", s, strings.Join(chat.Names(), ", "), err)}
	}
	if _, err := chat.Parse(string(b), "", ""); err != nil {
		return "", &usageError{fmt.Sprintf("-chat-template %s: %v", s, err)}
	}
	return string(b), nil
}

// parseWeightType parses -type, the type gguf new stores weights as: one
// of those whose values it can quantize.
func parseWeightType(s string) (tensor.DType, error) {
	if dt, ok := tensor.ParseDType(s); ok && (dt == tensor.F32 || dt == tensor.F16 || dt == tensor.BF16 || dt == tensor.Q8_0 || dt == tensor.Q4_0) {
		return dt, nil
	}
	return 0, &usageError{fmt.Sprintf("-type %s: want f32, f16, bf16, q8_0 or q4_0", s)}
}

// noMix is parseGGUFType's file type when -type is not a mix.
const noMix = gguf.FileType(1 << 31)

// parseGGUFType parses gguf new's -type: one of parseWeightType's types,
// every weight the graph lets be quantized that type (noMix), or a llama.cpp
// file type graphc writes (ggufarch.MixWritable) whose mix they take.
func parseGGUFType(s string) (tensor.DType, gguf.FileType, error) {
	if dt, err := parseWeightType(s); err == nil {
		return dt, noMix, nil
	}
	if ft, ok := gguf.ParseFileType(s); ok && ggufarch.MixWritable(ft) {
		return tensor.F32, ft, nil
	}
	return 0, noMix, &usageError{fmt.Sprintf("-type %s: want f32, f16, bf16, q8_0, q4_0 or one of llama.cpp's mixes %s", s, mixNames())}
}

// mixNames lists the llama.cpp file types gguf new -type takes as mixes:
// ggufarch's, but those parseWeightType takes as types.
func mixNames() string {
	var names []string
	for _, n := range ggufarch.Mixes() {
		if _, err := parseWeightType(n); err != nil {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

// archFlags registers gguf new -arch's flags of a file's shape on o, with
// ggufarch's defaults.
func archFlags(fs *flag.FlagSet, o *ggufarch.Options) {
	def := ggufarch.Defaults("")
	fs.IntVar(&o.Layers, "layers", def.Layers, "-arch: transformer blocks (<arch>.block_count)")
	fs.IntVar(&o.Embd, "embd", def.Embd, "-arch: embedding width (<arch>.embedding_length)")
	fs.IntVar(&o.Heads, "heads", def.Heads, "-arch: attention heads")
	fs.IntVar(&o.KVHeads, "kv-heads", def.KVHeads, "-arch: key/value heads (grouped-query attention when fewer than -heads)")
	fs.IntVar(&o.FF, "ff", def.FF, "-arch: feed-forward width")
	fs.IntVar(&o.Vocab, "vocab", def.Vocab, "-arch: vocabulary size (at least 288: byte tokens and specials)")
	fs.IntVar(&o.Ctx, "ctx", def.Ctx, "-arch: context length the model is trained for (<arch>.context_length)")
	fs.IntVar(&o.SlidingWindow, "sliding-window", 0, "-arch gemma3: the sliding-window layers' window in positions (<arch>.attention.sliding_window; 0: Gemma 3 1B's 512); -arch phi3: phi3.attention.sliding_window (llama.cpp does not apply it to phi3)")
	fs.IntVar(&o.HeadDim, "head-dim", def.HeadDim, "-arch qwen3, qwen3moe, gemma3: the size of an attention head (<arch>.attention.key_length and value_length; 0: -embd / -heads; Qwen3-0.6B's is 128 at -embd 1024 -heads 16)")
	fs.Float64Var(&o.RopeTheta, "rope-theta", def.RopeTheta, "-arch: rope frequency base (0: 10000 for llama and phi3, 1000000 for qwen2, qwen3, qwen3moe and gemma3)")
	fs.Float64Var(&o.Eps, "eps", def.Eps, "-arch: RMS norm epsilon (0: 1e-5 for llama and phi3, 1e-6 for qwen2, qwen3, qwen3moe and gemma3)")
	fs.BoolVar(&o.Tied, "tied", def.Tied, "-arch: no output.weight; the output head is token_embd.weight (Llama 3.2, small Qwen2 and Qwen3, Gemma 3)")
	fs.BoolVar(&o.RopeFreqs, "rope-freqs", def.RopeFreqs, "-arch llama: write rope_freqs.weight, Llama 3.1/3.2's llama3 rope scaling factors (factor 32, low/high frequency factors 1 and 4, original context 8192, as llama.cpp's converter computes them)")
	fs.IntVar(&o.RopeOrigCtx, "rope-orig-ctx", def.RopeOrigCtx, "-arch llama -rope-freqs: the rope scaling's original context length (0: Llama 3's 8192; pairs of wavelength beyond it are slowed 32 times); -arch phi3: rope.scaling.original_context_length (0: -ctx), beyond which llama.cpp and graphc rope with the long factors")
	fs.BoolVar(&o.RopeFactors, "rope-factors", def.RopeFactors, "-arch phi3: write rope_factors_long.weight and rope_factors_short.weight, Phi-3's longrope scaling, and its attn_factor")
	fs.IntVar(&o.Experts, "experts", def.Experts, "-arch qwen3moe: experts per layer (<arch>.expert_count; 0: 8); -arch llama: a mixture of this many experts instead of the dense feed-forward, each -ff wide, as Mixtral's files (0: none)")
	fs.IntVar(&o.ExpertsUsed, "experts-used", def.ExpertsUsed, "-arch qwen3moe, or llama with -experts: experts each token uses (<arch>.expert_used_count; 0: 2)")
	fs.IntVar(&o.ExpertFF, "expert-ff", def.ExpertFF, "-arch qwen3moe: an expert's feed-forward width (<arch>.expert_feed_forward_length; 0: -ff / -experts-used)")
}

func writeGGUF(e *env, w *gguf.Writer, path string) error {
	if err := atomicfile.WriteFunc(path, 0o644, func(out io.Writer) error {
		_, err := w.WriteTo(out)
		return err
	}); err != nil {
		return &compiler.UserError{Msg: err.Error()}
	}
	fmt.Fprintf(e.stderr, "graphc: wrote %s\n", path)
	return nil
}

// weightsFile builds a GGUF file of g's weights. Weights read only by
// mul_mat (as the matrix) and get_rows (as the table) are stored as dt,
// quantized with ggml's reference rounding, or, where mix is a file type,
// as its mix picks by their names and shapes (gguf.Mix, for a model of one
// layer and head: a name llama.cpp does not quantize, one not ending in
// "weight", keeps its type); the others keep their type.
func weightsFile(g *ir.Graph, dt tensor.DType, mix gguf.FileType, fill string, seed uint64) (*gguf.Writer, error) {
	w := gguf.NewWriter()
	if err := w.AddMeta("general.architecture", "graphc"); err != nil {
		return nil, err
	}
	if err := w.AddMeta("general.name", strings.TrimSuffix(g.Source, ".g")); err != nil {
		return nil, err
	}
	mixed := map[*ir.Tensor]tensor.DType{}
	if mix.Known() {
		var cands []*ir.Tensor
		var mts []gguf.MixTensor
		for _, t := range g.Params {
			if t.Kind == ir.KindWeight && quantizable(g, t, tensor.F16) {
				cands = append(cands, t)
				ne := make([]int64, len(t.Ne))
				for i, e := range t.Ne {
					ne[i], _ = e.Constant()
				}
				mts = append(mts, gguf.MixTensor{Name: t.Name, Ne: ne, Type: t.Type})
			}
		}
		types, err := gguf.Mix(mix, gguf.MixModel{Arch: "graphc", Layers: 1, Heads: 1, KVHeads: 1}, mts, false)
		if err != nil {
			return nil, &compiler.UserError{Msg: err.Error()}
		}
		for i, t := range cands {
			mixed[t] = types[i]
		}
		if err := w.AddMeta("general.file_type", uint32(mix)); err != nil {
			return nil, err
		}
		if err := w.AddMeta("general.quantization_version", gguf.QuantizationVersion); err != nil {
			return nil, err
		}
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for k, t := range g.Params {
		if t.Kind != ir.KindWeight {
			continue
		}
		var ne [4]int
		for i, e := range t.Ne {
			n, _ := e.Constant()
			ne[i] = int(n)
		}
		vals := make([]float32, ne[0]*ne[1]*ne[2]*ne[3])
		for i := range vals {
			if fill == "ggml" {
				vals[i] = float32(tensor.GGMLFill(k)(i, [4]int{}))
			} else {
				vals[i] = float32(r.NormFloat64() * 0.1)
			}
		}
		typ := t.Type
		if m, ok := mixed[t]; ok {
			typ = m
		} else if !mix.Known() && quantizable(g, t, dt) {
			typ = dt
		}
		data := tensor.Quantize(nil, typ, vals)
		if err := w.AddTensor(t.Name, typ, []int64{int64(ne[0]), int64(ne[1]), int64(ne[2]), int64(ne[3])}[:dims(ne)], data); err != nil {
			return nil, &compiler.UserError{Msg: fmt.Sprintf("weight %s: %v", t.Name, err)}
		}
	}
	return w, nil
}

func dims(ne [4]int) int {
	n := 4
	for n > 1 && ne[n-1] == 1 {
		n--
	}
	return n
}

// quantizable reports whether weight t can be stored as dt: an f32 weight
// whose every reader takes dt (mul_mat as its matrix, get_rows as its
// table), with whole blocks.
func quantizable(g *ir.Graph, t *ir.Tensor, dt tensor.DType) bool {
	if t.Type != tensor.F32 || dt == tensor.F32 {
		return false
	}
	if n, _ := t.Ne[0].Constant(); n%int64(dt.BlockSize()) != 0 {
		return false
	}
	read := false
	for _, n := range g.Nodes {
		for i, s := range n.Src {
			if s != t {
				continue
			}
			read = true
			if i != 0 || (n.Op != ops.MulMat && n.Op != ops.MulMatID && n.Op != ops.GetRows) {
				return false
			}
		}
	}
	return read
}

func cmdGGUFInfo(e *env, args []string) error {
	fs := newFlags(e, "gguf info")
	files, err := parseFlags(fs, args, 1, 1)
	if err != nil {
		return err
	}
	m, err := gguf.Open(files[0])
	if err != nil {
		return &compiler.UserError{Msg: err.Error()}
	}
	defer m.Close()
	printGGUF(e.stdout, m.File, files[0])
	return nil
}

func printGGUF(w io.Writer, f *gguf.File, name string) {
	fmt.Fprintf(w, "%s: GGUF v%d, %d metadata keys, %d tensors, alignment %d, data at %d\n", name, f.Version, len(f.Meta), len(f.Tensors), f.Alignment, f.DataOffset)
	for _, kv := range f.Meta {
		v := fmt.Sprint(kv.Value)
		if len(v) > 80 {
			v = v[:77] + "..."
		}
		fmt.Fprintf(w, "  %-40s %-8s %s\n", kv.Key, kv.Type(), v)
	}
	var total int64
	counts := map[string]int{}
	for _, t := range f.Tensors {
		fmt.Fprintf(w, "  %-40s %-6s %-20s %10d bytes at %d\n", t.Name, t.Type, shape(t.Ne[:t.NDims]), t.Size, t.Offset)
		total += t.Size
		counts[t.Type.String()]++
	}
	var types []string
	for ty, n := range counts {
		types = append(types, fmt.Sprintf("%d %s", n, ty))
	}
	sort.Strings(types)
	fmt.Fprintf(w, "%d bytes of tensor data (%s)\n", total, strings.Join(types, ", "))
}

func shape(ne []int64) string {
	s := make([]string, len(ne))
	for i, n := range ne {
		s[i] = fmt.Sprint(n)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// sameFile reports whether a and b name one existing file.
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}
