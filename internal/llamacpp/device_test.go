package llamacpp_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/graphc/graphc/backend/libs"
	"github.com/graphc/graphc/codegen"
	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/gguf/ggufarch"
	"github.com/graphc/graphc/internal/llamacpp"
	"github.com/graphc/graphc/passes"
	"github.com/graphc/graphc/runtime/ggml"
)

// deviceDriver runs a package graphc generated (import path graphcrun/model)
// on a GGUF file: the prompt's ids as one batch, then each step's id as a
// batch of one, printing every logit row as JSON (the prompt's tokens',
// every one asked for with inp_out_ids, then each step's).
const deviceDriver = `package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"

	"graphcrun/model"
	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/runtime/engine"
)

func ids(s string) []int32 {
	var out []int32
	for _, f := range strings.Split(s, ",") {
		if f != "" {
			n, err := strconv.Atoi(f)
			if err != nil {
				panic(err)
			}
			out = append(out, int32(n))
		}
	}
	return out
}

func main() {
	f, err := gguf.Open(os.Args[1])
	if err != nil {
		panic(err)
	}
	w, err := f.Weights(model.Weights)
	if err != nil {
		panic(err)
	}
	m, err := model.New(w, 2)
	if err != nil {
		panic(err)
	}
	defer m.Close()
	var rows [][]float32
	eval := func(tokens []int32, pos int) {
		p, mask := engine.CausalBatch(len(tokens), pos)
		all := make([]int32, len(tokens))
		for i := range all {
			all[i] = int32(i)
		}
		out, err := m.Eval(&model.Inputs{Dims: model.Dims{NTokens: len(tokens), NKV: pos + len(tokens), NOutputs: len(tokens)}, InpTokens: tokens, InpPos: p, KQMask: mask, InpOutIds: all})
		if err != nil {
			panic(err)
		}
		v, n := out.ResultOutput.F32s(), out.ResultOutput.Ne[0]
		for i := range tokens {
			rows = append(rows, append([]float32(nil), v[i*n:(i+1)*n]...))
		}
	}
	prompt := ids(os.Args[2])
	eval(prompt, 0)
	for i, t := range ids(os.Args[3]) {
		eval([]int32{t}, len(prompt)+i)
	}
	if err := json.NewEncoder(os.Stdout).Encode(rows); err != nil {
		panic(err)
	}
}
`

// deviceLogits compiles model for the file at path onto backends (every
// layer on the first, as -ngl 99) and runs it as a program of its own, the
// way an application runs a generated package: every prompt token's
// logits, then each step's.
func deviceLogits(t *testing.T, model, path string, backends []string, prompt, steps []int32) [][]float32 {
	t.Helper()
	ngl := 99
	cfg := compiler.Config{Backends: backends, Options: passes.Options{NCopies: 1}}
	if len(backends) > 1 {
		cfg.Placement.GPULayers = &ngl
	}
	res := compileFor(t, model, path, cfg)
	code, err := compiler.Generate(res, codegen.Options{PkgPath: "graphcrun/model", PkgName: "model", Source: filepath.Base(model)})
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"go.mod":             fmt.Appendf(nil, "module graphcrun\n\ngo 1.26\n\nrequire github.com/graphc/graphc v0.0.0\n\nreplace github.com/graphc/graphc => %s\n", root),
		"go.sum":             sum,
		"main.go":            []byte(deviceDriver),
		"model/model_gen.go": code,
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	join := func(ids []int32) string {
		s := make([]string, len(ids))
		for i, id := range ids {
			s[i] = fmt.Sprint(id)
		}
		return strings.Join(s, ",")
	}
	cmd := exec.Command("go", "run", "-mod=mod", ".", path, join(prompt), join(steps))
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s on %v: %v\n%s", model, backends, err, stderr.String())
	}
	var rows [][]float32
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// maxRowDiff is the largest |a − b| over rows[lo:hi] of two logit tables.
func maxRowDiff(t *testing.T, a, b [][]float32, lo, hi int) float64 {
	t.Helper()
	if len(a) < hi || len(b) < hi {
		t.Fatalf("%d and %d rows of logits, want %d", len(a), len(b), hi)
	}
	var d float64
	for r := lo; r < hi; r++ {
		for i := range a[r] {
			d = max(d, math.Abs(float64(a[r][i]-b[r][i])))
		}
	}
	return d
}

// vulkanOracle builds the harness against llama.cpp's Vulkan build and
// checks that ggml sees the device, or skips saying how to get both.
func vulkanOracle(t *testing.T) *llamacpp.Harness {
	t.Helper()
	skip := func(err error) {
		t.Helper()
		if os.Getenv("GRAPHC_REQUIRE_GGML") != "" {
			t.Fatal(err)
		}
		t.Skipf("%v\n(for lavapipe, Mesa's Vulkan device: apt-get install mesa-vulkan-drivers libvulkan1 and export GGML_VK_VISIBLE_DEVICES=0)", err)
	}
	dir, err := llamacpp.VulkanLibDir()
	if err != nil {
		skip(err)
	}
	if os.Getenv(libs.GGMLPathEnv) == "" {
		// graphc's programs load the same build of ggml as llama.cpp.
		t.Setenv(libs.GGMLPathEnv, dir)
	}
	devs, err := ggml.Devices()
	if err != nil {
		skip(err)
	}
	if !slices.ContainsFunc(devs, func(d ggml.DeviceInfo) bool { return d.Name == "Vulkan0" }) {
		skip(fmt.Errorf("ggml in %s has no Vulkan0 device", dir))
	}
	h, err := llamacpp.BuildWith(t.TempDir(), dir)
	if errors.Is(err, llamacpp.ErrNoLibs) {
		skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// deviceFactor is how much further from its CPU graphc's logits on a
// device may be than llama.cpp's on the same device, over the same rows;
// deviceFloor is the distance always allowed (float rounding of logits
// about ±1.5).
const (
	deviceFactor = 2
	deviceFloor  = 1e-6
)

// deviceMixes are the llama.cpp file types TestVulkanAsCloseAsLlamaCpp
// also runs, written as llama.cpp's quantizer writes them: the types most
// published files have (q4_K, q6_K; q5_K, q8_0 in the mixes' layers).
var deviceMixes = []string{"q4_K_m", "q5_K_m", "q6_K"}

// TestVulkanAsCloseAsLlamaCpp runs llama.cpp on its CPU build and on its
// Vulkan build with every layer on the device (-ngl 99), and graphc's
// example compiled for the same file on the cpu and on vulkan0 (-ngl 99),
// on the same prompt and decode steps (llama.cpp's CPU's greedy tokens,
// which its Vulkan run follows too): graphc's distance from its CPU must
// be within deviceFactor of llama.cpp's from its own, over every prompt
// token's logits and over the steps'. Measured on Mesa's lavapipe the two
// distances are equal (f32 llama: 4.7e-4 over the prompt, 3.8e-4 over the
// steps; a graph whose views outlived their contents was 1e-2 and 2.6e-3).
func TestVulkanAsCloseAsLlamaCpp(t *testing.T) {
	vk := vulkanOracle(t)
	h := oracle(t)
	for _, arch := range []string{"llama", "qwen2"} {
		o := archOpts(arch, func(o *ggufarch.Options) { o.Layers = 4 })
		for _, typ := range append(archTypes, deviceMixes...) {
			t.Run(arch+"/"+typ, func(t *testing.T) {
				var path string
				if slices.Contains(deviceMixes, typ) {
					// Rows of whole 256-blocks: the mix's own types, no fallbacks.
					m := quantizedOpts(arch)
					m.Layers, m.Mix = 4, typ
					path = filepath.Join(t.TempDir(), typ+".gguf")
					if err := ggufarch.WriteFile(path, m); err != nil {
						t.Fatal(err)
					}
				} else {
					path = archFile(t, o, typ)
				}
				ids := encodePrompt(t, path)
				const steps = 8
				req := llamacpp.Request{Model: path, Tokens: ids, Steps: steps, AllLogits: true}
				cpuRes, err := h.Run(req)
				if err != nil {
					t.Fatal(err)
				}
				req.GPULayers, req.Follow = 99, cpuRes.Generated
				vkRes, err := vk.Run(req)
				if err != nil {
					t.Fatal(err)
				}
				if !cpuRes.FlashAttnSet || !vkRes.FlashAttnSet {
					t.Fatal("the harness could not turn llama.cpp's flash attention off; graphc's graph is the plain softmax path")
				}
				llamaCPU := append(cpuRes.PromptLogits, cpuRes.Logits[1:]...)
				llamaVK := append(vkRes.PromptLogits, vkRes.Logits[1:]...)
				graphcCPU := deviceLogits(t, archExample[arch], path, []string{"cpu"}, ids, cpuRes.Generated)
				graphcVK := deviceLogits(t, archExample[arch], path, []string{"vulkan0", "cpu"}, ids, cpuRes.Generated)
				n := len(ids)
				for _, rows := range []struct {
					what   string
					lo, hi int
				}{{"prompt", 0, n}, {"steps", n, len(llamaCPU)}} {
					ggml := maxRowDiff(t, llamaVK, llamaCPU, rows.lo, rows.hi)
					graphc := maxRowDiff(t, graphcVK, graphcCPU, rows.lo, rows.hi)
					t.Logf("%s: vulkan0 − cpu: llama.cpp %.3g, graphc %.3g", rows.what, ggml, graphc)
					if graphc > deviceFactor*ggml+deviceFloor {
						t.Errorf("%s: graphc on vulkan0 is %.3g from its cpu, llama.cpp on the device %.3g from its own (allowed: %g× that)", rows.what, graphc, ggml, float64(deviceFactor))
					}
				}
			})
		}
	}
}
