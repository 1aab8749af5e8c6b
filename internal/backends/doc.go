// Package backends is the registry of backend kinds: one row per kind
// (cpu, blas, sim<N>, rpc<N>, cuda<N>, vulkan<N>, metal) saying how targets name it, what the
// compiler plans against, whether this machine can run it, and how
// generated code creates and drives it. The compiler and codegen both read
// it, so a backend name means the same thing to both, and adding a kind is
// one runtime package plus one row (see CONTRIBUTING.md).
package backends
