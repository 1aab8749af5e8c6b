// Package phi3 is examples/phi3/phi3.g compiled by graphc for its
// defaults: a phi3-architecture decoder (Phi-3 and Phi-3.5 mini: fused
// QKV and gate/up projections, neox rope with Phi-3's long or short
// factors) whose dims and constants come from a GGUF file's metadata. For
// a file of another shape, compile phi3.g for it: graphc run -weights
// FILE phi3.g.
package phi3

//go:generate go run ../../cmd/graphc compile phi3.g
