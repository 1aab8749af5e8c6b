package sample

import (
	"flag"
	"fmt"
	"math"
	"strconv"
)

// DefaultSeed asks for a random seed, as llama.cpp's LLAMA_DEFAULT_SEED.
const DefaultSeed uint32 = 0xFFFFFFFF

// Params are llama.cpp's common sampling parameters (common_params_sampling), with its defaults from Defaults().
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

// Defaults are common_params_sampling's defaults (common/common.h).
func Defaults() Params {
	return Params{
		Temp:          0.8,
		TopK:          40,
		TopP:          0.95,
		MinP:          0.05,
		TypicalP:      1,
		RepeatLastN:   64,
		RepeatPenalty: 1,
		Seed:          DefaultSeed,
	}
}

// Flags registers llama.cpp's flag names for p's fields on fs, with p's
// current values as their defaults.
func (p *Params) Flags(fs *flag.FlagSet) {
	fs.Var((*float32Value)(&p.Temp), "temp", "temperature (<= 0: greedy, the most likely token)")
	fs.IntVar(&p.TopK, "top-k", p.TopK, "top-k sampling (0 = disabled)")
	fs.Var((*float32Value)(&p.TopP), "top-p", "top-p sampling (1.0 = disabled)")
	fs.Var((*float32Value)(&p.MinP), "min-p", "min-p sampling (0.0 = disabled)")
	fs.Var((*float32Value)(&p.TypicalP), "typical", "locally typical sampling, parameter p (1.0 = disabled)")
	fs.IntVar(&p.RepeatLastN, "repeat-last-n", p.RepeatLastN, "last n tokens to consider for penalize (0 = disabled, -1 = the whole sequence)")
	fs.Var((*float32Value)(&p.RepeatPenalty), "repeat-penalty", "penalize repeat sequence of tokens (1.0 = disabled)")
	fs.Var((*float32Value)(&p.PresencePenalty), "presence-penalty", "repeat alpha presence penalty (0.0 = disabled)")
	fs.Var((*float32Value)(&p.FrequencyPenalty), "frequency-penalty", "repeat alpha frequency penalty (0.0 = disabled)")
	fs.Var((*seedValue)(&p.Seed), "seed", "RNG seed (-1 = random seed)")
}

// Check reports the first invalid value, naming its flag.
func (p Params) Check() error {
	bad := func(flag string, v any, want string) error {
		return fmt.Errorf("-%s %v: want %s", flag, v, want)
	}
	finite := func(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }
	switch {
	case !finite(p.Temp):
		return bad("temp", p.Temp, "a finite number")
	case !finite(p.TopP) || p.TopP <= 0 || p.TopP > 1:
		return bad("top-p", p.TopP, "a number in (0, 1]")
	case !finite(p.MinP) || p.MinP < 0 || p.MinP > 1:
		return bad("min-p", p.MinP, "a number in [0, 1]")
	case !finite(p.TypicalP) || p.TypicalP <= 0 || p.TypicalP > 1:
		return bad("typical", p.TypicalP, "a number in (0, 1]")
	case p.RepeatLastN < -1:
		return bad("repeat-last-n", p.RepeatLastN, "-1 or more")
	case !finite(p.RepeatPenalty) || p.RepeatPenalty <= 0:
		// 0 would turn every repeated logit into ±inf or NaN.
		return bad("repeat-penalty", p.RepeatPenalty, "a number > 0")
	case !finite(p.PresencePenalty):
		return bad("presence-penalty", p.PresencePenalty, "a finite number")
	case !finite(p.FrequencyPenalty):
		return bad("frequency-penalty", p.FrequencyPenalty, "a finite number")
	}
	return nil
}

// float32Value is a flag.Value for the float32 fields, which package flag
// lacks.
type float32Value float32

func (v *float32Value) String() string {
	return strconv.FormatFloat(float64(*v), 'g', -1, 32)
}

func (v *float32Value) Set(s string) error {
	f, err := strconv.ParseFloat(s, 32)
	if err != nil {
		return err
	}
	*v = float32Value(f)
	return nil
}

// seedValue is the seed's flag.Value: -1 is DefaultSeed, as llama.cpp's
// help calls it.
type seedValue uint32

func (v *seedValue) String() string {
	if uint32(*v) == DefaultSeed {
		return "-1"
	}
	return strconv.FormatUint(uint64(*v), 10)
}

func (v *seedValue) Set(s string) error {
	if s == "-1" {
		*v = seedValue(DefaultSeed)
		return nil
	}
	u, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return err
	}
	*v = seedValue(u)
	return nil
}
