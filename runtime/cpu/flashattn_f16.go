package cpu

// faAccumH is faAccum with v's nk rows f16 (ldv elements apart), read as
// the kernels read them: no float32 copy of a V block is made, and the
// conversion of each row overlaps the sums' rounding.
func faAccumH(acc []float32, lda int, v []uint16, ldv int, wm []float32, nk, dv, flags int) {
	if nk == 0 || dv == 0 {
		return
	}
	_, _, _ = acc[3*lda+dv-1], v[(nk-1)*ldv+dv-1], wm[8*nk-1]
	c := 0
	switch level {
	case isaAVX512:
		if c = dv &^ 31; c > 0 {
			faAccumHAVX512(&acc[0], lda, &v[0], ldv, &wm[0], nk, c, flags)
		}
	case isaAVX2:
		if c = dv &^ 15; c > 0 {
			faAccumHAVX2(&acc[0], lda, &v[0], ldv, &wm[0], nk, c, flags)
		}
	}
	if c < dv {
		faAccumHGo(acc, lda, v, ldv, wm, nk, c, dv, flags)
	}
}

// faAccumHGo is faAccumH's loop over columns [c0, c1): faAccumGo with
// each v value widened exactly.
func faAccumHGo(acc []float32, lda int, v []uint16, ldv int, wm []float32, nk, c0, c1, flags int) {
	tab := &f16Table
	for r := range 4 {
		a := acc[r*lda+c0 : r*lda+c1]
		for j := range nk {
			if flags&faMul != 0 {
				m := wm[8*j+4+r]
				for i := range a {
					a[i] *= m
				}
				if flags&faRound != 0 {
					roundF16Go(a, a)
				}
			}
			w := wm[8*j+r]
			vr := v[j*ldv+c0 : j*ldv+c1]
			for i, x := range vr {
				a[i] += w * tab[x]
			}
			if flags&faRound != 0 {
				roundF16Go(a, a)
			}
		}
	}
}

// transposeH8 sets dst[p·ldd + i] to the float32 value of src[i·lds + p]
// for the eight rows i of k values (k a multiple of 8): transpose8 of f16
// rows.
func transposeH8(dst []float32, ldd int, src []uint16, lds, k int) {
	if k == 0 {
		return
	}
	_, _ = dst[(k-1)*ldd+7], src[7*lds+k-1]
	if level == isaGo {
		transposeH8Go(dst, ldd, src, lds, k)
		return
	}
	transposeH8AVX(&dst[0], ldd, &src[0], lds, k)
}

func transposeH8Go(dst []float32, ldd int, src []uint16, lds, k int) {
	tab := &f16Table
	for i := range 8 {
		for p, h := range src[i*lds : i*lds+k] {
			dst[p*ldd+i] = tab[h]
		}
	}
}
