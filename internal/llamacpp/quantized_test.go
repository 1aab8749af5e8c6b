package llamacpp_test

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/graphc/graphc/gguf/ggufarch"
	"github.com/graphc/graphc/internal/llamacpp"
	"github.com/graphc/graphc/tensor"
)

// quantizedFileTypes are the file types of llama.cpp's quantizer whose
// files TestQuantizedFilesMatchLlamaCpp runs, each with its roundSteps
// bound: twice the most TestQuantizedRoundingSensitivity measured on the
// same shapes (graphc against itself, every op's output moved by one
// ulp). Their activations are rounded before every product (to q8_K for
// the K-quants and iq4_xs, to q8_0 or q8_1 for the others) and the keys
// and values to the f16 cache, so a last-bit difference of another
// summation order may cross a rounding step; a step crossed in the
// prompt's keys stays in the cache and moves every later step, which is
// why these files bound no number of steps beyond float (llama.cpp's own
// CPU builds differ by 1.5e-2 on every step of the llama q5_K_S file).
// What a kernel or layout bug would break is held exactly instead: the
// first layer's products, whose operands both sides compute identically.
// gemma3's files have bounds of their own (gemma3), measured on them
// alike: their GELU looks its values up by the f16 rounding of its input,
// one rounding step more in every layer.
var quantizedFileTypes = []quantizedFileType{
	{"q4_1", 0.038, 0.051}, {"q5_0", 0.038, 0.06}, {"q5_1", 0.03, 0.036}, {"q2_K", 0.03, 0.029}, {"q3_K_S", 0.06, 0.071},
	{"q3_K_M", 0.05, 0.073}, {"q3_K_L", 0.052, 0.068}, {"q4_K_S", 0.027, 0.051}, {"q4_K_M", 0.03, 0.044}, {"q5_K_S", 0.035, 0.048},
	{"q5_K_M", 0.036, 0.038}, {"q6_K", 0.045, 0.059}, {"iq4_nl", 0.025, 0.028}, {"iq4_xs", 0.052, 0.066},
}

type quantizedFileType struct {
	name               string
	roundSteps, gemma3 float64
}

// bound is the file type's roundSteps for a file of arch.
func (ft quantizedFileType) bound(arch string) float64 {
	if arch == "gemma3" {
		return ft.gemma3
	}
	return ft.roundSteps
}

// quantizedOpts is the shape of the quantized files: rows of whole
// 256-element blocks, so that no tensor needs llama.cpp's fallback type;
// GQA; 2 layers.
func quantizedOpts(arch string) ggufarch.Options {
	return archOpts(arch, func(o *ggufarch.Options) { o.Embd, o.Heads, o.KVHeads, o.FF, o.Vocab = 256, 4, 2, 512, 512 })
}

// firstLayerProducts are the tensors of the prompt's evaluation whose
// operands graphc and llama.cpp compute identically: the first layer's
// products with the file's weights, on the same normalized embeddings.
var firstLayerProducts = []string{"Qcur-0", "Kcur-0", "Vcur-0"}

// TestQuantizedFilesMatchLlamaCpp quantizes an f32 llama, qwen2, qwen3 and gemma3 file
// with llama.cpp's own quantizer (llama_model_quantize) to each of
// quantizedFileTypes, has llama.cpp (its best CPU build here) evaluate a
// prompt and archSteps greedy steps on it, and runs the architecture's
// example compiled for the file at each level of graphc's kernels on the
// same tokens: the first layer's products within float rounding of
// llama.cpp's, every step's logits within the type's roundSteps, and
// graphc's greedy token llama.cpp's wherever its top two are further apart.
func TestQuantizedFilesMatchLlamaCpp(t *testing.T) {
	h := oracle(t)
	om := newOracleMatrix(t, h)
	variant := om.variants[len(om.variants)-1]
	for _, arch := range []string{"llama", "qwen2", "qwen3", "gemma3"} {
		f32 := archFile(t, quantizedOpts(arch), "f32")
		for _, ft := range quantizedFileTypes {
			t.Run(arch+"/"+ft.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), ft.name+".gguf")
				if err := h.Quantize(f32, path, ft.name); err != nil {
					t.Fatal(err)
				}
				ids := encodePrompt(t, path)
				res, err := h.Run(llamacpp.Request{Model: path, Prompt: archPrompt, Tokens: ids, Steps: archSteps, Variant: variant})
				if err != nil {
					t.Fatal(err)
				}
				prompt, err := h.Run(llamacpp.Request{Model: path, Tokens: ids, Variant: variant, Dump: true})
				if err != nil {
					t.Fatal(err)
				}
				b := stepBounds{float: 1e-4, roundSteps: ft.bound(arch), maxStepped: archSteps + 1}
				om.atLevels(t, func(level string) {
					compared := 0
					got := archLogits(t, archExample[arch], path, ids, res.Generated, func(name string, x *tensor.Tensor) {
						if compared == len(firstLayerProducts) || !slices.Contains(firstLayerProducts, name) {
							return
						}
						compared++
						d := prompt.Tensors[0][name]
						if d.Ne != x.Ne {
							t.Fatalf("%s: graphc %v, llama.cpp %v", name, x.Ne, d.Ne)
						}
						var worst, mag float64
						for i, g := range x.F32s() {
							worst = max(worst, math.Abs(float64(g-d.Values[i])))
							mag = max(mag, math.Abs(float64(d.Values[i])))
						}
						if worst > 1e-5*max(mag, 1) {
							t.Errorf("graphc %s: %s differs from llama.cpp's by up to %.3g (largest %.3g)", level, name, worst, mag)
						}
					})
					if compared != len(firstLayerProducts) {
						t.Errorf("graphc %s: compared %d of %v", level, compared, firstLayerProducts)
					}
					b.check(t, fmt.Sprintf("llama.cpp %s, graphc %s", variant, level), got, res.Logits, res.Generated)
				})
			})
		}
	}
}

// TestQuantizedRoundingSensitivity measures quantizedFileTypes' bounds: on
// graphc's own files of TestQuantizedFilesMatchLlamaCpp's shapes and file
// types (ggufarch's Mix, llama.cpp's quantizer's bytes), how far one-ulp
// perturbations of every op's output move the logits. It needs no
// llama.cpp.
func TestQuantizedRoundingSensitivity(t *testing.T) {
	worst := map[string]float64{}
	for _, arch := range []string{"llama", "qwen2", "qwen3", "gemma3"} {
		for _, ft := range quantizedFileTypes {
			o := quantizedOpts(arch)
			o.Mix = ft.name
			path := filepath.Join(t.TempDir(), arch+"-"+ft.name+".gguf")
			if err := ggufarch.WriteFile(path, o); err != nil {
				t.Fatal(err)
			}
			key := ft.name
			if arch == "gemma3" {
				key = "gemma3/" + key
			}
			worst[key] = max(worst[key], roundingSensitivity(t, archExample[arch], path, encodePrompt(t, path)))
		}
	}
	for _, ft := range quantizedFileTypes {
		for _, arch := range []string{"", "gemma3"} {
			key := ft.name
			if arch != "" {
				key = arch + "/" + key
			}
			t.Logf("%s: one-ulp perturbations move the logits by up to %.3g (roundSteps %g)", key, worst[key], ft.bound(arch))
			if worst[key] > ft.bound(arch) {
				t.Errorf("%s: one-ulp perturbations move the logits by up to %.3g, more than its roundSteps %g", key, worst[key], ft.bound(arch))
			}
		}
	}
}
