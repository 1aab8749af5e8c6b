package gguf

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/graphc/graphc/tensor"
)

// Number converts a scalar metadata value to a float64, if it is a number
// (bools are 0 and 1). Every integer type converts exactly up to 2^53,
// which every dim in practice is below.
func Number(v any) (float64, bool) {
	switch v := v.(type) {
	case uint8:
		return float64(v), true
	case int8:
		return float64(v), true
	case uint16:
		return float64(v), true
	case int16:
		return float64(v), true
	case uint32:
		return float64(v), true
	case int32:
		return float64(v), true
	case uint64:
		return float64(v), true
	case int64:
		return float64(v), true
	case float32:
		return float64(v), true
	case float64:
		return v, true
	case bool:
		if v {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// Value is a metadata value as the DSL's meta() reads it: a number as
// Number converts it, an array as its length — llama.cpp's vocabulary
// size is the length of tokenizer.ggml.tokens in files that do not state
// <arch>.vocab_size.
func Value(v any) (float64, bool) {
	if n, ok := Number(v); ok {
		return n, true
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice {
		return float64(rv.Len()), true
	}
	return 0, false
}

// CheckMeta reports, all at once, the metadata values of f that differ
// from those a model was compiled for (a generated package's Meta): its
// shapes and constants are only right for files that agree. A key the
// file lacks is fine where the model used its default.
func (f *File) CheckMeta(want []tensor.Meta) error {
	var errs []error
	for _, m := range want {
		raw, ok := f.MetaValue(m.Key)
		if !ok {
			if !m.Default {
				errs = append(errs, fmt.Errorf("gguf: metadata %s is missing; the model was compiled for %v", m.Key, m.Value))
			}
			continue
		}
		got, ok := Value(raw)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("gguf: metadata %s is %T, the model was compiled for the number %v", m.Key, raw, m.Value))
		case got != m.Value && !sameFloat32(raw, m.Value):
			errs = append(errs, fmt.Errorf("gguf: metadata %s = %v, the model was compiled for %v: recompile it for this file (graphc compile -weights FILE)", m.Key, got, m.Value))
		}
	}
	return errors.Join(errs...)
}

// sameFloat32 reports whether a float32 value is want at float32
// precision: a default of 1e-5 written in the model is the 1e-5 a file
// stores as a float32, and ops take their parameters as float32 anyway.
func sameFloat32(raw any, want float64) bool {
	f, ok := raw.(float32)
	return ok && f == float32(want)
}
