package ggml

import (
	"github.com/graphc/graphc/backend/libs"
	"github.com/graphc/graphc/internal/ggmlapi"
)

// api is ggml's C API as bound by internal/ggmlapi, with the methods this
// package adds to it (describe, kernelNodes, layout).
type api struct{ *ggmlapi.API }

// Load finds ggml's libraries (libs.FindGGML), loads them and the backends
// beside them (ggml_backend_load_all_from_path) once per process, and
// checks the version. Later calls return the first call's result.
func Load() (*libs.GGML, error) {
	_, where, err := ggmlapi.Load()
	return where, err
}

func lib() (*api, error) {
	a, _, err := ggmlapi.Load()
	if err != nil {
		return nil, err
	}
	return &api{a}, nil
}
