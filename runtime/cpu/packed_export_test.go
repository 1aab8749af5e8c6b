package cpu

// The packed products' activation quantizer at the current level, and its
// Go loop.
var (
	QuantizeColumn   = quantizeColumn
	QuantizeColumnGo = quantizeColumnGo
)
