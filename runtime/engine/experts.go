package engine

import (
	"fmt"

	"github.com/graphc/graphc/tensor"
)

// ExpertStats describe a split's expert copy in one evaluation: the
// experts its ids named and the bytes moved, beside the whole tensor's.
type ExpertStats struct {
	Used, Experts int
	Bytes, Whole  int64
}

// ByteRange is the bytes [Off, End).
type ByteRange struct{ Off, End int }

// ExpertRanges are the byte ranges of an expert tensor (nExpert experts of
// expertSize bytes each, dim 2 of a mul_mat_id's weight) that
// ggml_backend_sched_compute_splits copies for the experts used: runs of
// consecutive used experts in one range each, every range but one ending
// at the last expert followed by min(expertSize, 512) bytes more (ggml
// copies them so that no NaN lies in a device kernel's reach past the
// last expert). used reports each expert's use; used counts them.
func ExpertRanges(used []bool, expertSize int) (ranges []ByteRange, n int) {
	nExpert := len(used)
	pad := min(expertSize, 512)
	for first := 0; first < nExpert; {
		if !used[first] {
			first++
			continue
		}
		last := first
		for last+1 < nExpert && used[last+1] {
			last++
		}
		end := (last + 1) * expertSize
		if last < nExpert-1 {
			end += pad
		}
		ranges = append(ranges, ByteRange{first * expertSize, end})
		n += last - first + 1
		first = last + 1
	}
	return ranges, n
}

// usedExperts marks the experts ids (i32, [n_used, n_tokens], any
// strides, in host memory) name; an id outside 0..nExpert-1 is an error,
// as a get_rows index outside its table is (ggml asserts).
func usedExperts(ids *tensor.Tensor, nExpert int) ([]bool, error) {
	used := make([]bool, nExpert)
	v := ids.I32s()
	for i3 := range ids.Ne[3] {
		for i2 := range ids.Ne[2] {
			for i1 := range ids.Ne[1] {
				for i0 := range ids.Ne[0] {
					id := v[(i0*ids.Nb[0]+i1*ids.Nb[1]+i2*ids.Nb[2]+i3*ids.Nb[3])/4]
					if id < 0 || int(id) >= nExpert {
						return nil, fmt.Errorf("id %d at [%d, %d] is not one of the %d experts", id, i0, i1, nExpert)
					}
					used[id] = true
				}
			}
		}
	}
	return used, nil
}

// CopyExperts is CopyInput for an expert copy (ggml's copy of the used
// experts): src is an expert weight in host memory of backend from,
// [.., .., n_expert], dst its copy for split k, planned whole. Like
// ggml_backend_sched_compute_splits it waits until the split's backend is
// done with dst's memory, reads the ids (ids, in the memory of backend
// idsFrom) on the host, synchronizing that backend first, and copies only
// the experts they name, runs of consecutive ones in one piece. idsKey
// names the ids tensor in the plan: an evaluation reads each ids tensor
// once (ggml's prev_ids_tensor), whatever memory later tensors reuse.
func (s *Sched) CopyExperts(k, from int, dst, src *tensor.Tensor, idsFrom int, ids *tensor.Tensor, idsKey int) {
	f := s.flight()
	to := s.splits[k].Backend
	fb, tb := s.backends[from], s.backends[to]
	s.waitSlot(to, f.slot)
	fb.Synchronize()
	if f.idsKey != idsKey || f.used == nil {
		host := tensor.Tensor{Type: ids.Type, Ne: ids.Ne, Nb: ids.Nb, Data: tensor.NewBuffer(ids.Span())}
		if ib := s.backends[idsFrom]; hostMemory(ib) {
			copy(host.Data, ids.Data[:len(host.Data)])
		} else {
			ib.Synchronize()
			// Bytes as they lie, strides kept: a view's layout is the
			// copy's.
			raw := tensor.Tensor{Type: tensor.I8, Ne: [4]int{len(host.Data), 1, 1, 1}, Data: ids.Data[:len(host.Data)]}
			raw.Nb = tensor.ContiguousStrides(tensor.I8, raw.Ne)
			out := raw
			out.Data = host.Data
			ib.GetTensor(&out, &raw)
		}
		used, err := usedExperts(&host, src.Ne[2])
		if err != nil {
			panic(&KernelError{Op: "mul_mat_id", Msg: err.Error()})
		}
		f.idsKey, f.used = idsKey, used
	}
	ranges, n := ExpertRanges(f.used, src.Nb[2])
	var moved int64
	for _, r := range ranges {
		piece := func(t *tensor.Tensor) tensor.Tensor {
			return tensor.Tensor{Type: tensor.I8, Ne: [4]int{r.End - r.Off, 1, 1, 1}, Nb: tensor.ContiguousStrides(tensor.I8, [4]int{r.End - r.Off, 1, 1, 1}), Data: t.Data[r.Off:r.End]}
		}
		d, sr := piece(dst), piece(src)
		copySync(fb, tb, &d, &sr)
		moved += int64(r.End - r.Off)
	}
	r := &f.splits[k]
	r.inputs++
	r.bytes += moved
	r.experts = &ExpertStats{Used: n, Experts: src.Ne[2], Bytes: moved, Whole: int64(src.Span())}
}
