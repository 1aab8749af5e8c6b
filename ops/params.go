package ops

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Params are an op's scalar operands, ggml's op_params: one struct type per
// kind of op (the table's Params column holds its zero value). Everything
// that handles them — the DSL's keyword arguments, IR dumps, generated
// code, kernel signatures — reads the struct's fields, so a new operand is
// a field:
//
//   - `key:"name"`: the DSL keyword and the name IR dumps print (a field
//     without one, such as PermuteParams.Axes, is given positionally);
//   - `def:"v"`: the value a call that leaves the keyword out gets;
//     without one the keyword is required;
//   - `dump:"always"`: dumps print it at its default too (others print only
//     when required or off their default).
//
// Kernels take the struct as their last argument.
type Params interface {
	// GGML is the op_params ggml's constructor of the op stores (ggml.c),
	// as 32-bit words, floats by their bits.
	GGML() [16]int32
	// FromGGML decodes GGML's words into a value of the same type.
	FromGGML(w [16]int32) Params
}

// MulMatParams are mul_mat's. Prec is the precision a ggml device
// accumulates the products in (ggml_mul_mat_set_prec): 0, the device's
// default, which on ggml's Vulkan and CUDA backends sums products of an f16
// operand in f16; 32, in f32 (GGML_PREC_F32), as llama.cpp asks for its
// attention scores. graphc's CPU kernels always sum in f32, as ggml's do.
type MulMatParams struct {
	Prec int `key:"prec" def:"0"`
}

// ggmlPrecF32 is enum ggml_prec's GGML_PREC_F32.
const ggmlPrecF32 = 10

// Check reports a precision ggml has no setting for.
func (p MulMatParams) Check() (string, error) {
	if p.Prec != 0 && p.Prec != 32 {
		return "prec", fmt.Errorf("prec %d is not one of 0 (the device's default) and 32 (f32 sums)", p.Prec)
	}
	return "", nil
}

// GGML: ggml_mul_mat_set_prec stores the precision in op_params[0].
func (p MulMatParams) GGML() [16]int32 {
	if p.Prec == 32 {
		return words(ggmlPrecF32)
	}
	return words()
}

func (MulMatParams) FromGGML(w [16]int32) Params {
	if w[0] == ggmlPrecF32 {
		return MulMatParams{Prec: 32}
	}
	return MulMatParams{}
}

// NormParams are rms_norm's and norm's (ggml_rms_norm, ggml_norm).
type NormParams struct {
	Eps float32 `key:"eps" def:"1e-5" dump:"always"`
}

// ScaleParams are scale's: dst = a·S (ggml_scale; ggml's bias is 0).
type ScaleParams struct {
	S float32 `key:"s"`
}

// SoftMaxParams are soft_max's (ggml_soft_max_ext): softmax(a·Scale +
// slope·mask), ALiBi slopes from MaxBias (0: none).
type SoftMaxParams struct {
	Scale   float32 `key:"scale" def:"1" dump:"always"`
	MaxBias float32 `key:"max_bias" def:"0" dump:"always"`
}

// FlashAttnParams are flash_attn_ext's (ggml_flash_attn_ext): the scores
// q·k·Scale, capped to LogitSoftcap·tanh(s/LogitSoftcap) when that is not
// 0, plus the mask times the head's ALiBi slope (MaxBias 0: none). Prec is
// ggml_flash_attn_ext_set_prec's: 32 asks a ggml device for f32
// accumulators (GGML_PREC_F32), as llama.cpp does; ggml's CPU and graphc's
// compute the same either way.
type FlashAttnParams struct {
	Scale        float32 `key:"scale" def:"1" dump:"always"`
	MaxBias      float32 `key:"max_bias" def:"0"`
	LogitSoftcap float32 `key:"logit_softcap" def:"0"`
	Prec         int     `key:"prec" def:"0"`
}

// Check reports a precision ggml has no setting for.
func (p FlashAttnParams) Check() (string, error) {
	if p.Prec != 0 && p.Prec != 32 {
		return "prec", fmt.Errorf("prec %d is not one of 0 (the device's default) and 32 (f32 accumulators)", p.Prec)
	}
	return "", nil
}

// GGML: ggml_flash_attn_ext stores scale, max_bias and logit_softcap,
// ggml_flash_attn_ext_set_prec the precision in op_params[3].
func (p FlashAttnParams) GGML() [16]int32 {
	prec := int32(0)
	if p.Prec == 32 {
		prec = ggmlPrecF32
	}
	return words(f32bits(p.Scale), f32bits(p.MaxBias), f32bits(p.LogitSoftcap), prec)
}

func (FlashAttnParams) FromGGML(w [16]int32) Params {
	p := FlashAttnParams{Scale: f32from(w[0]), MaxBias: f32from(w[1]), LogitSoftcap: f32from(w[2])}
	if w[3] == ggmlPrecF32 {
		p.Prec = 32
	}
	return p
}

// ArgSortParams are argsort's (ggml_argsort): Order 0 sorts each row
// ascending, 1 descending (enum ggml_sort_order).
type ArgSortParams struct {
	Order int `key:"order" def:"0" dump:"always"`
}

// Check reports an order ggml has no value for.
func (p ArgSortParams) Check() (string, error) {
	if p.Order != 0 && p.Order != 1 {
		return "order", fmt.Errorf("order %d is not one of 0 (ascending) and 1 (descending)", p.Order)
	}
	return "", nil
}

// GGML: ggml_argsort stores the order in op_params[0].
func (p ArgSortParams) GGML() [16]int32           { return words(int32(p.Order)) }
func (ArgSortParams) FromGGML(w [16]int32) Params { return ArgSortParams{int(w[0])} }

// TopKParams are top_k's (ggml_top_k): K, the indices kept per row.
type TopKParams struct {
	K int `key:"k"`
}

// Check reports a k that keeps nothing.
func (p TopKParams) Check() (string, error) {
	if p.K < 1 {
		return "k", fmt.Errorf("k %d is not positive", p.K)
	}
	return "", nil
}

// GGML: ggml_top_k stores no op_params (its kernels read k from the
// result's ne[0]); graphc's encoding keeps k in op_params[0], which they
// ignore, so that it decodes again. A traced ggml node's k is its ne[0]
// (ggmltrace).
func (p TopKParams) GGML() [16]int32           { return words(int32(p.K)) }
func (TopKParams) FromGGML(w [16]int32) Params { return TopKParams{int(w[0])} }

// RopeNeox is RopeParams.Mode for NEOX-style rotary embeddings, which rotate
// the pairs (x[i], x[i+NDims/2]); mode 0 rotates adjacent pairs
// (x[2i], x[2i+1]). The values are ggml's GGML_ROPE_TYPE_*.
const RopeNeox = 2

// RopeParams are rope's (ggml_rope_ext). The defaults are those of
// llama.cpp's llama models.
type RopeParams struct {
	NDims    int `key:"n_dims"`                     // leading dimensions of each row that are rotated; even, ≤ Ne[0]
	Mode     int `key:"mode" def:"0" dump:"always"` // 0 (normal) or RopeNeox
	NCtxOrig int `key:"n_ctx_orig" def:"0"`         // training context length, for the YaRN correction dims

	FreqBase   float32 `key:"freq_base" def:"10000" dump:"always"` // θ base
	FreqScale  float32 `key:"freq_scale" def:"1" dump:"always"`    // position interpolation factor, 1 for none
	ExtFactor  float32 `key:"ext_factor" def:"0"`                  // YaRN extrapolation mix, 0 for none
	AttnFactor float32 `key:"attn_factor" def:"1"`                 // magnitude scale applied to cos and sin
	BetaFast   float32 `key:"beta_fast" def:"32"`                  // YaRN ramp bounds
	BetaSlow   float32 `key:"beta_slow" def:"1"`
}

// A Checker is a Params type with values the kernels do not implement.
type Checker interface {
	// Check reports the first such value, and the keyword that set it.
	Check() (key string, err error)
}

// Check reports a mode graphc's kernels do not implement.
func (p RopeParams) Check() (string, error) {
	if p.Mode != 0 && p.Mode != RopeNeox {
		return "mode", fmt.Errorf("mode %d is not supported (0: normal, 2: neox)", p.Mode)
	}
	return "", nil
}

// PermuteParams are permute's: source dim i goes to Axes[i]
// (ggml_permute's axis0..3). The DSL gives them as operands.
type PermuteParams struct {
	Axes [4]int
}

func f32bits(v float32) int32    { return int32(math.Float32bits(v)) }
func f32from(w int32) float32    { return math.Float32frombits(uint32(w)) }
func words(w ...int32) [16]int32 { var p [16]int32; copy(p[:], w); return p }

// GGML: ggml_norm_impl and ggml_rms_norm_impl store eps.
func (p NormParams) GGML() [16]int32              { return words(f32bits(p.Eps)) }
func (NormParams) FromGGML(w [16]int32) Params    { return NormParams{f32from(w[0])} }
func (p ScaleParams) GGML() [16]int32             { return words(f32bits(p.S), f32bits(0)) }
func (ScaleParams) FromGGML(w [16]int32) Params   { return ScaleParams{f32from(w[0])} }
func (p SoftMaxParams) GGML() [16]int32           { return words(f32bits(p.Scale), f32bits(p.MaxBias)) }
func (SoftMaxParams) FromGGML(w [16]int32) Params { return SoftMaxParams{f32from(w[0]), f32from(w[1])} }
func (p PermuteParams) GGML() [16]int32 {
	a := p.Axes
	return words(int32(a[0]), int32(a[1]), int32(a[2]), int32(a[3]))
}
func (PermuteParams) FromGGML(w [16]int32) Params {
	return PermuteParams{[4]int{int(w[0]), int(w[1]), int(w[2]), int(w[3])}}
}

// GGML: ggml_rope_impl stores n_past (0), n_dims, mode, n_ctx (0),
// n_ctx_orig, then freq_base, freq_scale, ext_factor, attn_factor,
// beta_fast, beta_slow as floats, 4 M-RoPE sections (0: not M-RoPE) and
// n_offs (0).
func (p RopeParams) GGML() [16]int32 {
	return words(0, int32(p.NDims), int32(p.Mode), 0, int32(p.NCtxOrig),
		f32bits(p.FreqBase), f32bits(p.FreqScale), f32bits(p.ExtFactor),
		f32bits(p.AttnFactor), f32bits(p.BetaFast), f32bits(p.BetaSlow))
}

func (RopeParams) FromGGML(w [16]int32) Params {
	return RopeParams{
		NDims: int(w[1]), Mode: int(w[2]), NCtxOrig: int(w[4]),
		FreqBase: f32from(w[5]), FreqScale: f32from(w[6]), ExtFactor: f32from(w[7]),
		AttnFactor: f32from(w[8]), BetaFast: f32from(w[9]), BetaSlow: f32from(w[10]),
	}
}

// A Field is one scalar operand of an op's Params: its struct field and
// its tags.
type Field struct {
	Name     string // the struct field
	Key      string // DSL keyword and dump name; "" for positional operands
	Default  float64
	Required bool
	Always   bool // dumps print it at its default too
	index    int
}

// Fields lists the operands of params (a Params struct value).
func Fields(params Params) []Field {
	t := reflect.TypeOf(params)
	var fs []Field
	for i := range t.NumField() {
		sf := t.Field(i)
		f := Field{Name: sf.Name, Key: sf.Tag.Get("key"), Always: sf.Tag.Get("dump") == "always", index: i}
		if d, ok := sf.Tag.Lookup("def"); ok {
			v, err := strconv.ParseFloat(d, 64)
			if err != nil {
				panic(fmt.Sprintf("BUG: ops: %s.%s: default %q: %v", t.Name(), sf.Name, d, err))
			}
			f.Default = v
		} else {
			f.Required = f.Key != ""
		}
		fs = append(fs, f)
	}
	return fs
}

// Defaults returns params with every keyword operand at its default (nil
// for nil).
func Defaults(params Params) Params {
	if params == nil {
		return nil
	}
	for _, f := range Fields(params) {
		if f.Key != "" {
			params = f.Set(params, f.Default)
		}
	}
	return params
}

// Set returns params with the operand set to v, converted to its type
// (integers truncated).
func (f Field) Set(params Params, v float64) Params {
	p := reflect.New(reflect.TypeOf(params)).Elem()
	p.Set(reflect.ValueOf(params))
	fv := p.Field(f.index)
	switch fv.Kind() {
	case reflect.Int:
		fv.SetInt(int64(v))
	case reflect.Float32, reflect.Float64:
		fv.SetFloat(v)
	default:
		panic(fmt.Sprintf("BUG: ops: %T.%s is not a number", params, f.Name))
	}
	return p.Interface().(Params)
}

// Format prints params as IR dumps show them: "key=value" for each
// operand that is required, marked always or off its default, positional operands as
// their values joined by commas under the field's lower-case name.
func Format(params Params) string {
	if params == nil {
		return ""
	}
	v := reflect.ValueOf(params)
	var s []string
	for _, f := range Fields(params) {
		fv := v.Field(f.index)
		if f.Key == "" {
			var parts []string
			for i := range fv.Len() {
				parts = append(parts, fmt.Sprint(fv.Index(i).Interface()))
			}
			s = append(s, strings.ToLower(f.Name)+"="+strings.Join(parts, ","))
			continue
		}
		def := reflect.ValueOf(f.Set(params, f.Default)).Field(f.index).Interface()
		if x := fv.Interface(); f.Required || f.Always || x != def {
			s = append(s, fmt.Sprintf("%s=%v", f.Key, x))
		}
	}
	return strings.Join(s, " ")
}
