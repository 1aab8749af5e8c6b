package cli

import (
	"math"
	"testing"
)

// TestRunPlacements runs the llama example placed by -fit and by the cost
// strategy on a simulated device and wants the CPU-only run's logits bit
// for bit: a placement moves work, never changes an answer.
func TestRunPlacements(t *testing.T) {
	needGo(t)
	const model = "../../examples/llama/llama.g"
	want, _ := runOutputs(t, model)
	for _, args := range [][]string{
		{"-backends", "sim0,cpu", "-fit", "-mem", "sim0=400KiB,cpu=1GiB"},
		{"-backends", "sim0,cpu", "-ngl", "2", "-placement", "cost"},
		{"-backends", "sim0,cpu", "-ngl", "4", "-placement", "cost", "-n-copies", "2"},
		{"-backends", "sim0,sim1,cpu", "-placement", "cost", "-ot", `blk\.[01]\.=sim0`, "-ot", `cache_._l[01]=sim0`, "-ot", `blk\.[23]\.=sim1`, "-ot", `cache_._l[23]=sim1`},
	} {
		got, _ := runOutputs(t, append(args, model)...)
		for out, w := range want {
			g := got[out]
			if len(g) != len(w) {
				t.Fatalf("%v: output %s has %d values, cpu-only %d", args, out, len(g), len(w))
			}
			for i := range w {
				if math.Float32bits(float32(g[i])) != math.Float32bits(float32(w[i])) {
					t.Fatalf("%v: output %s[%d] = %g, cpu-only %g: not bit for bit", args, out, i, g[i], w[i])
				}
			}
		}
	}
}
