package cpu

// dot_amd64.s and vec_amd64.s are generated from one description of each
// kernel family, per element type and instruction set, by the avo program
// in _gen: a module of its own, so that graphc's users never depend on avo.
//
//go:generate go -C _gen run .
