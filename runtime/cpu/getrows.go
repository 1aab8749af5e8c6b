package cpu

import (
	"fmt"

	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/tensor"
)

// GetRows is ggml_get_rows: with idx of shape [n, ne1, ne2] (i32), dst[:, i,
// j, k] = table[:, idx[i, j, k], j, k]; table.Ne[2] == idx.Ne[1] and
// table.Ne[3] == idx.Ne[2]. table is f32, f16 or i32; dst is f32 (f16 also
// allowed) for a float table and i32 for an i32 one.
func (b *Backend) GetRows(dst, table, idx *tensor.Tensor) {
	if isBlockType(table.Type) {
		b.getRowsBlocks(dst, table, idx)
		return
	}
	t := &b.rows
	*t = getRowsTask{b: b}
	t.d.set("GetRows", "dst", dst)
	t.tab.set("GetRows", "table", table)
	t.idx.set("GetRows", "idx", idx)
	d, tb, ix := &t.d, &t.tab, &t.idx
	if ix.typ != tensor.I32 || ix.ne[3] != 1 ||
		d.ne != [4]int{tb.ne[0], ix.ne[0], ix.ne[1], ix.ne[2]} || tb.ne[2] != ix.ne[1] || tb.ne[3] != ix.ne[2] {
		bug("GetRows: dst %v%v, table %v%v, idx %v%v", d.typ, d.ne, tb.typ, tb.ne, ix.typ, ix.ne)
	}
	if (tb.typ == tensor.I32) != (d.typ == tensor.I32) {
		bug("GetRows: dst %v from table %v", d.typ, tb.typ)
	}
	b.growScratch(b.pool.n, tb.ne[0])
	b.parallel(t, d.nelem(), ix.nelem())
	*t = getRowsTask{}
}

type getRowsTask struct {
	b           *Backend
	d, tab, idx tview
}

func (t *getRowsTask) run(chunk, nchunks, tid int) {
	d, tb, ix := &t.d, &t.tab, &t.idx
	n := tb.ne[0]
	lo, hi := split(ix.nelem(), chunk, nchunks)
	for r := lo; r < hi; r++ {
		i0 := r % ix.ne[0]
		i1 := r / ix.ne[0] % ix.ne[1]
		i2 := r / ix.ne[0] / ix.ne[1]
		row := int(ix.i32[i0*ix.st[0]+i1*ix.st[1]+i2*ix.st[2]])
		if row < 0 || row >= tb.ne[1] {
			rowOutOfRange(row, tb.ne[1])
		}
		convertRow(d, d.off(i0, i1, i2), d.st[0], tb, tb.off(row, i1, i2), tb.st[0], n, t.b.scratch[tid])
	}
}

// rowOutOfRange reports an index that is not a row of the table: the
// values' fault, not the plan's, so it is a KernelError that the
// evaluation returns (generated code checks its inputs before this).
func rowOutOfRange(row, rows int) {
	panic(&engine.KernelError{Op: "get_rows", Msg: fmt.Sprintf("index %d is not a row of the table (0..%d)", row, rows-1)})
}
