// Package mainutil holds what only the main programs graphc generates
// (compile -main, graphc run) use: the fill expressions' helpers and
// printing the outputs as text or JSON.
package mainutil
