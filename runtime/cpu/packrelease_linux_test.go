package cpu_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// TestPackRelease packs a weight mapped from a file with release, as
// generated programs do for the weights only the copy reads: the products
// equal those of a copy packed without release, the weight still reads as
// the file holds it (its pages come back from the file), and after Pack
// its pages have left memory (mincore).
func TestPackRelease(t *testing.T) {
	const k, m = 4096, 512 // q6_K: 1.7 MB, past one release step
	r := rand.New(rand.NewPCG(9, 10))
	vals := make([]float32, k*m)
	for i := range vals {
		vals[i] = float32(r.NormFloat64())
	}
	data := tensor.Quantize(nil, tensor.Q6_K, vals)
	path := filepath.Join(t.TempDir(), "w.bin")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Written back: the kernel pages out only clean pages at once.
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	mapped, err := syscall.Mmap(int(f.Fd()), 0, len(data), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Skip("mmap:", err)
	}
	defer syscall.Munmap(mapped)
	ne := [4]int{k, m, 1, 1}
	w := tensor.Tensor{Type: tensor.Q6_K, Ne: ne, Nb: tensor.ContiguousStrides(tensor.Q6_K, ne), Data: mapped}
	heap := w
	heap.Data = append([]byte(nil), data...)

	x := tensor.NewTensor(tensor.F32, [4]int{k, 1, 1, 1})
	for i := range x.F32s() {
		x.F32s()[i] = float32(r.NormFloat64())
	}
	product := func(w *tensor.Tensor, release bool) []float32 {
		be := cpu.New(2)
		defer be.Close()
		if err := be.Pack(w, release); err != nil {
			t.Fatal(err)
		}
		dst := tensor.NewTensor(tensor.F32, [4]int{m, 1, 1, 1})
		be.MulMat(&dst, w, &x, ops.MulMatParams{})
		return dst.F32s()
	}
	want := product(&heap, false)
	for i := range mapped { // every page resident before Pack
		_ = mapped[i]
	}
	got := product(&w, true)
	resident := residentPages(t, mapped)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("row %d: %g packed with release, %g without", i, got[i], want[i])
		}
	}
	if string(mapped) != string(data) {
		t.Fatal("the released weight no longer reads as its file")
	}
	pages := (len(mapped) + os.Getpagesize() - 1) / os.Getpagesize()
	// Advice: the kernel may keep some (a large folio a step's end cuts),
	// but without release every page stays.
	if resident == pages {
		t.Errorf("all %d of the weight's pages resident after Pack with release", pages)
	}
}

// residentPages counts the pages of b in memory (mincore).
func residentPages(t *testing.T, b []byte) int {
	page := os.Getpagesize()
	vec := make([]byte, (len(b)+page-1)/page)
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Skip("mincore:", e)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}
