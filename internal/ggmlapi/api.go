package ggmlapi

import (
	"fmt"
	"unsafe"
)

// Handles to ggml's objects. They are C pointers ggml owns; graphc never
// reads through them.
type (
	Context uintptr // struct ggml_context *
	Tensor  uintptr // struct ggml_tensor *
	Graph   uintptr // struct ggml_cgraph *
	Device  uintptr // ggml_backend_dev_t
	Backend uintptr // ggml_backend_t
	BufType uintptr // ggml_backend_buffer_type_t
	Buffer  uintptr // ggml_backend_buffer_t
)

// API is the part of ggml's C API graphc calls: functions only, so that
// nothing depends on the layout of ggml's structs. Each field is bound to
// the symbol named in its tag.
type API struct {
	Version func() string `sym:"ggml_version"`
	Commit  func() string `sym:"ggml_commit"`

	Sym          func(name string) uintptr   // the loaded libraries' symbols, for bindings made later (internal/bench's ggml CPU product)
	initSym      uintptr                     // ggml_init takes a struct by value: see InitContext
	Free         func(Context)               `sym:"ggml_free"`
	GetMemSize   func(Context) uintptr       `sym:"ggml_get_mem_size"`
	GetNoAlloc   func(Context) bool          `sym:"ggml_get_no_alloc"`
	GetMemBuffer func(Context) uintptr       `sym:"ggml_get_mem_buffer"`
	TensorOver   func() uintptr              `sym:"ggml_tensor_overhead"`
	GraphOver    func(uintptr, bool) uintptr `sym:"ggml_graph_overhead_custom"`

	NewTensor1d func(Context, int32, int64) Tensor                                                           `sym:"ggml_new_tensor_1d"`
	NewTensor4d func(Context, int32, int64, int64, int64, int64) Tensor                                      `sym:"ggml_new_tensor_4d"`
	View4d      func(Context, Tensor, int64, int64, int64, int64, uintptr, uintptr, uintptr, uintptr) Tensor `sym:"ggml_view_4d"`
	Permute     func(Context, Tensor, int32, int32, int32, int32) Tensor                                     `sym:"ggml_permute"`
	Nbytes      func(Tensor) uintptr                                                                         `sym:"ggml_nbytes"`
	SameShape   func(Tensor, Tensor) bool                                                                    `sym:"ggml_are_same_shape"`
	SetOutput   func(Tensor)                                                                                 `sym:"ggml_set_output"`
	OpDesc      func(Tensor) string                                                                          `sym:"ggml_op_desc"`
	TypeName    func(int32) string                                                                           `sym:"ggml_type_name"`

	MulMat              func(Context, Tensor, Tensor) Tensor                                                                                    `sym:"ggml_mul_mat"`
	MulMatSetPrec       func(Tensor, int32)                                                                                                     `sym:"ggml_mul_mat_set_prec"`
	Add                 func(Context, Tensor, Tensor) Tensor                                                                                    `sym:"ggml_add"`
	Sub                 func(Context, Tensor, Tensor) Tensor                                                                                    `sym:"ggml_sub"`
	Mul                 func(Context, Tensor, Tensor) Tensor                                                                                    `sym:"ggml_mul"`
	Div                 func(Context, Tensor, Tensor) Tensor                                                                                    `sym:"ggml_div"`
	Scale               func(Context, Tensor, float32) Tensor                                                                                   `sym:"ggml_scale"`
	Relu                func(Context, Tensor) Tensor                                                                                            `sym:"ggml_relu"`
	Gelu                func(Context, Tensor) Tensor                                                                                            `sym:"ggml_gelu"`
	Silu                func(Context, Tensor) Tensor                                                                                            `sym:"ggml_silu"`
	Tanh                func(Context, Tensor) Tensor                                                                                            `sym:"ggml_tanh"`
	Sigmoid             func(Context, Tensor) Tensor                                                                                            `sym:"ggml_sigmoid"`
	RmsNorm             func(Context, Tensor, float32) Tensor                                                                                   `sym:"ggml_rms_norm"`
	Norm                func(Context, Tensor, float32) Tensor                                                                                   `sym:"ggml_norm"`
	SoftMaxExt          func(Context, Tensor, Tensor, float32, float32) Tensor                                                                  `sym:"ggml_soft_max_ext"`
	RopeExt             func(Context, Tensor, Tensor, Tensor, int32, int32, int32, float32, float32, float32, float32, float32, float32) Tensor `sym:"ggml_rope_ext"`
	GetRows             func(Context, Tensor, Tensor) Tensor                                                                                    `sym:"ggml_get_rows"`
	Cpy                 func(Context, Tensor, Tensor) Tensor                                                                                    `sym:"ggml_cpy"`
	Cont                func(Context, Tensor) Tensor                                                                                            `sym:"ggml_cont"`
	Cast                func(Context, Tensor, int32) Tensor                                                                                     `sym:"ggml_cast"`
	FlashAttnExt        func(Context, Tensor, Tensor, Tensor, Tensor, float32, float32, float32) Tensor                                         `sym:"ggml_flash_attn_ext"`
	FlashAttnExtSetPrec func(Tensor, int32)                                                                                                     `sym:"ggml_flash_attn_ext_set_prec"`
	MulMatID            func(Context, Tensor, Tensor, Tensor) Tensor                                                                            `sym:"ggml_mul_mat_id"`
	Argsort             func(Context, Tensor, int32) Tensor                                                                                     `sym:"ggml_argsort"`
	TopK                func(Context, Tensor, int32) Tensor                                                                                     `sym:"ggml_top_k"`
	SumRows             func(Context, Tensor) Tensor                                                                                            `sym:"ggml_sum_rows"`

	NewGraphCustom     func(Context, uintptr, bool) Graph `sym:"ggml_new_graph_custom"`
	BuildForwardExpand func(Graph, Tensor)                `sym:"ggml_build_forward_expand"`
	GraphNNodes        func(Graph) int32                  `sym:"ggml_graph_n_nodes"`

	DevCount       func() uintptr                   `sym:"ggml_backend_dev_count"`
	DevGet         func(uintptr) Device             `sym:"ggml_backend_dev_get"`
	DevName        func(Device) string              `sym:"ggml_backend_dev_name"`
	DevDescription func(Device) string              `sym:"ggml_backend_dev_description"`
	DevMemory      func(Device, *uintptr, *uintptr) `sym:"ggml_backend_dev_memory"`
	DevType        func(Device) int32               `sym:"ggml_backend_dev_type"`
	DevInit        func(Device, uintptr) Backend    `sym:"ggml_backend_dev_init"`
	DevBufferType  func(Device) BufType             `sym:"ggml_backend_dev_buffer_type"`
	DevSupportsOp  func(Device, Tensor) bool        `sym:"ggml_backend_dev_supports_op"`
	LoadAllFrom    func(string)                     `sym:"ggml_backend_load_all_from_path"`

	BuftName        func(BufType) string                `sym:"ggml_backend_buft_name"`
	BuftAllocBuffer func(BufType, uintptr) Buffer       `sym:"ggml_backend_buft_alloc_buffer"`
	BuftAlignment   func(BufType) uintptr               `sym:"ggml_backend_buft_get_alignment"`
	BuftMaxSize     func(BufType) uintptr               `sym:"ggml_backend_buft_get_max_size"`
	BuftIsHost      func(BufType) bool                  `sym:"ggml_backend_buft_is_host"`
	BufferBase      func(Buffer) uintptr                `sym:"ggml_backend_buffer_get_base"`
	BufferFree      func(Buffer)                        `sym:"ggml_backend_buffer_free"`
	BufferClear     func(Buffer, uint8)                 `sym:"ggml_backend_buffer_clear"`
	TensorAlloc     func(Buffer, Tensor, uintptr) int32 `sym:"ggml_backend_tensor_alloc"`
	ViewInit        func(Tensor) int32                  `sym:"ggml_backend_view_init"`

	TensorSet       func(Tensor, unsafe.Pointer, uintptr, uintptr)          `sym:"ggml_backend_tensor_set"`
	TensorGet       func(Tensor, unsafe.Pointer, uintptr, uintptr)          `sym:"ggml_backend_tensor_get"`
	TensorSetAsync  func(Backend, Tensor, unsafe.Pointer, uintptr, uintptr) `sym:"ggml_backend_tensor_set_async"`
	TensorGetAsync  func(Backend, Tensor, unsafe.Pointer, uintptr, uintptr) `sym:"ggml_backend_tensor_get_async"`
	TensorCopyAsync func(Backend, Backend, Tensor, Tensor)                  `sym:"ggml_backend_tensor_copy_async"`

	BackendName       func(Backend) string       `sym:"ggml_backend_name"`
	BackendFree       func(Backend)              `sym:"ggml_backend_free"`
	Synchronize       func(Backend)              `sym:"ggml_backend_synchronize"`
	GraphComputeAsync func(Backend, Graph) int32 `sym:"ggml_backend_graph_compute_async"`

	EventNew         func(Device) uintptr   `sym:"ggml_backend_event_new"`
	EventFree        func(uintptr)          `sym:"ggml_backend_event_free"`
	EventRecord      func(uintptr, Backend) `sym:"ggml_backend_event_record"`
	EventSynchronize func(uintptr)          `sym:"ggml_backend_event_synchronize"`
	EventWait        func(Backend, uintptr) `sym:"ggml_backend_event_wait"`
}

// bind binds every field of a to its symbol, looked up by sym (0: not
// found). A missing symbol means a ggml whose API graphc does not know.
func (a *API) bind(sym func(name string) uintptr) error {
	a.initSym = sym("ggml_init")
	if a.initSym == 0 {
		return fmt.Errorf("symbol ggml_init missing")
	}
	return BindFields(a, sym)
}
