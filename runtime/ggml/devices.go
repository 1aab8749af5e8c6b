package ggml

import (
	"fmt"

	"github.com/graphc/graphc/internal/ggmlapi"
)

// DeviceInfo is one ggml device as ggml_backend_dev_* describe it.
type DeviceInfo struct {
	Name        string // ggml's: "Vulkan0", "CUDA0", "Metal", "CPU"
	Description string
	Type        string // "CPU", "GPU", "IGPU", "ACCEL" or "META"
	Free, Total uint64 // memory in bytes
	// HostMemory: the device's default buffer type is host memory (the
	// CPU's, or unified memory ggml reports as host).
	HostMemory bool
	BufferType string
}

// Type names of enum ggml_backend_dev_type, in its order (ggml ≥ 0.9,
// which added IGPU before ACCEL).
var devTypes = []string{"CPU", "GPU", "IGPU", "ACCEL", "META"}

// Devices loads ggml (Load) and lists its devices in ggml's order.
func Devices() ([]DeviceInfo, error) {
	a, err := lib()
	if err != nil {
		return nil, err
	}
	var out []DeviceInfo
	for i := range a.DevCount() {
		out = append(out, a.describe(a.DevGet(i)))
	}
	return out, nil
}

func (a *api) describe(d ggmlapi.Device) DeviceInfo {
	var free, total uintptr
	a.DevMemory(d, &free, &total)
	typ := fmt.Sprintf("type %d", a.DevType(d))
	if t := a.DevType(d); t >= 0 && int(t) < len(devTypes) {
		typ = devTypes[t]
	}
	bt := a.DevBufferType(d)
	return DeviceInfo{
		Name: a.DevName(d), Description: a.DevDescription(d), Type: typ,
		Free: uint64(free), Total: uint64(total),
		HostMemory: bt != 0 && a.BuftIsHost(bt), BufferType: a.BuftName(bt),
	}
}

// Version returns the loaded ggml's version and commit.
func Version() (version, commit string, err error) {
	a, err := lib()
	if err != nil {
		return "", "", err
	}
	return a.Version(), a.Commit(), nil
}
