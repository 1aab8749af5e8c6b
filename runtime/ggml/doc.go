// Package ggml runs graphc's plans on ggml's own device backends (CUDA,
// Metal, Vulkan, CPU), loaded at run time without cgo through purego.
//
// Load finds (backend/libs.FindGGML says where it looks) and loads the
// libraries; the functions it binds (internal/ggmlapi) are ggml's public
// C API, never its structs' layouts, so that one graphc works with every
// ggml release whose API it knows (0.9.0 to 0.25.x). Open makes a graphc backend of one ggml device: the
// plan's buffers are ggml buffers of the device's buffer type, tensors sit
// at the plan's offsets, and each split's kernels become one ggml graph,
// built once per distinct shape and computed with
// ggml_backend_graph_compute_async. Check asks the device, when generated
// New opens it, about every op the plan gives it, constructed as the
// graphs will construct them; inputs are written with
// ggml_backend_tensor_set_async and copies between two ggml devices made
// with ggml_backend_tensor_copy_async.
package ggml
