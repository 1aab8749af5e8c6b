package engine

import (
	"bytes"
	"strings"
	"testing"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/tensor"
)

// deviceBackend is a host backend that claims device memory, so uploads
// copy and count.
type deviceBackend struct{ Backend }

func (deviceBackend) BufferType() backend.BufferType {
	return backend.BufferType{Name: "DEV", Alignment: 32}
}

func TestUploadProgress(t *testing.T) {
	cpuBT := backend.BufferType{Name: "CPU", Host: true, Alignment: 32}
	host := NewHostBackend("cpu", cpuBT)
	dev := deviceBackend{NewHostBackend("dev", cpuBT)}
	s, err := NewSched([]Backend{dev, host}, []backend.BufferType{dev.BufferType(), cpuBT}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	w := []tensor.Tensor{tensor.NewTensor(tensor.F32, [4]int{256, 1, 1, 1}), tensor.NewTensor(tensor.F32, [4]int{256, 1, 1, 1}), tensor.NewTensor(tensor.F32, [4]int{512, 1, 1, 1})}
	w[0].F32s()[3] = 7
	var out bytes.Buffer
	placed, err := uploadAll(s, []int{0, 1, 0}, w, 3072, &out)
	if err != nil {
		t.Fatal(err)
	}
	if &placed[1].Data[0] != &w[1].Data[0] || &placed[0].Data[0] == &w[0].Data[0] || placed[0].F32s()[3] != 7 {
		t.Error("host weights must be used in place, device weights copied")
	}
	if got := out.String(); !strings.Contains(got, "(33%)") || !strings.HasSuffix(got, "(100%)\n") {
		t.Errorf("progress: %q", got)
	}
}
