package compiler

import (
	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/runtime"
)

// WeightTypesOf reads the tensor types of a GGUF file, to compile a model
// for them (Config.WeightTypes).
func WeightTypesOf(path string) (map[string]runtime.DType, error) {
	m, err := gguf.Open(path)
	if err != nil {
		return nil, &UserError{err.Error()}
	}
	defer m.Close()
	types := map[string]runtime.DType{}
	for _, t := range m.Tensors {
		if dt, ok := t.Type.DType(); ok {
			types[t.Name] = dt
		}
	}
	return types, nil
}
