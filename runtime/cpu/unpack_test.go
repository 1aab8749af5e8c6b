package cpu_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// unpackShapes are weights' shapes in blocks per row, rows and batches:
// one block and one row, a row count not a multiple of the groups' 16
// (the last group padded), exactly one group, and batches along dims 2
// and 3 (a mixture of experts' weights).
var unpackShapes = [][4]int{{1, 1, 1, 1}, {3, 37, 1, 1}, {2, 16, 1, 1}, {2, 21, 3, 2}}

// packableWeight is a weight of type dt and shape s (in blocks along dim
// 0): random bytes but for each block's f16 scales, which are small and
// finite.
func packableWeight(r *rand.Rand, dt tensor.DType, s [4]int) tensor.Tensor {
	ne := [4]int{s[0] * dt.BlockSize(), s[1], s[2], s[3]}
	w := tensor.NewTensor(dt, ne)
	for i := range w.Data {
		w.Data[i] = byte(r.Uint32())
	}
	fields := kScaleFields[dt]
	if dt == tensor.Q4_0 || dt == tensor.Q8_0 {
		fields = []int{0}
	}
	for o := 0; o < len(w.Data); o += dt.Size() {
		for _, f := range fields {
			binary.LittleEndian.PutUint16(w.Data[o+f:], tensor.F32ToF16(float32(r.NormFloat64()*0.01)))
		}
	}
	return w
}

var packedTypes = []tensor.DType{tensor.Q4_0, tensor.Q8_0, tensor.Q4_K, tensor.Q6_K}

// TestUnpackRoundTrip rebuilds every row of packed weights from their
// copies: each is the weight's row byte for byte (every bit of a block
// random, so q4_K's re-encoded scales and q6_K's re-split quants are
// checked whole), in every batch and in a padded last group.
func TestUnpackRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	be := cpu.New(1)
	defer be.Close()
	for _, dt := range packedTypes {
		for _, s := range unpackShapes {
			w := packableWeight(r, dt, s)
			if err := be.Pack(&w, false); err != nil {
				t.Fatal(err)
			}
			rowBytes, bs := dt.RowSize(w.Ne[0]), dt.Size()
			for mat := 0; mat < w.Ne[2]*w.Ne[3]; mat++ {
				for row := 0; row < w.Ne[1]; row++ {
					got := be.PackedRow(&w, mat, row)
					want := w.Data[mat*w.Nb[2]+row*w.Nb[1]:][:rowBytes]
					if bytes.Equal(got, want) {
						continue
					}
					i := 0
					for got[i] == want[i] {
						i++
					}
					t.Fatalf("%s%v: matrix %d row %d: block %d byte %d is %#02x unpacked, %#02x in the weight",
						dt, w.Ne, mat, row, i/bs, i%bs, got[i], want[i])
				}
			}
		}
	}
}

// TestGetRowsPacked: GetRows of a packed weight is GetRows of the weight
// unpacked, bit for bit, for random rows and the first and last, in every
// batch; it still is with the weight's bytes zeroed after Pack, so the
// rows come from the copy (as they must once Pack has released the
// weight's pages); and it allocates nothing.
func TestGetRowsPacked(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	plain := cpu.New(1)
	defer plain.Close()
	for _, dt := range packedTypes {
		for _, s := range unpackShapes {
			w := packableWeight(r, dt, s)
			orig := w
			orig.Data = slices.Clone(w.Data)
			ne := w.Ne
			idx := tensor.NewTensor(tensor.I32, [4]int{6, ne[2], ne[3], 1})
			ids := idx.I32s()
			for i := range ids {
				ids[i] = int32(r.IntN(ne[1]))
			}
			ids[0], ids[len(ids)-1] = int32(ne[1]-1), 0
			getRows := func(be *cpu.Backend, table *tensor.Tensor) []float32 {
				dst := tensor.NewTensor(tensor.F32, [4]int{ne[0], idx.Ne[0], idx.Ne[1], idx.Ne[2]})
				be.GetRows(&dst, table, &idx)
				return dst.F32s()
			}
			want := getRows(plain, &orig)
			be := cpu.New(2)
			if err := be.Pack(&w, false); err != nil {
				t.Fatal(err)
			}
			check := func(what string, got []float32) {
				t.Helper()
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s%v, %s: dst[%d] (row %d) = %g, want %g", dt, ne, what, i, ids[i/ne[0]], got[i], want[i])
					}
				}
			}
			check("packed", getRows(be, &w))
			clear(w.Data)
			check("packed, the weight zeroed", getRows(be, &w))
			dst := tensor.NewTensor(tensor.F32, [4]int{ne[0], idx.Ne[0], idx.Ne[1], idx.Ne[2]})
			if n := testing.AllocsPerRun(10, func() { be.GetRows(&dst, &w, &idx) }); n != 0 {
				t.Errorf("%s%v: GetRows of a packed weight allocates %v times a call", dt, ne, n)
			}
			be.Close()
		}
	}
}
