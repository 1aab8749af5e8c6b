// Package llamacpp runs llama.cpp as an oracle for graphc's tests: a small
// C program, compiled by the machine's C compiler against llama.cpp's
// prebuilt CPU libraries, tokenizes a prompt and evaluates a model, and
// prints what llama.cpp computed as JSON for the tests to compare with
// graphc's tokenizer and generated models.
//
// The libraries come from the npm package @node-llama-cpp/linux-x64
// (llama.cpp's libllama and libggml with CPU backends); nothing of
// llama.cpp is kept in this repository. Tests skip, saying how to get the
// package, where it is absent.
package llamacpp

import (
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/graphc/graphc/tensor"
)

//go:embed csrc/harness.c
var harnessSource []byte

// LibsEnv names the directory holding libllama*.so and libggml*.so.
const LibsEnv = "GRAPHC_LLAMACPP_LIBS"

// Package is the npm package the libraries come from.
const Package = "@node-llama-cpp/linux-x64@3.22.1"

// ErrNoLibs says llama.cpp's libraries are not installed; tests skip on it.
var ErrNoLibs = errors.New("llama.cpp's libraries not found")

// Howto says how to install the libraries where Harness looks for them.
func Howto() string {
	return fmt.Sprintf("set %s to the directory with libllama*.so, or install them where it looks by default:\n"+
		"\tmkdir -p %[2]s && cd %[2]s && npm pack %[3]s && tar xzf node-llama-cpp-linux-x64-*.tgz",
		LibsEnv, defaultCache(), Package)
}

func defaultCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "graphc", "node-llama-cpp")
}

// LibDir finds the directory of llama.cpp's libraries: $GRAPHC_LLAMACPP_LIBS,
// else the npm package unpacked in the user's cache directory.
func LibDir() (string, error) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return "", fmt.Errorf("%w: the prebuilt libraries are for linux/amd64, this is %s/%s", ErrNoLibs, runtime.GOOS, runtime.GOARCH)
	}
	dir := os.Getenv(LibsEnv)
	if dir == "" {
		dir = filepath.Join(defaultCache(), "package", "bins", "linux-x64")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "libllama.*so")); len(m) == 0 {
		return "", fmt.Errorf("%w in %s; %s", ErrNoLibs, dir, Howto())
	}
	return dir, nil
}

// Harness is the compiled C program.
type Harness struct {
	bin, libDir string
	dir         string // Build's directory, where Variant's directories go
}

// OracleVariants are the llama.cpp CPU builds the oracle tests compare
// with, where the processor can run them: each sums products its own way
// (haswell: AVX2, and llamafile's tinyBLAS for f32/f16/q8_0/q4_0
// matrices; skylakex: AVX-512; icelake: AVX-512 VNNI and VBMI; zen4: the
// same with AVX-512 BF16; sapphirerapids: AMX tiles for q4_0 and q8_0).
var OracleVariants = []string{"haswell", "skylakex", "icelake", "zen4", "sapphirerapids"}

// Variants returns the names of OracleVariants this processor can run
// (ggml_backend_score of the build is above 0), in OracleVariants' order,
// and each variant's score.
func (h *Harness) Variants() ([]string, map[string]int, error) {
	out, err := exec.Command(h.bin, "-scores", h.libDir).Output()
	if err != nil {
		return nil, nil, fmt.Errorf("llama.cpp harness -scores %s: %v", h.libDir, err)
	}
	scores := map[string]int{}
	if err := json.Unmarshal(out, &scores); err != nil {
		return nil, nil, fmt.Errorf("llama.cpp harness -scores: %v: %s", err, out)
	}
	var names []string
	for _, v := range OracleVariants {
		if scores[v] > 0 {
			names = append(names, v)
		}
	}
	return names, scores, nil
}

// variantDir returns a directory holding only the named CPU build, for the
// harness's -libdir: ggml loads the best build it finds there.
func (h *Harness) variantDir(name string) (string, error) {
	lib := filepath.Join(h.libDir, "libggml-cpu-"+name+".so")
	if _, err := os.Stat(lib); err != nil {
		return "", fmt.Errorf("llama.cpp's CPU build %q: %w", name, err)
	}
	dir := filepath.Join(h.dir, "variant-"+name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	link := filepath.Join(dir, filepath.Base(lib))
	if _, err := os.Lstat(link); err != nil {
		if err := os.Symlink(lib, link); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// VulkanPackage is the npm package of llama.cpp's Vulkan build.
const VulkanPackage = "@node-llama-cpp/linux-x64-vulkan@3.22.1"

// VulkanLibDir finds llama.cpp's Vulkan build: $GRAPHC_GGML_PATH where it
// holds libllama (the directory runtime/ggml loads ggml from), else the npm
// package unpacked in the user's cache directory.
func VulkanLibDir() (string, error) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return "", fmt.Errorf("%w: the prebuilt libraries are for linux/amd64, this is %s/%s", ErrNoLibs, runtime.GOOS, runtime.GOARCH)
	}
	cache := filepath.Join(filepath.Dir(defaultCache()), "node-llama-cpp-vulkan")
	dirs := []string{filepath.Join(cache, "package", "bins", "linux-x64-vulkan")}
	if d := os.Getenv("GRAPHC_GGML_PATH"); d != "" {
		dirs = append([]string{d}, dirs...)
	}
	for _, dir := range dirs {
		if m, _ := filepath.Glob(filepath.Join(dir, "libllama.*so")); len(m) > 0 {
			if m, _ := filepath.Glob(filepath.Join(dir, "libggml-vulkan.so")); len(m) > 0 {
				return dir, nil
			}
		}
	}
	return "", fmt.Errorf("%w: no Vulkan build in %s; install one where it looks by default:\n\tmkdir -p %s && cd %[3]s && npm pack %s && tar xzf node-llama-cpp-linux-x64-vulkan-*.tgz",
		ErrNoLibs, strings.Join(dirs, " or "), cache, VulkanPackage)
}

// Build compiles the harness into dir against the libraries in LibDir.
func Build(dir string) (*Harness, error) {
	libDir, err := LibDir()
	if err != nil {
		return nil, err
	}
	return BuildWith(dir, libDir)
}

// BuildWith compiles the harness into dir against the llama.cpp build in
// libDir (LibDir's or VulkanLibDir's).
func BuildWith(dir, libDir string) (*Harness, error) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		return nil, fmt.Errorf("%w: no C compiler %q to build the harness with (set CC)", ErrNoLibs, cc)
	}
	src := filepath.Join(dir, "harness.c")
	if err := os.WriteFile(src, harnessSource, 0o644); err != nil {
		return nil, err
	}
	args := []string{"-O1", "-o", filepath.Join(dir, "harness"), src, "-L" + libDir}
	for _, pattern := range []string{"libllama.*so", "libggml.*so", "libggml-base*.so"} {
		m, _ := filepath.Glob(filepath.Join(libDir, pattern))
		if len(m) == 0 {
			return nil, fmt.Errorf("%w: %s has no %s; %s", ErrNoLibs, libDir, pattern, Howto())
		}
		// -l: links the file by its name, versioned or not.
		args = append(args, "-l:"+filepath.Base(m[0]))
	}
	args = append(args, "-Wl,-rpath,"+libDir, "-ldl")
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the llama.cpp harness: %v\n%s", err, out)
	}
	return &Harness{bin: filepath.Join(dir, "harness"), libDir: libDir, dir: dir}, nil
}

// Request is what to ask llama.cpp.
type Request struct {
	// Model is a GGUF file llama.cpp can load, tensors and all.
	Model string
	// Prompt is tokenized with and without add_special and parse_special.
	Prompt string
	// Tokens are evaluated as one batch, then Steps greedy decode steps.
	Tokens []int32
	Steps  int
	// Follow, when set, are the tokens the steps decode (one a step)
	// instead of llama.cpp's greedy picks, which Result.Generated still
	// reports: two runs that would diverge evaluate the same tokens.
	Follow []int32
	// Variant names the one CPU build of llama.cpp to load (one of
	// Variants); "" loads the best this processor runs.
	Variant string
	// Dump, when set, asks for every contiguous f32 tensor each
	// evaluation computes, by ggml's name (Result.Tensors).
	Dump bool
	// AllLogits asks for every prompt token's logits (Result.PromptLogits);
	// otherwise llama.cpp computes only the last token's, selecting that
	// row before its last layer's FFN.
	AllLogits bool
	// GPULayers, when positive, puts the last GPULayers layers on the GPU
	// (llama.cpp's -ngl; 0 leaves the library's default), for a harness
	// built against a GPU build.
	GPULayers int
	// FlashAttn turns llama.cpp's flash attention on (-fa on) instead of
	// off; Result.FlashAttnSet says whether the harness could.
	FlashAttn bool
	// CacheK and CacheV, when set, are the KV cache's types (llama.cpp's
	// -ctk and -ctv; zero, f32, keeps f16). A quantized V needs FlashAttn.
	CacheK, CacheV tensor.DType
}

// Result is what llama.cpp answered.
type Result struct {
	NVocab int `json:"n_vocab"`
	// The prompt's ids from llama_tokenize by its add_special and
	// parse_special flags.
	IDs         []int32 `json:"ids"`
	IDsAdd      []int32 `json:"ids_add"`
	IDsParse    []int32 `json:"ids_parse"`
	IDsAddParse []int32 `json:"ids_add_parse"`
	// Logits are the last prompt token's, then each decode step's: Steps+1
	// rows of NVocab.
	Logits [][]float32 `json:"logits"`
	// PromptLogits are every prompt token's, when Request.AllLogits asked.
	PromptLogits [][]float32 `json:"prompt_logits"`
	// Generated are the greedy tokens, each the argmax of the row before.
	Generated []int32 `json:"generated"`
	// FlashAttnSet says the harness could set flash attention as the
	// request asked, off unless Request.FlashAttn (it knows where the flag
	// is only in the release Package carries); otherwise the library's
	// default (auto: on for the CPU, whose attention then sums in f16)
	// stayed.
	FlashAttnSet bool `json:"flash_attn_set"`
	// Tensors are each evaluation's f32 tensors by name, the prompt's
	// batch first, when Request.Dump asked for them.
	Tensors []map[string]Dumped `json:"-"`
}

// Dumped is one tensor llama.cpp computed.
type Dumped struct {
	Ne     [4]int
	Values []float32
}

// Run asks llama.cpp.
func (h *Harness) Run(req Request) (*Result, error) {
	dir, err := os.MkdirTemp("", "llamacpp")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	promptFile := filepath.Join(dir, "prompt")
	if err := os.WriteFile(promptFile, []byte(req.Prompt), 0o644); err != nil {
		return nil, err
	}
	libDir := h.libDir
	if req.Variant != "" {
		if libDir, err = h.variantDir(req.Variant); err != nil {
			return nil, err
		}
	}
	args := []string{req.Model, "-libdir", libDir, "-prompt-file", promptFile}
	if len(req.Tokens) > 0 {
		args = append(args, "-tokens", joinIDs(req.Tokens), "-n", fmt.Sprint(req.Steps))
	}
	if req.Follow != nil {
		args = append(args, "-follow", joinIDs(req.Follow))
	}
	if req.AllLogits {
		args = append(args, "-all")
	}
	if req.GPULayers > 0 {
		args = append(args, "-ngl", fmt.Sprint(req.GPULayers))
	}
	if req.FlashAttn {
		args = append(args, "-fa")
	}
	if req.CacheK != 0 {
		args = append(args, "-ctk", fmt.Sprint(int(req.CacheK)))
	}
	if req.CacheV != 0 {
		args = append(args, "-ctv", fmt.Sprint(int(req.CacheV)))
	}
	dumpDir := filepath.Join(dir, "dump")
	if req.Dump {
		if err := os.Mkdir(dumpDir, 0o755); err != nil {
			return nil, err
		}
		args = append(args, "-dump", dumpDir)
	}
	cmd := exec.Command(h.bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("llama.cpp harness on %s: %v\n%s", req.Model, err, stderr.String())
	}
	var res Result
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("llama.cpp harness output: %v\n%s", err, stderr.String())
	}
	for i := 0; req.Dump && i <= req.Steps; i++ {
		ts, err := readDump(filepath.Join(dumpDir, fmt.Sprint(i)))
		if err != nil {
			return nil, err
		}
		res.Tensors = append(res.Tensors, ts)
	}
	return &res, nil
}

func joinIDs(ids []int32) string {
	s := make([]string, len(ids))
	for i, t := range ids {
		s[i] = fmt.Sprint(t)
	}
	return strings.Join(s, ",")
}

// readDump reads the files of the harness's -dump.
func readDump(dir string) (map[string]Dumped, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	tensors := make(map[string]Dumped, len(entries))
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		var d Dumped
		n := 1
		for i := range d.Ne {
			if len(b) >= 32 {
				d.Ne[i] = int(binary.LittleEndian.Uint64(b[8*i:]))
			}
			n *= d.Ne[i]
		}
		if len(b) != 32+4*n {
			return nil, fmt.Errorf("llama.cpp harness: dumped tensor %s has %d bytes, want 32 + 4×%d", e.Name(), len(b), n)
		}
		d.Values = make([]float32, n)
		for i := range d.Values {
			d.Values[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[32+4*i:]))
		}
		tensors[e.Name()] = d
	}
	return tensors, nil
}

// FileTypes are llama.h's enum llama_ftype by llama-quantize's names
// (lower-cased): the values llama_model_quantize takes and writes as
// general.file_type. They are written here from llama.h, apart from
// graphc's own table (gguf.FileType), so the oracle tests check one
// against the other.
var FileTypes = map[string]uint32{
	"f32": 0, "f16": 1, "q4_0": 2, "q4_1": 3, "q8_0": 7, "q5_0": 8, "q5_1": 9,
	"q2_k": 10, "q3_k_s": 11, "q3_k_m": 12, "q3_k_l": 13, "q4_k_s": 14, "q4_k_m": 15,
	"q5_k_s": 16, "q5_k_m": 17, "q6_k": 18, "iq2_xxs": 19, "iq2_xs": 20, "q2_k_s": 21,
	"iq3_xs": 22, "iq3_xxs": 23, "iq1_s": 24, "iq4_nl": 25, "iq3_s": 26, "iq3_m": 27,
	"iq2_s": 28, "iq2_m": 29, "iq4_xs": 30, "iq1_m": 31, "bf16": 32, "tq1_0": 36,
	"tq2_0": 37, "mxfp4_moe": 38, "nvfp4": 39, "q1_0": 40, "q2_0": 41,
}

// Quantize writes out, in quantized by llama_model_quantize as
// llama-quantize IN OUT FTYPE does: the library's default parameters (no
// importance matrix, no tensor type overrides), one thread. ftype is a
// name of FileTypes, in any case ("q4_K_M").
func (h *Harness) Quantize(in, out, ftype string) error { return h.quantize(in, out, ftype, false) }

// QuantizePure is Quantize as llama-quantize --pure: every tensor it
// quantizes is ftype's default type, but where a row needs a fallback.
func (h *Harness) QuantizePure(in, out, ftype string) error { return h.quantize(in, out, ftype, true) }

func (h *Harness) quantize(in, out, ftype string, pure bool) error {
	n, ok := FileTypes[strings.ToLower(ftype)]
	if !ok {
		return fmt.Errorf("llama.cpp quantize: unknown file type %q", ftype)
	}
	args := []string{"-quantize", in, out, fmt.Sprint(n)}
	if pure {
		args = append(args, "-pure")
	}
	cmd := exec.Command(h.bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("llama.cpp harness -quantize %s %s %s: %v\n%s", in, out, ftype, err, stderr.String())
	}
	return nil
}
