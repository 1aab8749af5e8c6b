package ggml

import (
	"fmt"
	"unsafe"
)

// Handles to ggml's objects. They are C pointers ggml owns; graphc never
// reads through them.
type (
	context  uintptr // struct ggml_context *
	gtensor  uintptr // struct ggml_tensor *
	cgraph   uintptr // struct ggml_cgraph *
	device   uintptr // ggml_backend_dev_t
	backendT uintptr // ggml_backend_t
	buftype  uintptr // ggml_backend_buffer_type_t
	buffer   uintptr // ggml_backend_buffer_t
)

// api is the part of ggml's C API graphc calls: functions only, so that
// nothing depends on the layout of ggml's structs. Each field is bound to
// the symbol named in its tag.
type api struct {
	version func() string `sym:"ggml_version"`
	commit  func() string `sym:"ggml_commit"`

	sym          func(name string) uintptr   // the loaded libraries' symbols, for bindings made later (cpumulmat.go)
	initSym      uintptr                     // ggml_init takes a struct by value: see initContext
	free         func(context)               `sym:"ggml_free"`
	getMemSize   func(context) uintptr       `sym:"ggml_get_mem_size"`
	getNoAlloc   func(context) bool          `sym:"ggml_get_no_alloc"`
	getMemBuffer func(context) uintptr       `sym:"ggml_get_mem_buffer"`
	tensorOver   func() uintptr              `sym:"ggml_tensor_overhead"`
	graphOver    func(uintptr, bool) uintptr `sym:"ggml_graph_overhead_custom"`

	newTensor1d func(context, int32, int64) gtensor                                                            `sym:"ggml_new_tensor_1d"`
	newTensor4d func(context, int32, int64, int64, int64, int64) gtensor                                       `sym:"ggml_new_tensor_4d"`
	view4d      func(context, gtensor, int64, int64, int64, int64, uintptr, uintptr, uintptr, uintptr) gtensor `sym:"ggml_view_4d"`
	permute     func(context, gtensor, int32, int32, int32, int32) gtensor                                     `sym:"ggml_permute"`
	nbytes      func(gtensor) uintptr                                                                          `sym:"ggml_nbytes"`
	sameShape   func(gtensor, gtensor) bool                                                                    `sym:"ggml_are_same_shape"`
	setOutput   func(gtensor)                                                                                  `sym:"ggml_set_output"`
	opDesc      func(gtensor) string                                                                           `sym:"ggml_op_desc"`
	typeName    func(int32) string                                                                             `sym:"ggml_type_name"`

	mulMat     func(context, gtensor, gtensor) gtensor                                                                                     `sym:"ggml_mul_mat"`
	add        func(context, gtensor, gtensor) gtensor                                                                                     `sym:"ggml_add"`
	sub        func(context, gtensor, gtensor) gtensor                                                                                     `sym:"ggml_sub"`
	mul        func(context, gtensor, gtensor) gtensor                                                                                     `sym:"ggml_mul"`
	div        func(context, gtensor, gtensor) gtensor                                                                                     `sym:"ggml_div"`
	scale      func(context, gtensor, float32) gtensor                                                                                     `sym:"ggml_scale"`
	relu       func(context, gtensor) gtensor                                                                                              `sym:"ggml_relu"`
	gelu       func(context, gtensor) gtensor                                                                                              `sym:"ggml_gelu"`
	silu       func(context, gtensor) gtensor                                                                                              `sym:"ggml_silu"`
	tanh       func(context, gtensor) gtensor                                                                                              `sym:"ggml_tanh"`
	rmsNorm    func(context, gtensor, float32) gtensor                                                                                     `sym:"ggml_rms_norm"`
	norm       func(context, gtensor, float32) gtensor                                                                                     `sym:"ggml_norm"`
	softMaxExt func(context, gtensor, gtensor, float32, float32) gtensor                                                                   `sym:"ggml_soft_max_ext"`
	ropeExt    func(context, gtensor, gtensor, gtensor, int32, int32, int32, float32, float32, float32, float32, float32, float32) gtensor `sym:"ggml_rope_ext"`
	getRows    func(context, gtensor, gtensor) gtensor                                                                                     `sym:"ggml_get_rows"`
	cpy        func(context, gtensor, gtensor) gtensor                                                                                     `sym:"ggml_cpy"`
	cont       func(context, gtensor) gtensor                                                                                              `sym:"ggml_cont"`

	newGraphCustom     func(context, uintptr, bool) cgraph `sym:"ggml_new_graph_custom"`
	buildForwardExpand func(cgraph, gtensor)               `sym:"ggml_build_forward_expand"`
	graphNNodes        func(cgraph) int32                  `sym:"ggml_graph_n_nodes"`

	devCount       func() uintptr                   `sym:"ggml_backend_dev_count"`
	devGet         func(uintptr) device             `sym:"ggml_backend_dev_get"`
	devName        func(device) string              `sym:"ggml_backend_dev_name"`
	devDescription func(device) string              `sym:"ggml_backend_dev_description"`
	devMemory      func(device, *uintptr, *uintptr) `sym:"ggml_backend_dev_memory"`
	devType        func(device) int32               `sym:"ggml_backend_dev_type"`
	devInit        func(device, uintptr) backendT   `sym:"ggml_backend_dev_init"`
	devBufferType  func(device) buftype             `sym:"ggml_backend_dev_buffer_type"`
	devSupportsOp  func(device, gtensor) bool       `sym:"ggml_backend_dev_supports_op"`
	loadAllFrom    func(string)                     `sym:"ggml_backend_load_all_from_path"`

	buftName        func(buftype) string                 `sym:"ggml_backend_buft_name"`
	buftAllocBuffer func(buftype, uintptr) buffer        `sym:"ggml_backend_buft_alloc_buffer"`
	buftAlignment   func(buftype) uintptr                `sym:"ggml_backend_buft_get_alignment"`
	buftMaxSize     func(buftype) uintptr                `sym:"ggml_backend_buft_get_max_size"`
	buftIsHost      func(buftype) bool                   `sym:"ggml_backend_buft_is_host"`
	bufferBase      func(buffer) uintptr                 `sym:"ggml_backend_buffer_get_base"`
	bufferFree      func(buffer)                         `sym:"ggml_backend_buffer_free"`
	bufferClear     func(buffer, uint8)                  `sym:"ggml_backend_buffer_clear"`
	tensorAlloc     func(buffer, gtensor, uintptr) int32 `sym:"ggml_backend_tensor_alloc"`
	viewInit        func(gtensor) int32                  `sym:"ggml_backend_view_init"`

	tensorSet       func(gtensor, unsafe.Pointer, uintptr, uintptr)           `sym:"ggml_backend_tensor_set"`
	tensorGet       func(gtensor, unsafe.Pointer, uintptr, uintptr)           `sym:"ggml_backend_tensor_get"`
	tensorSetAsync  func(backendT, gtensor, unsafe.Pointer, uintptr, uintptr) `sym:"ggml_backend_tensor_set_async"`
	tensorGetAsync  func(backendT, gtensor, unsafe.Pointer, uintptr, uintptr) `sym:"ggml_backend_tensor_get_async"`
	tensorCopyAsync func(backendT, backendT, gtensor, gtensor)                `sym:"ggml_backend_tensor_copy_async"`

	backendName       func(backendT) string        `sym:"ggml_backend_name"`
	backendFree       func(backendT)               `sym:"ggml_backend_free"`
	synchronize       func(backendT)               `sym:"ggml_backend_synchronize"`
	graphComputeAsync func(backendT, cgraph) int32 `sym:"ggml_backend_graph_compute_async"`

	eventNew         func(device) uintptr    `sym:"ggml_backend_event_new"`
	eventFree        func(uintptr)           `sym:"ggml_backend_event_free"`
	eventRecord      func(uintptr, backendT) `sym:"ggml_backend_event_record"`
	eventSynchronize func(uintptr)           `sym:"ggml_backend_event_synchronize"`
	eventWait        func(backendT, uintptr) `sym:"ggml_backend_event_wait"`
}

// bind binds every field of a to its symbol, looked up by sym (0: not
// found). A missing symbol means a ggml whose API graphc does not know.
func (a *api) bind(sym func(name string) uintptr) error {
	a.initSym = sym("ggml_init")
	if a.initSym == 0 {
		return fmt.Errorf("symbol ggml_init missing")
	}
	return bindFields(a, sym)
}
