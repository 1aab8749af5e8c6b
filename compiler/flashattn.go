package compiler

import (
	"fmt"
	"maps"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
)

// flashAttnFlag is the flag the file models choose flash attention by:
// flag("fa", …), 1 for on.
const flashAttnFlag = "fa"

// compileFlashAttnAuto is llama.cpp's -fa auto (llama_context's
// constructor): the graph is planned with flash attention on, and kept
// only if every flash_attn_ext runs on the backend that holds its K cache;
// where one does not (its backend lacks the op for these types), the
// model is planned again with it off, saying why in Result.Warnings. A
// model without the flag, or one that does not compile with it on, is
// compiled as the flags say.
func compileFlashAttnAuto(filename string, src []byte, cfg Config) (*Result, error) {
	cfg.FlashAttnAuto = false
	on := cfg
	on.Flags = maps.Clone(cfg.Flags)
	if on.Flags == nil {
		on.Flags = map[string]int64{}
	}
	on.Flags[flashAttnFlag] = 1
	res, err := Compile(filename, src, on)
	if err != nil {
		return Compile(filename, src, cfg)
	}
	why := flashAttnMismatch(res.Graph)
	if why == "" {
		return res, nil
	}
	off := cfg
	off.Flags = maps.Clone(cfg.Flags)
	if off.Flags == nil {
		off.Flags = map[string]int64{}
	}
	off.Flags[flashAttnFlag] = 0
	if res, err = Compile(filename, src, off); err != nil {
		return nil, err
	}
	res.Warnings = append(res.Warnings, "-fa auto: flash attention off: "+why)
	return res, nil
}

// flashAttnMismatch names the first flash_attn_ext that runs on another
// backend than the one holding its K cache (a split input of it, copied
// there, counts as held elsewhere); "" when there is none.
func flashAttnMismatch(g *ir.Graph) string {
	for _, n := range g.Nodes {
		if n.Op != ops.FlashAttnExt || len(n.Src) < 2 {
			continue
		}
		k := n.Src[1]
		for k.Kind == ir.KindCopy && k.CopyOf != nil {
			k = k.CopyOf
		}
		if k.ViewSrc != nil {
			k = k.ViewSrc
		}
		if k.Backend >= 0 && n.Backend >= 0 && k.Backend != n.Backend {
			return fmt.Sprintf("%s runs on %s, its K cache %s on %s (usually: %[4]s lacks the op for these types)",
				n.Name, g.Backends[n.Backend].Name, k.Name, g.Backends[k.Backend].Name)
		}
	}
	return ""
}
