//go:build !amd64 || noasm

package cpu

// The Go bodies of kdot2_amd64.go's kernels: this build has no assembly,
// so they are the reference loops and only tests reach them (level is
// isaGo).

func dotQ2_KAVX2(a, x []byte, nb int) float32 { return dotQ2_KGo(a, x, nb) }

func dotQ2_KVNNI(a, x []byte, nb int) float32 { return dotQ2_KGo(a, x, nb) }

func dotQ3_KAVX2(a, x []byte, nb int) float32 { return dotQ3_KGo(a, x, nb) }

func dotQ3_KVNNI(a, x []byte, nb int) float32 { return dotQ3_KGo(a, x, nb) }

func dotIQ4_XSAVX2(a, x []byte, nb int) float32 { return dotIQ4_XSGo(a, x, nb) }

func dotIQ4_XSVNNI(a, x []byte, nb int) float32 { return dotIQ4_XSGo(a, x, nb) }
