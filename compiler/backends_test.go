package compiler

import (
	"testing"

	"github.com/graphc/graphc/backend"
)

// TestTargetNames: a target accepts every kind of the registry and rejects
// what the registry rejects, with its error.
func TestTargetNames(t *testing.T) {
	for _, k := range backend.Kinds {
		name := k.Name
		if k.Indexed {
			name += "2"
		}
		target := []string{name, "cpu"}
		if name == "cpu" {
			target = target[1:]
		}
		out, err := Target(target, 0)
		if err != nil || out[0].Name != name {
			t.Errorf("Target(%q): %v", target, err)
		}
	}
	for _, name := range []string{"cuda00", "cuda-1", "cuda", "sim01", "cpu0", "metal0", "tpu0"} {
		_, err := Target([]string{name, "cpu"}, 0)
		_, _, want := backend.Parse(name)
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("Target(%s): %v, want %v", name, err, want)
		}
		if why := Unavailable([]string{name}); len(why) != 0 {
			t.Errorf("Unavailable(%s) = %q; names that are not backends are Target's to report", name, why)
		}
	}
}
