// Package quanttest checks tensor's block codecs against ggml's own, byte
// for byte and bit for bit: ggml_quantize_chunk's bytes against
// tensor.Quantize's, and ggml's to_float against tensor.Dequantize. It
// holds only tests; they skip where ggml's libraries are missing (see
// backend/libs), unless $GRAPHC_REQUIRE_GGML is set.
package quanttest
