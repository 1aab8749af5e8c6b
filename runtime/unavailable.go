package runtime

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

func (u *Unavailable) Name() string                                   { return u.BackendName }
func (u *Unavailable) BufferType() BufferType                         { u.fail(); return BufferType{} }
func (u *Unavailable) Async() bool                                    { return true }
func (u *Unavailable) Alloc(int) ([]byte, error)                      { u.fail(); return nil, nil }
func (u *Unavailable) SetTensor(dst, src *Tensor)                     { u.fail() }
func (u *Unavailable) GetTensor(dst, src *Tensor)                     { u.fail() }
func (u *Unavailable) GetTensorAsync(dst, src *Tensor)                { u.fail() }
func (u *Unavailable) CopyTensorAsync(Backend, *Tensor, *Tensor) bool { u.fail(); return false }
func (u *Unavailable) Synchronize()                                   { u.fail() }
func (u *Unavailable) NewEvent() Event                                { u.fail(); return nil }
func (u *Unavailable) WaitEvent(Event)                                { u.fail() }
func (u *Unavailable) Err() error                                     { return nil }
func (u *Unavailable) Close()                                         {}

func (u *Unavailable) MulMat(dst, a, x *Tensor)                             { u.fail() }
func (u *Unavailable) Add(dst, a, x *Tensor)                                { u.fail() }
func (u *Unavailable) Sub(dst, a, x *Tensor)                                { u.fail() }
func (u *Unavailable) Mul(dst, a, x *Tensor)                                { u.fail() }
func (u *Unavailable) Div(dst, a, x *Tensor)                                { u.fail() }
func (u *Unavailable) Scale(dst, a *Tensor, s float32)                      { u.fail() }
func (u *Unavailable) Relu(dst, a *Tensor)                                  { u.fail() }
func (u *Unavailable) Gelu(dst, a *Tensor)                                  { u.fail() }
func (u *Unavailable) Silu(dst, a *Tensor)                                  { u.fail() }
func (u *Unavailable) RMSNorm(dst, a *Tensor, eps float32)                  { u.fail() }
func (u *Unavailable) Norm(dst, a *Tensor, eps float32)                     { u.fail() }
func (u *Unavailable) SoftMax(dst, a, mask *Tensor, scale, maxBias float32) { u.fail() }
func (u *Unavailable) Rope(dst, a, pos *Tensor, p RopeParams)               { u.fail() }
func (u *Unavailable) GetRows(dst, table, idx *Tensor)                      { u.fail() }
func (u *Unavailable) Cpy(dst, src *Tensor)                                 { u.fail() }
