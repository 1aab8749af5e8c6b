// Package sample picks tokens from logits as llama.cpp's common sampler
// chain does.
package sample

// DefaultSeed asks for a random seed, as llama.cpp's LLAMA_DEFAULT_SEED.
const DefaultSeed uint32 = 0xFFFFFFFF

// Params are llama.cpp's common sampling parameters (common_params_sampling).
type Params struct {
	Temp             float32 // 0.8; <= 0: greedy (the most likely token)
	TopK             int     // 40; <= 0: off
	TopP             float32 // 0.95; >= 1: off
	MinP             float32 // 0.05; <= 0: off
	TypicalP         float32 // 1: off
	RepeatLastN      int     // 64: tokens the penalties look back over; 0 off; -1 the whole history
	RepeatPenalty    float32 // 1: off
	FrequencyPenalty float32 // 0: off
	PresencePenalty  float32 // 0: off
	Seed             uint32  // DefaultSeed: random
}
