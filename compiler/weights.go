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
	// Path is the file's name; Names its tensors' names in file order.
	Path  string
	Names []string
	// AllowUnused lets the model leave tensors of the file unread
	// (-allow-unused); Lower then lists them in Ignored. Without it they
	// are an error: a model that ignores one (Llama 3's
	// rope_freqs.weight) computes something else than the file means.
	AllowUnused bool
	Ignored     []string
}

// ReadWeightsFile reads the tensor list and metadata of a GGUF file, to
// compile a model for it (Config.File).
func ReadWeightsFile(path string) (*WeightsFile, error) {
	m, err := gguf.Open(path)
	if err != nil {
		return nil, &UserError{err.Error()}
	}
	defer m.Close()
	wf := &WeightsFile{Types: map[string]tensor.DType{}, Tensors: map[string]bool{}, Meta: map[string]any{}, Path: path}
	for _, t := range m.Tensors {
		wf.Tensors[t.Name] = true
		wf.Names = append(wf.Names, t.Name)
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
