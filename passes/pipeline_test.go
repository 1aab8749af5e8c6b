package passes

import (
	"strings"
	"testing"

	"github.com/graphc/graphc/ir"
)

func TestPipelineOrderIsChecked(t *testing.T) {
	if err := checkPipeline(pipeline); err != nil {
		t.Fatalf("the pass table breaks its own constraints: %v", err)
	}
	swap := func(i, j int) []Pass {
		ps := append([]Pass(nil), pipeline...)
		ps[i], ps[j] = ps[j], ps[i]
		return ps
	}
	index := func(name string) int {
		for i, p := range pipeline {
			if p.Name == name {
				return i
			}
		}
		t.Fatalf("no pass %s", name)
		return -1
	}
	for _, c := range []struct {
		name string
		ps   []Pass
		want string
	}{
		{"memory before regions", swap(index("plan_regions"), index("plan_memory")), "plan_memory needs \"parallel regions\""},
		{"regions before splits", swap(index("split_graph"), index("plan_regions")), "plan_regions needs \"splits and their input copies\""},
		{"a pass twice", append(append([]Pass(nil), pipeline...), pipeline[0]), "assign_backends listed twice"},
		{"a fact twice", append(append([]Pass(nil), pipeline...), Pass{Name: "again", Fn: planMemory, Provides: []fact{offsets}}),
			"plan_memory and again both provide"},
	} {
		err := checkPipeline(c.ps)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

func TestRunRejectsUnknownThrough(t *testing.T) {
	err := Run(&ir.Graph{}, &Context{}, true, "split")
	if err == nil || !strings.Contains(err.Error(), `no pass "split"`) || !strings.Contains(err.Error(), "split_graph") {
		t.Fatalf("got %v, want an error naming the unknown pass and the real ones", err)
	}
}
