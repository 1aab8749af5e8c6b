// Package sim is the simulated discrete device, backend kind sim<N>: to
// the scheduler and to generated code a GPU — memory of its own reached
// only through copies, its own queue, events — with runtime/cpu's kernels
// underneath. It makes every multi-backend plan runnable on any machine,
// under the race detector, with the CPU's results bit for bit; a missing
// copy or a host access to device memory fails loudly (see Backend).
package sim
