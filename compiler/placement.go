package compiler

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/graphc/graphc/ir"
)

// Placement holds the weight-placement controls llama.cpp users know:
// tensor overrides by name pattern (llama.cpp's -ot) and a number of layers
// on the first backend (-ngl).
type Placement struct {
	// Overrides place every weight and state whose name matches Pattern on
	// Backend; the first matching rule wins, and rules beat a declaration's
	// own `on`.
	Overrides []Override
	// GPULayers, when set, puts the weights and state of the last
	// GPULayers layers on the target's first backend, and the output layer
	// too when it exceeds the number of layers (llama.cpp's -ngl). A
	// tensor's layer is the N of a "blk.N." in its name, or of a "_lN"
	// suffix (cache_k_l3).
	GPULayers *int
	// Layers generalizes GPULayers to every backend but the last: the
	// last Layers[0] layers go on the first backend, the Layers[1] before
	// them on the second, and so on; the rest stay on the last. The output
	// layer goes on the first backend when Layers[0] exceeds the number of
	// layers, as with GPULayers. -fit sets it; it wins over GPULayers.
	Layers []int
}

// Override is one pattern rule.
type Override struct {
	Pattern *regexp.Regexp
	Backend string
	// Flag is the flag that made the rule when it is not an -ot of its
	// own: "-cpu-moe" or "-n-cpu-moe N" (CPUMoE, NCPUMoE).
	Flag string
}

// expertsPattern is llama.cpp's LLM_FFN_EXPS_REGEX (common/common.h): the
// names of the experts' weights of a mixture of experts,
// blk.N.ffn_{up,down,gate,gate_up}_exps and their _chexps variants.
const expertsPattern = `\.ffn_(up|down|gate|gate_up)_(ch|)exps`

// CPUMoE is -cpu-moe's rule, llama.cpp's --cpu-moe: every expert weight
// on the cpu (llm_ffn_exps_cpu_override).
func CPUMoE() Override {
	return Override{Pattern: regexp.MustCompile(expertsPattern), Backend: "cpu", Flag: "-cpu-moe"}
}

// NCPUMoE are -n-cpu-moe n's rules, llama.cpp's --n-cpu-moe: the expert
// weights of layers 0 to n-1 on the cpu, one rule per layer
// (llm_ffn_exps_block_regex).
func NCPUMoE(n int) []Override {
	var rules []Override
	for l := range n {
		rules = append(rules, Override{Pattern: regexp.MustCompile(fmt.Sprintf(`blk\.%d%s`, l, expertsPattern)), Backend: "cpu", Flag: fmt.Sprintf("-n-cpu-moe %d", n)})
	}
	return rules
}

// ParseOverride parses "REGEX=BACKEND".
func ParseOverride(s string) (Override, error) {
	i := strings.LastIndex(s, "=")
	if i <= 0 || i == len(s)-1 {
		return Override{}, fmt.Errorf("want REGEX=BACKEND, got %q", s)
	}
	re, err := regexp.Compile(s[:i])
	if err != nil {
		return Override{}, fmt.Errorf("%q: %v", s[:i], err)
	}
	return Override{Pattern: re, Backend: s[i+1:]}, nil
}

var layerPatterns = []*regexp.Regexp{regexp.MustCompile(`(?:^|\.)blk\.(\d+)\.`), regexp.MustCompile(`_l(\d+)$`)}

// layerOf returns the layer a tensor name belongs to, or -1.
func layerOf(name string) int {
	for _, re := range layerPatterns {
		if m := re.FindStringSubmatch(name); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
	}
	return -1
}

// apply sets the Placement of g's weights and state; target is the backend
// list in priority order. It warns of every override that places nothing:
// a pattern with a typo would otherwise leave the model where it was
// without a word.
func (p *Placement) apply(g *ir.Graph, target []string) (warnings []string) {
	// A flag's rules warn together: -n-cpu-moe N for more layers than
	// the model has is llama.cpp's usage too.
	flagMatched := map[string]bool{}
	var flags []string
	for _, o := range p.Overrides {
		matched := false
		for _, t := range g.Params {
			matched = matched || o.Pattern.MatchString(t.Name)
		}
		if o.Flag != "" {
			if _, ok := flagMatched[o.Flag]; !ok {
				flags = append(flags, o.Flag)
			}
			flagMatched[o.Flag] = flagMatched[o.Flag] || matched
			continue
		}
		if !matched {
			warnings = append(warnings, fmt.Sprintf("-ot %s=%s matches no weight or state", o.Pattern, o.Backend))
		}
	}
	for _, f := range flags {
		if !flagMatched[f] {
			warnings = append(warnings, fmt.Sprintf("%s matches no expert weight (blk.N.ffn_up_exps and the like): the model has no mixture of experts", f))
		}
	}
	nLayer := 0
	for _, t := range g.Params {
		nLayer = max(nLayer, layerOf(t.Name)+1)
	}
	layers := p.Layers
	if layers == nil && p.GPULayers != nil {
		layers = []int{*p.GPULayers}
	}
	for _, t := range g.Params {
		if o, ok := p.match(t.Name); ok {
			t.Placement = o.Backend
			continue
		}
		if t.Placement != "" || layers == nil || len(target) < 2 {
			continue
		}
		t.Placement = target[layerBackend(layerOf(t.Name), t.Name, nLayer, layers, len(target))]
	}
	return warnings
}

// layerBackend is the target index of the backend that holds layer l of
// nLayer (-1: not in a layer) when the last layers[0] layers go on backend
// 0, the layers[1] before them on backend 1, …, the rest on the last of
// nBackend backends. Only the first backend takes the output layer, as
// llama.cpp's -ngl does.
func layerBackend(l int, name string, nLayer int, layers []int, nBackend int) int {
	last := nBackend - 1
	if l < 0 {
		if strings.HasPrefix(name, "output") && len(layers) > 0 && layers[0] > nLayer {
			return 0
		}
		return last
	}
	end := nLayer
	for b, n := range layers {
		if b >= last {
			break
		}
		if l >= end-n {
			return b
		}
		end -= n
	}
	return last
}

func (p *Placement) match(name string) (Override, bool) {
	for _, o := range p.Overrides {
		if o.Pattern.MatchString(name) {
			return o, true
		}
	}
	return Override{}, false
}
