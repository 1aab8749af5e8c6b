// Package libs finds the shared libraries graphc's backends load at run
// time (OpenBLAS, ggml and its device backends) by searching the file
// system as the system's dynamic loader does, without loading anything:
// the compiler asks it whether a backend can run here, the runtime where to
// load from, so that both search the same way. Loading is runtime/native's.
package libs
