package gguf_test

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/tensor"
)

func Example() {
	// Write a small GGUF file.
	w := gguf.NewWriter()
	if err := w.AddMeta("general.architecture", "llama"); err != nil {
		log.Fatal(err)
	}
	if err := w.AddMeta("llama.block_count", uint32(1)); err != nil {
		log.Fatal(err)
	}
	norm := tensor.NewTensor(tensor.F32, [4]int{4, 1, 1, 1})
	copy(norm.F32s(), []float32{1, 2, 3, 4})
	if err := w.AddTensor("blk.0.attn_norm.weight", tensor.F32, []int64{4}, norm.Data); err != nil {
		log.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "gguf")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tiny.gguf")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}

	// Map it and bind its tensors to a model's weight declarations.
	m, err := gguf.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	arch, _ := m.MetaString("general.architecture")
	layers, _ := m.MetaInt("llama.block_count")
	fmt.Println(arch, layers, m.Tensors[0].String())
	weights, err := m.Weights([]tensor.Decl{{Name: "blk.0.attn_norm.weight", Type: tensor.F32, Ne: [4]int{4, 1, 1, 1}}})
	if err != nil {
		log.Fatal(err)
	}
	x := weights["blk.0.attn_norm.weight"]
	fmt.Println(x.F32s())
	// Output:
	// llama 1 blk.0.attn_norm.weight f32[4]
	// [1 2 3 4]
}
