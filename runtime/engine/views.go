package engine

import "fmt"

// A ViewCheck is a view of a plan whose bytes depend on the dims (a KV
// cache slot at n_kv - n_tokens, say): at every evaluation they must lie
// inside the Size bytes of its source, or the evaluation is refused before
// it starts. Generated code lists them in a table and computes each
// distinct byte range once, as Extent k of its dims.
type ViewCheck struct {
	Pos    string // the view's statement, file:line:col
	View   string
	Source string
	Size   int // the source's bytes
	Extent int // which of the model's extents covers the view's bytes
}

// Check returns the error for the view covering bytes [lo, hi) at the dims
// dims describes, or nil when they lie inside its source.
func (v *ViewCheck) Check(lo, hi int, dims fmt.Stringer) error {
	if lo >= 0 && hi <= v.Size {
		return nil
	}
	return fmt.Errorf("%s: view %s of %s covers bytes [%d, %d), outside its %d bytes (%v)", v.Pos, v.View, v.Source, lo, hi, v.Size, dims)
}
