package cpu

// dot_amd64.s and vec_amd64.s are generated from one description of each
// kernel family, per element type and instruction set, by the avo program
// in _gen: a module of its own, so that graphc's users never depend on avo.
// The q6_K packed kernels and the AVX2 q4_K panel of eight, unrolled over
// a super-block's sub-blocks, are written by _gen/packedq6k.py and
// _gen/packedk8.py.
//
//go:generate go -C _gen run .
//go:generate sh -c "python3 _gen/packedq6k.py vnni > packedq6k_amd64.s && python3 _gen/packedq6k.py avx2 > packedq6k_avx2_amd64.s"
//go:generate sh -c "python3 _gen/packedk8.py > packedk8_avx2_amd64.s"
