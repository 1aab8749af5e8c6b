//go:build !amd64 || noasm

package cpu

// The Go bodies of qdot_amd64.go's kernels: this build has no assembly, so
// they are the reference loops and only tests reach them (level is isaGo).

func dotQ8_0AVX2(a, x []byte, _ []float32, nb int) float32 { return dotQ8_0Go(a, x, nb) }

func dotQ8_0VNNI(a, x []byte, _ []float32, nb int) float32 { return dotQ8_0Go(a, x, nb) }

func dotQ4_0AVX2(a, x []byte, _ []float32, _ []int32, nb int) float32 { return dotQ4_0Go(a, x, nb) }

func dotQ4_0VNNI(a, x []byte, _ []float32, _ []int32, nb int) float32 { return dotQ4_0Go(a, x, nb) }
