package cpu

import (
	"math"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

// FlashAttnExt is ggml_flash_attn_ext: for every query row (token i1, head
// i2, i3) the online softmax of q·k·scale (capped by p.LogitSoftcap, plus
// the head's ALiBi slope times the mask) over the n_kv keys, times v. q is
// f32 [DK, N, H, B]; k and v are f16, f32 or a block type (a quantized KV
// cache: k's with a dot product, v's with a decoder) [DK|DV, n_kv, H_kv, B_kv],
// query head h reading K/V head h / (H/H_kv) (grouped-query attention);
// mask, optional, is f16 or f32 [≥ n_kv, ≥ N, H_m, B_m], row i1 and plane
// i2 % H_m, i3 % B_m applying, an f32 one rounded to f16 as llama.cpp
// casts it for ggml's op (which takes only f16); dst is f32 [DV, H, N, B] with dense rows,
// ggml's permuted layout.
//
// The numerics are ggml-cpu's (ops.cpp) for the path it takes:
//
//   - below 64 tokens (ggml_compute_forward_flash_attn_ext_f16_one_chunk):
//     q is converted to k's vec_dot_type (rounded to f16 for an f16 k),
//     each score is an f16·f16 dot summed in float32, and with an f16 v
//     the weighted sum of v accumulates in f16, rounded after every
//     rescale and every multiply-add, whatever p.Prec asks for (ggml's CPU
//     ignores it too); a block k's score is its vec_dot against q in its
//     vec_dot_type (q8_0 for q8_0 and q4_0), a block v's rows are decoded
//     and summed in float32;
//   - from 64 tokens, k and v of one type, f16 or f32 (ggml's tiled path): q, k, v
//     and the sum in float32;
//   - one token and at least 512 keys (ggml's split-KV path): the keys cut
//     into one chunk per thread, each chunk's partial max, sum and f16 sum
//     combined in float32 as ggml_flash_attn_ext_reduce_partials does.
//
// Each K/V row is read once per head group and block of tokens: the rows
// of the H/H_kv query heads sharing it advance together.
func (b *Backend) FlashAttnExt(dst, q, k, v, mask *tensor.Tensor, p ops.FlashAttnParams) {
	t := &b.fa
	*t = faTask{b: b, softcap: p.LogitSoftcap, maxBias: p.MaxBias}
	t.d.set("FlashAttnExt", "dst", dst)
	t.q.set("FlashAttnExt", "q", q)
	t.k.set("FlashAttnExt", "k", k)
	t.v.set("FlashAttnExt", "v", v)
	dk, dv, n, h, nkv := t.q.ne[0], t.v.ne[0], t.q.ne[1], t.q.ne[2], t.k.ne[1]
	if !t.q.isF32() || !t.d.isF32() || !faKVType(t.k.typ, true) || !faKVType(t.v.typ, false) ||
		t.k.ne[0] != dk || t.v.ne[1] != nkv || t.k.ne[2] == 0 || t.k.ne[3] == 0 || t.k.ne[2] != t.v.ne[2] || t.k.ne[3] != t.v.ne[3] ||
		h%t.k.ne[2] != 0 || t.q.ne[3]%t.k.ne[3] != 0 ||
		t.d.ne != [4]int{dv, h, n, t.q.ne[3]} || !t.d.dense() || !t.q.dense() || !t.k.dense() || !t.v.dense() {
		bug("FlashAttnExt: dst %v%v, q %v%v, k %v%v, v %v%v", t.d.typ, t.d.ne, t.q.typ, t.q.ne, t.k.typ, t.k.ne, t.v.typ, t.v.ne)
	}
	if mask != nil {
		t.hasMask = true
		t.m.set("FlashAttnExt", "mask", mask)
		if !isFloat(t.m.typ) || t.m.ne[0] < nkv || t.m.ne[1] < n || t.m.ne[2] == 0 || t.m.ne[3] == 0 ||
			h%t.m.ne[2] != 0 || t.q.ne[3]%t.m.ne[3] != 0 || !t.m.dense() {
			bug("FlashAttnExt: mask %v%v for q %v, k %v", t.m.typ, t.m.ne, t.q.ne, t.k.ne)
		}
	}
	if t.d.nelem() == 0 {
		*t = faTask{}
		return
	}
	t.scale = p.Scale
	if t.softcap != 0 {
		t.scale /= t.softcap
	}
	if t.maxBias > 0 {
		t.nHeadLog2 = 1 << uint(math.Floor(math.Log2(float64(h))))
		t.m0 = powf(2, -t.maxBias/float32(t.nHeadLog2))
		t.m1 = powf(2, -(t.maxBias/2)/float32(t.nHeadLog2))
	}
	sameKV := t.k.typ == t.v.typ
	t.tiled = n >= faTileQ && sameKV && isFloat(t.k.typ)
	t.group = h / t.k.ne[2]
	items := t.q.ne[3] * t.k.ne[2]
	if n == 1 && t.q.ne[3] == 1 && nkv >= faSplitKV && sameKV {
		// ggml's split-KV path: one chunk of keys per thread.
		t.kvChunks = b.pool.n
		t.chunkLen = (nkv + t.kvChunks - 1) / t.kvChunks
		t.tokBlock = 1
		t.partials = growF32(&b.faPartials, h*t.kvChunks*(2+dv))
	} else {
		t.kvChunks, t.chunkLen = 1, nkv
		// Blocks of tokens whose rows share each K/V row read, small enough
		// to stay in the L1 cache, and enough of them for every thread.
		t.tokBlock = max(1, min(n, faBlockRows/t.group))
		for t.tokBlock > 1 && items*ceilDiv(n, t.tokBlock) < chunksPerThread*b.pool.n {
			t.tokBlock /= 2
		}
	}
	t.tokBlocks = ceilDiv(n, t.tokBlock)
	rows := t.tokBlock * t.group
	t.stride = dk + dv + 2
	b.growScratch(b.pool.n, rows*t.stride+dk+dv)
	if t.k.raw != nil {
		t.kq = quantKernels[t.k.typ]
		t.qRow = t.kq.vecDot.RowSize(dk)
		for len(b.faQ) < b.pool.n {
			b.faQ, b.faQd, b.faQs = append(b.faQ, nil), append(b.faQd, nil), append(b.faQs, nil)
		}
	}
	units := items * t.tokBlocks * t.kvChunks
	b.parallel(t, n*h*nkv*(dk+dv), units)
	if t.kvChunks > 1 {
		t.reduce()
	}
	*t = faTask{}
}

// faKVType reports whether FlashAttnExt reads K (isK) or V of type t: f32,
// f16, or a block type with a dot product against q (K) or a decoder (V).
func faKVType(t tensor.DType, isK bool) bool {
	if isFloat(t) {
		return true
	}
	if !isBlockType(t) {
		return false
	}
	if isK {
		q := quantKernels[t]
		return q != nil && q.dot != nil
	}
	return t.Traits().Decode != nil
}

// ggml-cpu's thresholds: the query tile of its tiled path (GGML_FA_TILE_Q)
// and the least keys its split-KV path takes for one token.
const (
	faTileQ   = 64
	faSplitKV = 512
)

// faBlockRows bounds the query rows that advance together over the keys:
// their q and sums, (DK + DV)·4 bytes each, stay in the L1 cache.
const faBlockRows = 32

// growF32 returns (*buf)[:n], growing *buf when it is shorter.
func growF32(buf *[]float32, n int) []float32 {
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	return (*buf)[:n]
}

type faTask struct {
	b                       *Backend
	scale, softcap, maxBias float32
	nHeadLog2               int
	m0, m1                  float32
	hasMask, tiled          bool
	group                   int // query heads per K/V head
	tokBlock, tokBlocks     int
	kvChunks, chunkLen      int
	stride                  int          // a row's scratch: q (DK), sum (DV), M, S
	partials                []float32    // split-KV: per query head and chunk M, S, sum (DV)
	kq                      *quantKernel // a block K's: q is converted to its vec_dot_type
	qRow                    int          // bytes of a converted q row
	d, q, k, v, m           tview
}

// run computes units [lo, hi) of chunk: a unit is one K/V head of one i3
// with one block of tokens and one chunk of keys, chunks fastest.
func (t *faTask) run(chunk, nchunks, tid int) {
	items := t.q.ne[3] * t.k.ne[2] * t.tokBlocks * t.kvChunks
	lo, hi := split(items, chunk, nchunks)
	for u := lo; u < hi; u++ {
		c := u % t.kvChunks
		r := u / t.kvChunks
		blk := r % t.tokBlocks
		r /= t.tokBlocks
		hkv, i3 := r%t.k.ne[2], r/t.k.ne[2]
		t.unit(tid, i3, hkv, blk*t.tokBlock, min((blk+1)*t.tokBlock, t.q.ne[1]), c)
	}
}

// slope is head h's ALiBi slope (ggml's m0/m1 schedule), 1 without.
func (t *faTask) slope(h int) float32 {
	switch {
	case t.maxBias <= 0:
		return 1
	case h < t.nHeadLog2:
		return powf(t.m0, float32(h+1))
	}
	return powf(t.m1, float32(2*(h-t.nHeadLog2)+1))
}

// unit runs the query heads of K/V head hkv (plane i3) for tokens [t0, t1)
// over the keys of chunk c.
func (t *faTask) unit(tid, i3, hkv, t0, t1, c int) {
	q, k, v, m := &t.q, &t.k, &t.v, &t.m
	dk, dv := q.ne[0], v.ne[0]
	g := t.group
	nrow := (t1 - t0) * g
	buf := t.b.scratch[tid]
	rows := buf[:nrow*t.stride]
	kbuf := buf[nrow*t.stride : nrow*t.stride+dk]
	vbuf := buf[nrow*t.stride+dk : nrow*t.stride+dk+dv]
	k3, v3 := i3/(q.ne[3]/k.ne[3]), i3/(q.ne[3]/v.ne[3])
	f16K, f16V := k.typ == tensor.F16 && !t.tiled, v.typ == tensor.F16 && !t.tiled
	var qx []byte // a block K's: the rows of q in its vec_dot_type
	if t.kq != nil {
		qx = t.b.faQ[tid][:0]
	}
	for j := range nrow {
		row := rows[j*t.stride : (j+1)*t.stride]
		tok, h := t0+j/g, hkv*g+j%g
		qr := q.f32[q.off(tok, h, i3) : q.off(tok, h, i3)+dk]
		switch { // ggml converts q to k's vec_dot_type
		case t.kq != nil:
			qx = t.kq.fromFloat(qx, qr)
		case f16K:
			roundF16Row(row[:dk], qr)
		default:
			copy(row[:dk], qr)
		}
		clear(row[dk : dk+dv])
		row[dk+dv], row[dk+dv+1] = float32(math.Inf(-1)), 0
	}
	var qd []float32
	var qs []int32
	if t.kq != nil {
		t.b.faQ[tid] = qx
		if t.kq.scales {
			t.b.faQd[tid] = xScales(t.b.faQd[tid][:0], qx)
			qd = t.b.faQd[tid]
		}
		if t.kq.sums {
			t.b.faQs[tid] = xSums(t.b.faQs[tid][:0], qx)
			qs = t.b.faQs[tid]
		}
	}
	nbq := dk / 32 // q8_0 blocks of a converted q row, for its scales and sums
	ic0, ic1 := c*t.chunkLen, min((c+1)*t.chunkLen, k.ne[1])
	for ic := ic0; ic < ic1; ic++ {
		ko := k.off(ic, hkv, k3)
		var kf []float32
		if k.typ == tensor.F32 {
			kf = k.f32[ko : ko+dk]
		} else if !f16K && t.kq == nil {
			kf = kbuf
			f16ToF32Row(kf, k.f16[ko:ko+dk])
		}
		var vf []float32
		for j := range nrow {
			row := rows[j*t.stride : (j+1)*t.stride]
			tok, h := t0+j/g, hkv*g+j%g
			mv := float32(0)
			if t.hasMask {
				mo := m.off(tok, h%m.ne[2], i3%m.ne[3]) + ic
				if m.typ == tensor.F16 {
					mv = t.slope(h) * f16Table[m.f16[mo]]
				} else {
					mv = t.slope(h) * f16Table[tensor.F32ToF16(m.f32[mo])] // llama.cpp's ggml_cast of the mask
				}
				if math.IsInf(float64(mv), -1) {
					continue
				}
			}
			var s float32
			switch {
			case t.kq != nil:
				var xd []float32
				var xs []int32
				if qd != nil {
					xd = qd[j*nbq : (j+1)*nbq]
				}
				if qs != nil {
					xs = qs[j*nbq : (j+1)*nbq]
				}
				s = t.kq.dot(k.raw[ko:], qx[j*t.qRow:(j+1)*t.qRow], xd, xs, dk)
			case f16K:
				s = dotF16(k.f16[ko:ko+dk], row[:dk])
			default:
				s = dotF32(kf, row[:dk])
			}
			s *= t.scale
			if t.softcap != 0 {
				s = t.softcap * float32(math.Tanh(float64(s)))
			}
			s += mv
			if vf == nil {
				vo := v.off(ic, hkv, v3)
				switch {
				case v.typ == tensor.F32:
					vf = v.f32[vo : vo+dv]
				case v.raw != nil:
					vf = tensor.Dequantize(vbuf[:0], v.typ, v.raw[vo:], dv) // ggml's to_float; the sum is f32
				default:
					vf = vbuf
					f16ToF32Row(vf, v.f16[vo:vo+dv])
				}
			}
			acc := row[dk : dk+dv]
			M, S := row[dk+dv], row[dk+dv+1]
			ms, vs := float32(1), float32(1)
			if s > M {
				ms = float32(math.Exp(float64(M - s)))
				M = s
				scaleF32(acc, acc, ms)
				if f16V {
					roundF16Row(acc, acc) // ggml_vec_scale_f16
				}
			} else {
				vs = float32(math.Exp(float64(s - M)))
			}
			addScaledF32(acc, vf, vs)
			if f16V {
				roundF16Row(acc, acc) // ggml_vec_mad_f16
			}
			row[dk+dv], row[dk+dv+1] = M, S*ms+vs
		}
	}
	for j := range nrow {
		row := rows[j*t.stride : (j+1)*t.stride]
		tok, h := t0+j/g, hkv*g+j%g
		acc, M, S := row[dk:dk+dv], row[dk+dv], row[dk+dv+1]
		if t.kvChunks > 1 {
			part := t.partials[(h*t.kvChunks+c)*(2+dv):]
			part[0], part[1] = M, S
			copy(part[2:2+dv], acc)
			continue
		}
		inv := float32(0)
		if S != 0 {
			inv = 1 / S
		}
		do := t.d.off(h, tok, i3)
		scaleF32(t.d.f32[do:do+dv], acc, inv)
	}
}

// reduce combines the split-KV chunks' partials of every query head into
// dst, as ggml_flash_attn_ext_reduce_partials.
func (t *faTask) reduce() {
	dv := t.v.ne[0]
	acc := t.b.scratch[0][:dv]
	for h := range t.q.ne[2] {
		clear(acc)
		M, S := float32(math.Inf(-1)), float32(0)
		for c := range t.kvChunks {
			if c*t.chunkLen >= t.k.ne[1] {
				continue
			}
			part := t.partials[(h*t.kvChunks+c)*(2+dv):]
			mc, sc := part[0], part[1]
			if sc == 0 {
				continue
			}
			mn := max(M, mc)
			so, sn := float32(math.Exp(float64(M-mn))), float32(math.Exp(float64(mc-mn)))
			for d := range acc {
				acc[d] = acc[d]*so + part[2+d]*sn
			}
			S = S*so + sc*sn
			M = mn
		}
		if S != 0 {
			scaleF32(acc, acc, 1/S)
		}
		do := t.d.off(h, 0, 0)
		copy(t.d.f32[do:do+dv], acc)
	}
}
