package cuda_test

import (
	"testing"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/internal/devicetest"
)

// TestDescriptionsMatchDevices asks CUDA0 and ggml's CPU device about
// every op of every example and wants backend.CUDA's and the cpu's
// answers (see devicetest.DescriptionsMatchDevices).
func TestDescriptionsMatchDevices(t *testing.T) {
	devicetest.DescriptionsMatchDevices(t, "../../examples/*/*.g", "CUDA0", backend.CUDA(0))
}
