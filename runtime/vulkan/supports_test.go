package vulkan_test

import (
	"testing"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/internal/devicetest"
)

// TestDescriptionsMatchDevices asks Vulkan0 and ggml's CPU device about
// every op of every example and wants backend.Vulkan's and the cpu's
// answers (see devicetest.DescriptionsMatchDevices).
func TestDescriptionsMatchDevices(t *testing.T) {
	devicetest.DescriptionsMatchDevices(t, "../../examples/*/*.g", "Vulkan0", backend.Vulkan(0))
}
