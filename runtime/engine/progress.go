package engine

import (
	"fmt"
	"io"
	"os"

	"github.com/graphc/graphc/tensor"
)

// progressMin is the size from which uploads report progress: below it
// they take well under a second.
const progressMin = 64 << 20

// UploadAll places every weight in the memory of its backend (Upload),
// weight i on backends[i]. When the bytes to copy to devices reach 64 MiB
// and standard error is a terminal, it draws a progress line there; it is
// quiet otherwise.
func (s *Sched) UploadAll(backends []int, w []tensor.Tensor) ([]tensor.Tensor, error) {
	var total int64
	for i := range w {
		if !hostMemory(s.backends[backends[i]]) {
			total += int64(w[i].Span())
		}
	}
	var out io.Writer
	if total >= progressMin && isTerminal(os.Stderr) {
		out = os.Stderr
	}
	return uploadAll(s, backends, w, total, out)
}

func uploadAll(s *Sched, backends []int, w []tensor.Tensor, total int64, progress io.Writer) ([]tensor.Tensor, error) {
	placed := make([]tensor.Tensor, len(w))
	var done int64
	lastPct := -1
	for i := range w {
		var err error
		if placed[i], err = s.Upload(backends[i], &w[i]); err != nil {
			return nil, fmt.Errorf("weight %d: %w", i, err)
		}
		if progress == nil || hostMemory(s.backends[backends[i]]) {
			continue
		}
		done += int64(w[i].Span())
		if pct := int(done * 100 / total); pct != lastPct {
			lastPct = pct
			fmt.Fprintf(progress, "\rgraphc: uploading weights %d/%d MiB (%d%%)", done>>20, total>>20, pct)
		}
	}
	if progress != nil {
		fmt.Fprintln(progress)
	}
	return placed, nil
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
