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
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
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
}

// Build compiles the harness into dir against the libraries in LibDir.
func Build(dir string) (*Harness, error) {
	libDir, err := LibDir()
	if err != nil {
		return nil, err
	}
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
	args = append(args, "-Wl,-rpath,"+libDir)
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the llama.cpp harness: %v\n%s", err, out)
	}
	return &Harness{bin: filepath.Join(dir, "harness"), libDir: libDir}, nil
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
	// Generated are the greedy tokens, each the argmax of the row before.
	Generated []int32 `json:"generated"`
	// FlashAttnOff says the harness could turn flash attention off (it
	// knows where the flag is only in the release Package carries); on,
	// llama.cpp's CPU attention sums in f16.
	FlashAttnOff bool `json:"flash_attn_off"`
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
	args := []string{req.Model, "-libdir", h.libDir, "-prompt-file", promptFile}
	if len(req.Tokens) > 0 {
		s := make([]string, len(req.Tokens))
		for i, t := range req.Tokens {
			s[i] = fmt.Sprint(t)
		}
		args = append(args, "-tokens", strings.Join(s, ","), "-n", fmt.Sprint(req.Steps))
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
	return &res, nil
}
