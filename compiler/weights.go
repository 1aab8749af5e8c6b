package compiler

import (
	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/tensor"
)

// WeightsFile is what compiling for a GGUF file reads of it.
type WeightsFile struct {
	// Types are the tensors' types, where graphc's runtime supports them.
	Types map[string]tensor.DType
	// Tensors are the names of every tensor in the file: a weight
	// declared with `or` stands in for one the file lacks.
	Tensors map[string]bool
	// Meta are the file's metadata values, for meta(…).
	Meta map[string]any
}

// ReadWeightsFile reads the tensor list and metadata of a GGUF file, to
// compile a model for it (Config.File).
func ReadWeightsFile(path string) (*WeightsFile, error) {
	m, err := gguf.Open(path)
	if err != nil {
		return nil, &UserError{err.Error()}
	}
	defer m.Close()
	wf := &WeightsFile{Types: map[string]tensor.DType{}, Tensors: map[string]bool{}, Meta: map[string]any{}}
	for _, t := range m.Tensors {
		wf.Tensors[t.Name] = true
		if t.Type.Supported() {
			wf.Types[t.Name] = t.Type
		}
	}
	for _, kv := range m.Meta {
		wf.Meta[kv.Key] = kv.Value
	}
	return wf, nil
}

// WeightTypesOf reads the tensor types of a GGUF file, to compile a model
// for them (Config.WeightTypes).
func WeightTypesOf(path string) (map[string]tensor.DType, error) {
	wf, err := ReadWeightsFile(path)
	if err != nil {
		return nil, err
	}
	return wf.Types, nil
}
