package tensor

import (
	"fmt"
	"strings"
)

// Decl declares a weight or state tensor a generated model expects. It is
// a value type here, not in the runtime, so that the compiler and gguf
// name it without linking the runtime.
type Decl struct {
	Name string
	Type DType
	Ne   [4]int
}

func (d *Decl) String() string {
	n := 4
	for n > 1 && d.Ne[n-1] == 1 {
		n--
	}
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprint(d.Ne[i])
	}
	return fmt.Sprintf("%s[%s]", d.Type, strings.Join(s, ", "))
}

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
