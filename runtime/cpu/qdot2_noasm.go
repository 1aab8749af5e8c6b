//go:build !amd64 || noasm

package cpu

// The Go bodies of qdot2_amd64.go's kernels: this build has no assembly,
// so they are the reference loops and only tests reach them (level is
// isaGo).

func dotQ5_0AVX2(a, x []byte, _ []float32, _ []int32, nb int) float32 { return dotQ5_0Go(a, x, nb) }

func dotQ5_0VNNI(a, x []byte, _ []float32, _ []int32, nb int) float32 { return dotQ5_0Go(a, x, nb) }

func dotIQ4_NLAVX2(a, x []byte, _ []float32, nb int) float32 { return dotIQ4_NLGo(a, x, nb) }

func dotIQ4_NLVNNI(a, x []byte, _ []float32, nb int) float32 { return dotIQ4_NLGo(a, x, nb) }

func dotQ4_1AVX2(a, x []byte, nb int) float32 { return dotQ4_1Go(a, x, nb) }

func dotQ4_1VNNI(a, x []byte, nb int) float32 { return dotQ4_1Go(a, x, nb) }

func dotQ5_1AVX2(a, x []byte, nb int) float32 { return dotQ5_1Go(a, x, nb) }

func dotQ5_1VNNI(a, x []byte, nb int) float32 { return dotQ5_1Go(a, x, nb) }
