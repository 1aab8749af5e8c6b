// Package native loads the shared libraries graphc's backends drive
// without cgo (OpenBLAS, ggml) and returns a symbol lookup; backend/libs
// finds them. Loading happens only in packages generated programs import,
// so graphc itself stays a static binary.
package native
