// Package mainutil holds what only the main programs graphc generates
// (compile -main, graphc run) use: the fill expressions' helpers, which
// flags were given, and printing the outputs as text or JSON.
package mainutil
