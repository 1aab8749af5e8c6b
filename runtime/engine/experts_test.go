package engine_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/runtime/sim"
	"github.com/graphc/graphc/tensor"
)

// TestExpertRanges: runs of used experts merge into one range each, with
// ggml's padding of min(expert size, 512) bytes after every range but one
// ending at the last expert.
func TestExpertRanges(t *testing.T) {
	for _, c := range []struct {
		used  string // x: used
		size  int
		want  [][2]int
		count int
	}{
		{"x.......", 32, [][2]int{{0, 64}}, 1},
		{".xx..x.x", 32, [][2]int{{32, 128}, {160, 224}, {224, 256}}, 4},
		{"xxxxxxxx", 32, [][2]int{{0, 256}}, 8},
		{"......xx", 1024, [][2]int{{6144, 8192}}, 2},
		{"x.x.", 1024, [][2]int{{0, 1536}, {2048, 3584}}, 2},
		{"....", 64, nil, 0},
	} {
		used := make([]bool, len(c.used))
		for i, ch := range c.used {
			used[i] = ch == 'x'
		}
		ranges, n := engine.ExpertRanges(used, c.size)
		var got [][2]int
		for _, r := range ranges {
			got = append(got, [2]int{r.Off, r.End})
		}
		if !slices.Equal(got, c.want) || n != c.count {
			t.Errorf("%s, %d-byte experts: ranges %v (%d experts), want %v (%d)", c.used, c.size, got, n, c.want, c.count)
		}
	}
}

// expertCopy runs a one-split plan on sim0 whose only input is an expert
// copy of 8 experts of 32 bytes from the host, the ids on sim0, and
// returns the copy's bytes and the evaluation's statistics.
func expertCopy(t *testing.T, ids []int32) ([]float32, engine.Stats, error) {
	t.Helper()
	dev := sim.New(0, 1)
	s, err := engine.NewSched([]engine.Backend{dev, engine.NewHostBackend("cpu", backend.CPUBufferType)},
		[]backend.BufferType{backend.Sim(0).BufferType, backend.CPUBufferType},
		[]engine.SplitInfo{{Backend: 0, Inputs: 1, First: "up", Last: "up", Nodes: 1}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Synchronize(); dev.Close() })
	ne := [4]int{4, 2, 8, 1}
	w := tensor.NewTensor(tensor.F32, ne)
	for i := range w.F32s() {
		w.F32s()[i] = float32(i + 1)
	}
	mem, err := dev.Alloc(w.Span() + 64)
	if err != nil {
		t.Fatal(err)
	}
	dst := tensor.At(mem, 0, tensor.F32, ne, w.Nb)
	idsNe := [4]int{2, len(ids) / 2, 1, 1}
	idsDev := tensor.At(mem, w.Span(), tensor.I32, idsNe, tensor.ContiguousStrides(tensor.I32, idsNe))
	host := tensor.NewTensor(tensor.I32, idsNe)
	copy(host.I32s(), ids)
	s.Set(0, &idsDev, &host)

	s.Begin(0)
	func() {
		defer s.Recover(&err)
		s.BeginSplit(0)
		s.CopyExperts(0, 1, &dst, &w, 0, &idsDev, 7)
		s.Compute(0)
		s.EndSplit(0)
	}()
	if err != nil {
		return nil, engine.Stats{}, err
	}
	if err := s.End().Wait(); err != nil {
		t.Fatal(err)
	}
	got := s.Get(0, &dst)
	return got.F32s(), s.Stats(), nil
}

// TestCopyExperts: only the experts the ids name reach the device, with
// ggml's padding, and -stats counts the bytes moved.
func TestCopyExperts(t *testing.T) {
	got, st, err := expertCopy(t, []int32{1, 2, 2, 5, 7, 1})
	if err != nil {
		t.Fatal(err)
	}
	for e := range 8 {
		// 3 and 6 are the padding after 2 and 5: 32 bytes, a whole expert.
		copied := e == 1 || e == 2 || e == 5 || e == 7 || e == 3 || e == 6
		for i := range 8 {
			v, want := got[e*8+i], float32(e*8+i+1)
			if !copied {
				want = 0
			}
			if v != want {
				t.Fatalf("expert %d element %d = %g, want %g", e, i, v, want)
			}
		}
	}
	if st.BytesCopied != 192 || st.Copies != 1 {
		t.Errorf("copied %d bytes in %d copies, want 192 in 1", st.BytesCopied, st.Copies)
	}
	if e := st.Splits[0].Experts; e == nil || *e != (engine.ExpertStats{Used: 4, Experts: 8, Bytes: 192, Whole: 256}) {
		t.Errorf("expert stats %+v, want 4 of 8 experts, 192 of 256 bytes", e)
	}
}

// TestCopyExpertsBadID: an id that names no expert fails the evaluation
// (a KernelError), as a get_rows index outside its table does.
func TestCopyExpertsBadID(t *testing.T) {
	_, _, err := expertCopy(t, []int32{1, 8})
	var ke *engine.KernelError
	if !errors.As(err, &ke) {
		t.Fatalf("err = %v, want a KernelError", err)
	}
}
