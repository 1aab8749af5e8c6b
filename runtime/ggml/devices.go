package ggml

import "fmt"

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
	for i := range a.devCount() {
		out = append(out, a.describe(a.devGet(i)))
	}
	return out, nil
}

func (a *api) describe(d device) DeviceInfo {
	var free, total uintptr
	a.devMemory(d, &free, &total)
	typ := fmt.Sprintf("type %d", a.devType(d))
	if t := a.devType(d); t >= 0 && int(t) < len(devTypes) {
		typ = devTypes[t]
	}
	bt := a.devBufferType(d)
	return DeviceInfo{
		Name: a.devName(d), Description: a.devDescription(d), Type: typ,
		Free: uint64(free), Total: uint64(total),
		HostMemory: bt != 0 && a.buftIsHost(bt), BufferType: a.buftName(bt),
	}
}

// Version returns the loaded ggml's version and commit.
func Version() (version, commit string, err error) {
	a, err := lib()
	if err != nil {
		return "", "", err
	}
	return a.version(), a.commit(), nil
}
