package passes

import "github.com/graphc/graphc/ir"

// PlanMemory is plan_memory's entry function, for tests that schedule a
// graph by hand.
var PlanMemory = planMemory

// MemoryPlans runs every strategy on g (scheduled, not yet planned) and
// returns each one's planned size per buffer, and the lower and naive
// bounds, without changing g.
func MemoryPlans(g *ir.Graph) (sizes map[string][]int64, lower, naive []int64) {
	pc := &Context{}
	p := newMemProblem(g, pc)
	sizes = map[string][]int64{}
	for _, a := range []*memAssign{p.planGGML(), p.planGreedy(StrategyGreedySize, false, 0), p.planGreedy(StrategyGreedyBreadth, true, 0)} {
		for b := range p.bufs {
			sizes[a.name] = append(sizes[a.name], a.size(b))
		}
		if a.name == StrategyGGML {
			for b := range p.bufs {
				lo, na := p.bounds(a, b)
				lower, naive = append(lower, lo), append(naive, na)
			}
		}
	}
	return sizes, lower, naive
}
