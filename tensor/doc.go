// Package tensor holds graphc's value types, the bottom of every other
// package: the element types, one row each in the type table (ggml's
// type number, block layout, row size) with their block codecs (Quantize,
// Dequantize), f16 and bf16 conversions, Tensor, a strided 4-D view over
// bytes with ggml's conventions, and what a generated model declares of
// its weights file (Decl, Meta). It imports nothing of graphc.
package tensor
