// Package backend is the planner's view of the backends and their
// registry.
//
// A Description is what the compiler plans against for one backend: its
// buffer type and what it supports (ggml's supports_op, supports_buft,
// offload_op). Every backend's description is here (CPU, BLAS, Sim, CUDA,
// Vulkan, Metal, RPC), once: the compiler plans with it and the backend's
// runtime package uses the same one, so that the two agree.
//
// Kinds is the registry of backend kinds: one row per kind (cpu, blas,
// sim<N>, cuda<N>, vulkan<N>, metal, rpc<N>) saying how targets name it,
// what the compiler plans against, whether this machine can run it (found
// by backend/libs without loading anything), and how generated code
// creates and drives it. The compiler and codegen both read it, so a
// backend name means the same thing to both, and adding a kind is one
// runtime package plus one row (see CONTRIBUTING.md).
//
// The package links no kernels and loads no library: the compiler imports
// it, and the generated program imports only the runtime packages its
// target names.
package backend
