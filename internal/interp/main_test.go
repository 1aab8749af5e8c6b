package interp_test

import (
	"testing"

	"github.com/graphc/graphc/internal/isatest"
)

// TestMain runs the tests at each level of the CPU kernels the machine
// has (isatest.Main): models run in process on every level's kernels.
func TestMain(m *testing.M) { isatest.Main(m) }
