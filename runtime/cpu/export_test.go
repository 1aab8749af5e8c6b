package cpu

// GeluTable exposes ggml_table_gelu_f16's equivalent to the tests.
func GeluTable() *[1 << 16]uint16 {
	geluOnce.Do(initGelu)
	return &geluTable
}

// SetMinWork sets the least work per thread (1 splits every op as far as it
// goes) and returns a function restoring the old value. Not concurrency-safe:
// only for tests that do not run in parallel.
func SetMinWork(n int) (restore func()) {
	old := minWork
	minWork = n
	return func() { minWork = old }
}
