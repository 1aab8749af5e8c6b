package engine

import "fmt"

// Meta is a weights-file metadata value a model was compiled for, such as
// llama.embedding_length = 2048: generated code records them, and loading
// a file checks them (gguf's CheckMeta), since the compiled shapes and
// constants are only right for files that agree.
type Meta struct {
	Key   string
	Value float64
	// Default: the value is the model's default, used because the key was
	// absent (or compiled without a file), so a file may lack the key.
	Default bool
}

func (m Meta) String() string { return fmt.Sprintf("%s = %v", m.Key, m.Value) }
