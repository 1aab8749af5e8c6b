package engine

import "github.com/graphc/graphc/tensor"

// Decl and Meta are the value types of package tensor under the names
// generated code has always used for them (engine.Decl, engine.Meta).
type (
	Decl = tensor.Decl
	Meta = tensor.Meta
)
