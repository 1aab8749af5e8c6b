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
// The numerics follow ggml-cpu's (ops.cpp) for the path it takes:
//
//   - below 64 tokens (ggml_compute_forward_flash_attn_ext_f16_one_chunk):
//     q is rounded to k's vec_dot_type (f16 for an f16 k; for a block k
//     through ggml's from_float, q8_0 for q8_0 and q4_0; q4_1 and q5_1,
//     whose q8_1 has no decoder, keep q in float32), each score is the
//     float32 dot of that q with k's values (ggml's f16·f16 and q8_0 dots
//     of the same values, summed in another order), and with an f16 v the weighted
//     sum of v accumulates in f16 in ggml's order, rounded after every
//     rescale and every multiply-add, whatever p.Prec asks for (ggml's CPU
//     ignores it too); other v types are decoded and summed in float32;
//   - from 64 tokens (ggml's tiled path for f16 and f32 k and v of one
//     type; a block k keeps its q8_0-rounded q): the sum in float32, where
//     ggml's one_chunk path, which it takes there for other types, sums an
//     f16 v in f16;
//   - one token, k and v of one float type and at least 512 keys (ggml's
//     split-KV path): the keys cut into one chunk per thread, each chunk's
//     partial max, sum and f16 sum combined in float32 as
//     ggml_flash_attn_ext_reduce_partials does.
//
// The kernels (unit) take the rows of the H/H_kv query heads sharing a
// K/V head, for a tile of tokens, against 64 keys at a time: each K/V
// block is converted to float32 once per tile, an f16 K block straight
// into its transposed copy (transposeH8), and an f16 V summed in f16 is
// read as f16 by the kernel that sums it (faAccumH).
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
	ggmlTiled := n >= faTileQ && sameKV && isFloat(t.k.typ)
	t.roundQ = t.k.typ == tensor.F16 && !ggmlTiled
	t.f16Sum = t.v.typ == tensor.F16 && n < faTileQ
	t.group = h / t.k.ne[2]
	items := t.q.ne[3] * t.k.ne[2]
	if n == 1 && t.q.ne[3] == 1 && nkv >= faSplitKV && sameKV && isFloat(t.k.typ) {
		// ggml's split-KV path: one chunk of keys per thread.
		t.kvChunks = b.pool.n
		t.chunkLen = (nkv + t.kvChunks - 1) / t.kvChunks
		t.tokBlock = 1
		t.partials = growF32(&b.faPartials, h*t.kvChunks*(2+dv))
	} else {
		t.kvChunks, t.chunkLen = 1, nkv
		// Tiles of tokens whose rows share each K/V block, and enough of
		// them for every thread.
		t.tokBlock = max(1, min(n, faBlockRows/t.group))
		for t.tokBlock > 1 && items*ceilDiv(n, t.tokBlock) < chunksPerThread*b.pool.n {
			t.tokBlock /= 2
		}
	}
	t.tokBlocks = ceilDiv(n, t.tokBlock)
	rows := (t.tokBlock*t.group + 3) &^ 3
	mrows := 0
	if mask != nil {
		mrows = rows
	}
	b.growScratch(b.pool.n, t.scratchLen(rows, mrows))
	if t.k.raw != nil {
		if kq := quantKernels[t.k.typ]; kq.vecDot.Traits().Decode != nil {
			t.kq = kq
		}
		for len(b.faQ) < b.pool.n {
			b.faQ = append(b.faQ, nil)
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

// faBlockRows bounds the query rows of a tile: their q, sums and scores,
// (DK + DV + 2·faKeyBlock)·4 bytes each, stay in the L2 cache beside a
// K/V block.
const faBlockRows = 128

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
	hasMask                 bool
	roundQ                  bool // q is rounded to f16 (an f16 k on ggml's one_chunk path)
	f16Sum                  bool // the sum of v is f16, key by key (ggml's one_chunk path)
	group                   int  // query heads per K/V head
	tokBlock, tokBlocks     int
	kvChunks, chunkLen      int
	partials                []float32    // split-KV: per query head and chunk M, S, sum (DV)
	kq                      *quantKernel // a block K's: q is rounded through its vec_dot_type
	d, q, k, v, m           tview
}

// run computes units [lo, hi) of chunk: a unit is one K/V head of one i3
// with one block of tokens and one chunk of keys, chunks fastest, then
// K/V heads (which read the same mask rows).
func (t *faTask) run(chunk, nchunks, tid int) {
	items := t.q.ne[3] * t.k.ne[2] * t.tokBlocks * t.kvChunks
	lo, hi := split(items, chunk, nchunks)
	for u := lo; u < hi; u++ {
		c := u % t.kvChunks
		r := u / t.kvChunks
		hkv := r % t.k.ne[2]
		r /= t.k.ne[2]
		blk, i3 := r%t.tokBlocks, r/t.tokBlocks
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

// faKeyBlock is the keys a unit scores at a time: their K and V rows as
// float32 ((DK + DV)·4 bytes each) and the rows' scores stay in L1/L2.
const faKeyBlock = 64

// faScratch lays out a thread's scratch for rows query rows (a multiple
// of 4) and mrows mask rows.
type faScratch struct {
	q, acc, ms, kf, kt, vf, sc, mu, mf, wm []float32
	slope                                  []float32 // per row
	skip                                   []float32 // per mask row: 1 where it hides the block
}

func (t *faTask) scratchLen(rows, mrows int) int {
	dk, dv, bk := t.q.ne[0], t.v.ne[0], faKeyBlock
	return rows*(dk+dv+3+2*bk) + bk*(2*dk+dv+8) + mrows*(bk+1)
}

func (t *faTask) scratchFor(tid, rows, mrows int) faScratch {
	dk, dv, bk := t.q.ne[0], t.v.ne[0], faKeyBlock
	buf := t.b.scratch[tid]
	take := func(n int) []float32 {
		s := buf[:n:n]
		buf = buf[n:]
		return s
	}
	var s faScratch
	s.q, s.acc, s.ms = take(rows*dk), take(rows*dv), take(2*rows)
	s.kf, s.kt, s.vf, s.wm = take(bk*dk), take(dk*bk), take(bk*dv), take(8*bk)
	s.sc, s.mu, s.mf = take(rows*bk), take(rows*bk), take(mrows*bk)
	s.slope, s.skip = take(rows), take(mrows)
	return s
}

// unit runs the query heads of K/V head hkv (plane i3) for tokens [t0, t1)
// over the keys of chunk c, faKeyBlock keys at a time: every row's scores
// against the block (t.scores), scaled, capped and masked, then
//
//   - where ggml sums an f16 v in f16 (t.f16Sum), key by key as ggml does:
//     a key above the running maximum rescales the sum by e^(M - s) and
//     adds v, any other adds e^(s - M)·v, both rounded to f16 (faAccumH;
//     a row whose block has no key above its maximum skips the per-key
//     scan, and runs of keys no row rescales at skip the rescale);
//   - otherwise each row's sum is rescaled once to the block's maximum
//     and the block's e^(s - M)·v added in float32 (faAccumRows).
//
// The exponentials of a block are computed together (faExp), the weighted
// sums of v four rows at a time. A block whose keys every row's mask
// hides is skipped.
func (t *faTask) unit(tid, i3, hkv, t0, t1, c int) {
	q, k, v, m := &t.q, &t.k, &t.v, &t.m
	dk, dv, bk := q.ne[0], v.ne[0], faKeyBlock
	g := t.group
	nrow := (t1 - t0) * g
	rows := (nrow + 3) &^ 3
	mrows := 0
	if t.hasMask {
		mrows = t1 - t0
		if m.ne[2] > 1 {
			mrows = nrow
		}
	}
	s := t.scratchFor(tid, rows, mrows)
	k3, v3 := i3/(q.ne[3]/k.ne[3]), i3/(q.ne[3]/v.ne[3])
	negInf := float32(math.Inf(-1))
	// q as ggml's path reads it: rounded to k's vec_dot_type where it
	// converts q (f16 for an f16 k, q8_0 for a block k).
	for j := range rows {
		qr := s.q[j*dk : (j+1)*dk]
		if j >= nrow {
			clear(qr)
			continue
		}
		tok, h := t0+j/g, hkv*g+j%g
		src := q.f32[q.off(tok, h, i3) : q.off(tok, h, i3)+dk]
		switch {
		case t.kq != nil:
			qx := t.kq.fromFloat(t.b.faQ[tid][:0], src)
			t.b.faQ[tid] = qx
			tensor.Dequantize(qr[:0], t.kq.vecDot, qx, dk)
		case t.roundQ:
			roundF16Row(qr, src)
		default:
			copy(qr, src)
		}
	}
	clear(s.acc)
	for j := range rows {
		s.ms[2*j], s.ms[2*j+1] = negInf, 0
	}
	for j := range rows {
		s.slope[j] = t.slope(hkv*g + j%g)
	}
	maskRow := func(j int) int { // the mask row of query row j
		if mrows == nrow {
			return j
		}
		return j / g
	}
	ic0, ic1 := c*t.chunkLen, min((c+1)*t.chunkLen, k.ne[1])
	for b0 := ic0; b0 < ic1; b0 += bk {
		nk := min(bk, ic1-b0)
		if t.hasMask {
			any := false
			for mr := range mrows {
				tok, h := t0+mr, 0
				if mrows == nrow {
					tok, h = t0+mr/g, hkv*g+mr%g
				}
				mo := m.off(tok, h%m.ne[2], i3%m.ne[3]) + b0
				mf := s.mf[mr*bk : mr*bk+nk]
				if m.typ == tensor.F16 {
					f16ToF32Row(mf, m.f16[mo:mo+nk])
				} else {
					roundF16Row(mf, m.f32[mo:mo+nk]) // llama.cpp's ggml_cast of the mask
				}
				s.skip[mr] = 0
				if allNegInf(mf) {
					s.skip[mr] = 1
				} else {
					any = true
				}
			}
			if !any {
				continue
			}
		}
		t.scores(s, k.off(b0, hkv, k3), nk, rows)
		var vh []uint16 // an f16 sum's V rows, read as they are
		if t.f16Sum {
			vh = v.f16[v.off(b0, hkv, v3):]
		} else {
			faDecodeRows(s.vf, v, v.off(b0, hkv, v3), nk, dv)
		}
		for j0 := 0; j0 < rows; j0 += 4 {
			flags, live := 0, false
			wm := s.wm[:8*nk]
			for r := range 4 {
				j := j0 + r
				sc, mu := s.sc[j*bk:j*bk+nk], s.mu[j*bk:j*bk+nk]
				if j >= nrow || t.hasMask && s.skip[maskRow(j)] != 0 {
					if t.f16Sum {
						for i := range nk {
							wm[8*i+r], wm[8*i+4+r] = 0, 1
						}
					} else {
						clear(sc)
					}
					continue
				}
				var mf []float32
				if t.hasMask {
					mf = s.mf[maskRow(j)*bk : maskRow(j)*bk+nk]
				}
				var bm float32
				if t.softcap != 0 {
					scaleF32(sc, sc, t.scale)
					for i, x := range sc {
						sc[i] = t.softcap * float32(math.Tanh(float64(x)))
					}
					bm = faScores(sc, mf, 1, s.slope[j])
				} else {
					bm = faScores(sc, mf, t.scale, s.slope[j])
				}
				M, S := s.ms[2*j], s.ms[2*j+1]
				switch {
				case t.f16Sum && bm == negInf:
					// every key hidden: nothing added
					for i := range nk {
						wm[8*i+r], wm[8*i+4+r] = 0, 1
					}
				case t.f16Sum && bm <= M:
					// No key above the running maximum: ggml's key-by-key
					// order leaves every multiplier at 1.
					S += faExp(mu, sc, M)
					for i, e := range mu {
						wm[8*i+r], wm[8*i+4+r] = e, 1
					}
				case t.f16Sum:
					// ggml's order: the running maximum key by key.
					for i, x := range sc {
						wm[8*i+4+r] = 0
						switch {
						case x == negInf:
							mu[i] = negInf
						case x > M:
							mu[i] = M - x
							M = x
							wm[8*i+4+r] = 1 // a new maximum
						default:
							mu[i] = x - M
						}
					}
					faExp(mu, mu, 0)
					for i, e := range mu {
						if wm[8*i+4+r] != 0 {
							// rescale the sum by e, add v
							if e != 1 {
								flags |= faMul
							}
							wm[8*i+r], wm[8*i+4+r] = 1, e
							S = S*e + 1
						} else {
							wm[8*i+r], wm[8*i+4+r] = e, 1
							S += e
						}
					}
				default:
					if bm == negInf {
						clear(sc)
						continue
					}
					if bm > M {
						if M != negInf {
							acc := s.acc[j*dv : (j+1)*dv]
							ms := float32(math.Exp(float64(M - bm)))
							scaleF32(acc, acc, ms)
							S *= ms
						}
						M = bm
					}
					S += faExp(sc, sc, M)
				}
				live = true
				s.ms[2*j], s.ms[2*j+1] = M, S
			}
			if !live {
				continue
			}
			if t.f16Sum {
				faAccumRuns(s.acc[j0*dv:], dv, vh, v.st[1], wm, nk, dv, flags)
			} else {
				faAccumRows(s.acc[j0*dv:], dv, s.vf, dv, s.sc[j0*bk:], bk, nk, dv, false)
			}
		}
	}
	for j := range nrow {
		tok, h := t0+j/g, hkv*g+j%g
		acc, M, S := s.acc[j*dv:(j+1)*dv], s.ms[2*j], s.ms[2*j+1]
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

// scores sets s.sc's rows (faKeyBlock apart) to the rows of s.q against
// the nk K rows of K/V head at k's offset ko: with dk a multiple of 8 (and
// vector kernels), the block transposed and S = Q·Kᵀ by faAccumRows, else
// four-by-four dots (dotPanelF32). Columns past nk are left undefined.
func (t *faTask) scores(s faScratch, ko, nk, rows int) {
	k := &t.k
	dk, bk := t.q.ne[0], faKeyBlock
	if dk%8 == 0 && level != isaGo {
		// An f16 block's whole groups of eight rows go straight from
		// the cache to the transposed copy; other rows through kf.
		j0 := 0
		if k.typ == tensor.F16 {
			for ; j0+8 <= nk; j0 += 8 {
				transposeH8(s.kt[j0:], bk, k.f16[ko+j0*k.st[1]:], k.st[1], dk)
			}
		}
		nk8 := (nk + 7) &^ 7
		if j0 < nk8 {
			faDecodeRows(s.kf[j0*dk:], k, ko+j0*k.st[1], nk-j0, dk)
			clear(s.kf[nk*dk : nk8*dk])
			for ; j0 < nk8; j0 += 8 {
				transpose8(s.kt[j0:], bk, s.kf[j0*dk:], dk, dk)
			}
		}
		cols := (nk + 31) &^ 31
		for j0 := 0; j0 < rows; j0 += 4 {
			faAccumRows(s.sc[j0*bk:], bk, s.kt, bk, s.q[j0*dk:], dk, dk, min(cols, bk), true)
		}
		return
	}
	faDecodeRows(s.kf, k, ko, nk, dk)
	nkp := (nk + 3) &^ 3
	clear(s.kf[nk*dk : nkp*dk])
	for j0 := 0; j0 < rows; j0 += 4 {
		dotPanelF32(nkp, s.kf, dk, s.q[j0*dk:], dk, dk, s.sc[j0*bk:], bk)
	}
}

// faAccumRuns is faAccumH rounding to f16, for runs of keys: those where
// some row's sum is rescaled (a multiplier other than 1: flags has faMul)
// with faMul, the others without, which the kernels then skip.
func faAccumRuns(acc []float32, lda int, v []uint16, ldv int, wm []float32, nk, dv, flags int) {
	if flags&faMul == 0 {
		faAccumH(acc, lda, v, ldv, wm, nk, dv, faRound)
		return
	}
	rescales := func(i int) bool {
		m := wm[8*i+4 : 8*i+8]
		return m[0] != 1 || m[1] != 1 || m[2] != 1 || m[3] != 1
	}
	for i0 := 0; i0 < nk; {
		r := rescales(i0)
		i1 := i0 + 1
		for i1 < nk && rescales(i1) == r {
			i1++
		}
		fl := faRound
		if r {
			fl |= faMul
		}
		faAccumH(acc, lda, v[i0*ldv:], ldv, wm[8*i0:], i1-i0, dv, fl)
		i0 = i1
	}
}

// allNegInf reports whether every element of x is -Inf.
func allNegInf(x []float32) bool {
	for _, v := range x {
		if !math.IsInf(float64(v), -1) {
			return false
		}
	}
	return true
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
