package codegen

import (
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/dave/jennifer/jen"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
)

// opParams are the distinct scalar-operand values of the plan's kernel
// calls, each declared once as a package variable (a 16-layer model's
// rope calls share one), in the order the nodes first use them.
type opParams struct {
	name  map[string]string // by the value's Go syntax
	decls []jen.Code
}

// collectParams names the parameter values of every node a kernel
// computes.
func (gen *generator) collectParams() {
	gen.params = opParams{name: map[string]string{}}
	for _, t := range gen.g.Nodes {
		if t.Params == nil || t.Op.Info().Kernel == "" {
			continue
		}
		key := fmt.Sprintf("%#v", t.Params)
		if _, ok := gen.params.name[key]; ok {
			continue
		}
		name := gen.names.local("", reflect.TypeOf(t.Params).Name())
		gen.params.name[key] = name
		gen.params.decls = append(gen.params.decls, jen.Id(name).Op("=").Add(paramsLit(t.Params)))
	}
}

// paramsRef is the variable holding t's parameters.
func (gen *generator) paramsRef(t *ir.Tensor) jen.Code {
	name, ok := gen.params.name[fmt.Sprintf("%#v", t.Params)]
	if !ok {
		panic(fmt.Sprintf("BUG: codegen: %s's parameters were not collected", t.Name))
	}
	return jen.Id(name)
}

// paramsLit is params as a composite literal of its ops type, the fields
// in their order, those at their zero value left out.
func paramsLit(params ops.Params) jen.Code {
	v := reflect.ValueOf(params)
	var fields []jen.Code
	for i := range v.NumField() {
		if f := v.Field(i); !f.IsZero() {
			fields = append(fields, jen.Id(v.Type().Field(i).Name).Op(":").Add(value(f)))
		}
	}
	return jen.Qual(pkgOps, v.Type().Name()).Values(fields...)
}

// value is a field's value as a Go literal.
func value(v reflect.Value) jen.Code {
	switch v.Kind() {
	case reflect.Float32:
		// An untyped constant: the field's type makes it the float32 it
		// was (the shortest form that rounds back to it).
		if x := float32(v.Float()); !math.IsInf(float64(x), 0) && !math.IsNaN(float64(x)) {
			return jen.Op(strconv.FormatFloat(float64(x), 'g', -1, 32))
		}
		return f32(float32(v.Float()))
	case reflect.Int:
		return jen.Lit(int(v.Int()))
	case reflect.Array:
		var elems []jen.Code
		for i := range v.Len() {
			elems = append(elems, value(v.Index(i)))
		}
		return jen.Index(jen.Lit(v.Len())).Id(v.Type().Elem().Name()).Values(elems...)
	}
	panic(fmt.Sprintf("BUG: codegen: parameter field of kind %s has no literal", v.Kind()))
}
