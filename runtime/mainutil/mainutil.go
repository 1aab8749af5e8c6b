package mainutil

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/tensor"
)

// Where is the fill expressions' select: a if cond, else b.
func Where(cond bool, a, b float64) float64 {
	if cond {
		return a
	}
	return b
}

// B2F is 1 for true and 0 for false, for comparisons used as numbers.
func B2F(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// FlagGiven reports whether the command line set the flag name.
func FlagGiven(name string) bool {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// PrintOutputs writes output tensors as text (name, shape, values) or as
// JSON: {"outputs":[{"name":…, "shape":[ne0, ne1, …], "values":[…]}]}.
func PrintOutputs(w io.Writer, asJSON bool, outs []engine.Named) error {
	type jsonOut struct {
		Name   string    `json:"name"`
		Type   string    `json:"type"`
		Shape  []int     `json:"shape"`
		Values []float64 `json:"values"`
	}
	var all []jsonOut
	for _, o := range outs {
		t := o.Tensor
		n := 4
		for n > 1 && t.Ne[n-1] == 1 {
			n--
		}
		j := jsonOut{Name: o.Name, Type: t.Type.String(), Shape: t.Ne[:n], Values: make([]float64, t.NElem())}
		for i := range j.Values {
			j.Values[i] = t.Float64(i)
			if t.Type == tensor.F32 {
				// Print the float32 exactly as float32, not its float64 expansion.
				j.Values[i], _ = strconv.ParseFloat(strconv.FormatFloat(j.Values[i], 'g', -1, 32), 64)
			}
		}
		all = append(all, j)
	}
	if asJSON {
		enc := json.NewEncoder(w)
		return enc.Encode(map[string]any{"outputs": all})
	}
	for _, o := range all {
		dims := make([]string, len(o.Shape))
		for i, d := range o.Shape {
			dims[i] = fmt.Sprint(d)
		}
		if _, err := fmt.Fprintf(w, "%s %s[%s]\n", o.Name, o.Type, strings.Join(dims, ", ")); err != nil {
			return err
		}
		row := o.Shape[0]
		for i := 0; i < len(o.Values); i += row {
			parts := make([]string, 0, row)
			for _, v := range o.Values[i:min(i+row, len(o.Values))] {
				parts = append(parts, fmt.Sprintf("%.6g", v))
			}
			if _, err := fmt.Fprintf(w, "  %s\n", strings.Join(parts, " ")); err != nil {
				return err
			}
		}
	}
	return nil
}
