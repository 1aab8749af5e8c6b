// Package examples holds graphc's example models. Its DSL files for
// llama.cpp's architectures are built into graphc: generate, chat and
// serve compile the one for a file's general.architecture.
package examples

import (
	"embed"
	"maps"
	"slices"
)

//go:embed llamafile/llama.g qwen2/qwen2.g qwen3/qwen3.g qwen3moe/qwen3moe.g gemma3/gemma3.g phi3/phi3.g
var files embed.FS

// archs are the DSL files for each of llama.cpp's architectures.
var archs = map[string]string{
	"gemma3":   "gemma3/gemma3.g",
	"llama":    "llamafile/llama.g",
	"phi3":     "phi3/phi3.g",
	"qwen2":    "qwen2/qwen2.g",
	"qwen3":    "qwen3/qwen3.g",
	"qwen3moe": "qwen3moe/qwen3moe.g",
}

// ForArch returns the DSL file for a GGUF file's general.architecture:
// its name (as the checkout has it) and source.
func ForArch(arch string) (name string, src []byte, ok bool) {
	p, ok := archs[arch]
	if !ok {
		return "", nil, false
	}
	src, err := files.ReadFile(p)
	if err != nil {
		panic("BUG: examples: " + err.Error())
	}
	return "examples/" + p, src, true
}

// Archs are the architectures ForArch knows, sorted.
func Archs() []string {
	return slices.Sorted(maps.Keys(archs))
}
