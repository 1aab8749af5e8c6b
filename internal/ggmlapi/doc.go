// Package ggmlapi binds ggml's C API without cgo (purego): the libraries
// backend/libs finds are loaded once per process (Load), ggml's version
// checked, and API's function fields bound to ggml's public functions,
// never to its structs' layouts. runtime/ggml runs plans on ggml's devices
// with it, and internal/bench measures ggml's own CPU products with it
// (graphc bench -ggml), so that the measurement ships in no package a
// generated program links.
package ggmlapi
