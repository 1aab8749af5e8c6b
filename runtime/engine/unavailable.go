package engine

import (
	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/tensor"
)

// Unavailable stands for a backend whose execution layer this build of
// graphc does not have (CUDA, Metal): it has every method of Kernels and
// Backend, so that generated code for such targets compiles, and each one
// panics. Backend packages embed it in their Backend type; their New
// reports the reason instead of returning one.
type Unavailable struct {
	BackendName string
	Reason      string
}

var (
	_ Kernels = (*Unavailable)(nil)
	_ Backend = (*Unavailable)(nil)
)

func (u *Unavailable) fail() { panic("BUG: backend " + u.BackendName + " used: " + u.Reason) }

func (u *Unavailable) Name() string                           { return u.BackendName }
func (u *Unavailable) BufferType() backend.BufferType         { u.fail(); return backend.BufferType{} }
func (u *Unavailable) Async() bool                            { return true }
func (u *Unavailable) Alloc(int) ([]byte, error)              { u.fail(); return nil, nil }
func (u *Unavailable) SetTensor(dst, src *tensor.Tensor)      { u.fail() }
func (u *Unavailable) GetTensor(dst, src *tensor.Tensor)      { u.fail() }
func (u *Unavailable) GetTensorAsync(dst, src *tensor.Tensor) { u.fail() }
func (u *Unavailable) CopyTensorAsync(Backend, *tensor.Tensor, *tensor.Tensor) bool {
	u.fail()
	return false
}
func (u *Unavailable) Synchronize()    { u.fail() }
func (u *Unavailable) NewEvent() Event { u.fail(); return nil }
func (u *Unavailable) WaitEvent(Event) { u.fail() }
func (u *Unavailable) Err() error      { return nil }
func (u *Unavailable) Close()          {}
