package sample

import (
	"flag"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// logs are the logits of probabilities ps.
func logs(ps ...float64) []float32 {
	l := make([]float32, len(ps))
	for i, p := range ps {
		l[i] = float32(math.Log(p))
	}
	return l
}

// cands are l's candidates in id order.
func cands(l []float32) []cand {
	c := make([]cand, len(l))
	for i, v := range l {
		c[i] = cand{id: int32(i), logit: v}
	}
	return c
}

func ids(c []cand) []int32 {
	var out []int32
	for _, x := range c {
		out = append(out, x.id)
	}
	return out
}

// only is Params with every stage off but those set by f.
func only(f func(*Params)) Params {
	p := Params{TopP: 1, TypicalP: 1, RepeatPenalty: 1, Temp: 1, Seed: 1}
	f(&p)
	return p
}

func TestGreedyIsArgmax(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, p := range []Params{
		only(func(p *Params) { p.Temp = 0 }),
		func() Params { p := Defaults(); p.Temp = 0; return p }(),
		func() Params { p := Defaults(); p.Temp = -1; p.TopK = 0; return p }(),
	} {
		s := New(p, 50)
		for range 1000 {
			l := make([]float32, 50)
			for i := range l {
				l[i] = float32(r.IntN(8)) // few values: many ties
			}
			want := int32(slices.Index(l, slices.Max(l)))
			if got := s.Sample(l); got != want {
				t.Fatalf("%+v: Sample(%v) = %d, want %d", p, l, got, want)
			}
		}
	}
}

// The temperature stage, after typical-p, picks the largest logit of what
// is left, ties to the lowest id.
func TestGreedyAfterTypical(t *testing.T) {
	p := only(func(p *Params) { p.Temp = 0; p.TypicalP = 0.5 })
	for _, tc := range []struct {
		l    []float32
		want int32
	}{
		// p .40 .40 .15 .05: the two most likely are the most typical.
		{[]float32{1, 3, 3, 2}, 1},
		// p .3 then ten of .07: typical-p drops the first (TestTypical).
		{logs(0.3, 0.07, 0.07, 0.07, 0.07, 0.07, 0.07, 0.07, 0.07, 0.07, 0.07), 1},
	} {
		if got := New(p, len(tc.l)).Sample(tc.l); got != tc.want {
			t.Errorf("Sample(%v) = %d, want %d", tc.l, got, tc.want)
		}
	}
}

func TestTopK(t *testing.T) {
	l := []float32{1, 3, 2, 3, 0}
	for _, tc := range []struct {
		k    int
		want []int32
	}{
		{1, []int32{1}},
		{2, []int32{1, 3}},
		{3, []int32{1, 3, 2}},
		{5, []int32{1, 3, 2, 0, 4}},
	} {
		if got := ids(topK(make([]cand, len(l)), l, tc.k)); !slices.Equal(got, tc.want) {
			t.Errorf("topK(%v, %d) = %v, want %v", l, tc.k, got, tc.want)
		}
	}
	// Against a full sort, on a vocabulary with ties.
	r := rand.New(rand.NewPCG(3, 4))
	big := make([]float32, 5000)
	for i := range big {
		big[i] = float32(r.IntN(1000))
	}
	want := cands(big)
	slices.SortFunc(want, better)
	for _, k := range []int{1, 40, 300, 5000} {
		if got := topK(make([]cand, len(big)), big, k); !slices.Equal(ids(got), ids(want[:k])) {
			t.Errorf("topK of 5000, k %d: not the first k of a full sort", k)
		}
	}
}

func TestTopP(t *testing.T) {
	// Out of order: top-p sorts.
	l := logs(0.15, 0.5, 0.1, 0.25)
	for _, tc := range []struct {
		p    float32
		want []int32
	}{
		{0.3, []int32{1}},
		{0.7, []int32{1, 3}},
		{0.8, []int32{1, 3, 0}},
		{0.99, []int32{1, 3, 0, 2}},
	} {
		if got := ids(topP(cands(l), tc.p, false)); !slices.Equal(got, tc.want) {
			t.Errorf("topP(%v, %v) = %v, want %v", l, tc.p, got, tc.want)
		}
	}
	// Four equal logits: each p is exactly 0.25, and top-p stops where the
	// sum reaches p.
	if got := topP(cands(make([]float32, 4)), 0.5, false); len(got) != 2 {
		t.Errorf("topP of 4 equal logits, p 0.5: kept %d, want 2", len(got))
	}
	// A vocabulary over 1024 whose cut falls past the first 256, against a
	// full sort.
	r := rand.New(rand.NewPCG(5, 6))
	big := make([]float32, 3000)
	for i := range big {
		big[i] = float32(r.NormFloat64() * 0.1)
	}
	want := cands(big)
	softmax(want)
	slices.SortFunc(want, better)
	n, cum := 0, float32(0)
	for cum < 0.9 {
		cum += want[n].p
		n++
	}
	if n <= 256 {
		t.Fatalf("the cut at %d does not test past 256", n)
	}
	if got := topP(cands(big), 0.9, false); !slices.Equal(ids(got), ids(want[:n])) {
		t.Errorf("topP of 3000 kept %d, want the first %d of a full sort", len(got), n)
	}
}

func TestMinP(t *testing.T) {
	l := logs(0.15, 0.5, 0.1, 0.25)
	for _, tc := range []struct {
		p    float32
		want []int32
	}{
		{0.25, []int32{0, 1, 3}}, // p >= 0.125, in their order
		{0.4, []int32{1, 3}},     // p >= 0.2
		{0.9, []int32{1}},
		{0.01, []int32{0, 1, 2, 3}},
	} {
		if got := ids(minP(cands(l), tc.p)); !slices.Equal(got, tc.want) {
			t.Errorf("minP(%v, %v) = %v, want %v", l, tc.p, got, tc.want)
		}
	}
	if got := minP(cands([]float32{1, 2, 2}), 1); len(got) != 2 {
		t.Errorf("minP 1 kept %d of two equal largest logits", len(got))
	}
}

func TestTypical(t *testing.T) {
	// p 0.5 0.25 0.15 0.1: entropy 1.208; |-log p - H| = 0.515 0.178 0.689
	// 1.095, so the order is 1 0 2 3, cut once the sum exceeds p.
	l := logs(0.5, 0.25, 0.15, 0.1)
	for _, tc := range []struct {
		p    float32
		want []int32
	}{
		{0.2, []int32{1}},
		{0.5, []int32{1, 0}},
		{0.8, []int32{1, 0, 2}},
		{0.95, []int32{1, 0, 2, 3}},
	} {
		if got := ids(typical(cands(l), tc.p, false)); !slices.Equal(got, tc.want) {
			t.Errorf("typical(%v, %v) = %v, want %v", l, tc.p, got, tc.want)
		}
	}
	// A token of probability 0 (llama.cpp's entropy would be NaN): the
	// ten of 0.07 are more typical than the 0.3 (surprise 2.66 and 1.20,
	// entropy 2.22); eight of them pass 0.5.
	l = append(logs(0.3, 0.07, 0.07, 0.07, 0.07, 0.07, 0.07, 0.07, 0.07, 0.07, 0.07), float32(math.Inf(-1)))
	if got := ids(typical(cands(l), 0.5, false)); !slices.Equal(got, []int32{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Errorf("typical(%v, 0.5) = %v, want 1…8", l, got)
	}
	// Unlike top-p, typical-p stops where the sum exceeds p.
	if got := typical(cands(make([]float32, 4)), 0.5, false); len(got) != 3 {
		t.Errorf("typical of 4 equal logits, p 0.5: kept %d, want 3", len(got))
	}
}

func TestPenalties(t *testing.T) {
	l := []float32{2, -2, 1, 0.5, 0}
	p := only(func(p *Params) {
		p.RepeatLastN = 64
		p.RepeatPenalty = 2
		p.FrequencyPenalty = 0.5
		p.PresencePenalty = 0.25
	})
	accept := func(s *Sampler, toks ...int32) {
		for _, t := range toks {
			s.Accept(t)
		}
	}
	s := New(p, len(l))
	accept(s, 0, 0, 1, 4)
	// 0: 2/2 - (2·0.5 + 0.25); 1: -2·2 - (0.5 + 0.25); 4: 0·2 - 0.75.
	want := []float32{-0.25, -4.75, 1, 0.5, -0.75}
	if got := s.penalize(l); !slices.Equal(got, want) {
		t.Errorf("penalized %v, want %v", got, want)
	}
	if l[0] != 2 {
		t.Errorf("penalize changed logits: %v", l)
	}

	// A window of 2: 0 twice, 1 no more.
	p.RepeatLastN = 2
	s = New(p, len(l))
	accept(s, 0, 1, 0, 0)
	want = []float32{-0.25, -2, 1, 0.5, 0}
	if got := s.penalize(l); !slices.Equal(got, want) {
		t.Errorf("last_n 2: penalized %v, want %v", got, want)
	}

	// -1: the whole history, beyond the default's 64.
	p.RepeatLastN = -1
	s = New(p, len(l))
	for range 100 {
		accept(s, 0)
	}
	if got, want := s.penalize(l)[0], float32(1-(100*0.5+0.25)); got != want {
		t.Errorf("last_n -1: penalized logit %v, want %v", got, want)
	}
	s.Reset()
	if got := s.penalize(l); !slices.Equal(got, l) {
		t.Errorf("after Reset: penalized %v, want %v", got, l)
	}

	// 0: off.
	p.RepeatLastN = 0
	s = New(p, len(l))
	accept(s, 0, 1)
	if got := s.penalize(l); !slices.Equal(got, l) {
		t.Errorf("last_n 0: penalized %v, want %v", got, l)
	}

	// Through Sample: greedy on the penalized logits.
	g := Defaults()
	g.Temp = 0
	g.RepeatPenalty = 2
	s = New(g, 2)
	if got := s.Sample([]float32{1, 0.9}); got != 0 {
		t.Fatalf("Sample = %d, want 0", got)
	}
	s.Accept(0)
	if got := s.Sample([]float32{1, 0.9}); got != 1 {
		t.Errorf("after Accept(0), Sample = %d, want 1 (1/2 < 0.9)", got)
	}
}

// TestDistribution draws many tokens and compares their frequencies with
// the softmax of the truncated logits at the temperature.
func TestDistribution(t *testing.T) {
	l := []float32{1, 2.5, 0.5, 2, -1, 1.5}
	for _, tc := range []struct {
		name string
		p    Params
		keep []int // the candidates left before the temperature
	}{
		{"top-k 3, temp 0.5", only(func(p *Params) { p.TopK = 3; p.Temp = 0.5 }), []int{1, 3, 5}},
		{"top-k 3, temp 2", only(func(p *Params) { p.TopK = 3; p.Temp = 2 }), []int{1, 3, 5}},
		// p by logit: .42 .26 .16 .09 .06 .01: top-p 0.7 keeps 3 (.84),
		// min-p 0.3 those >= .127.
		{"top-p 0.7, temp 1.5", only(func(p *Params) { p.TopP = 0.7; p.Temp = 1.5 }), []int{1, 3, 5}},
		{"min-p 0.3, temp 0.7", only(func(p *Params) { p.MinP = 0.3; p.Temp = 0.7 }), []int{1, 3, 5}},
		{"all, temp 1", only(func(p *Params) { p.Temp = 1 }), []int{0, 1, 2, 3, 4, 5}},
	} {
		var sum float64
		want := make([]float64, len(l))
		for _, i := range tc.keep {
			want[i] = math.Exp(float64(l[i]) / float64(tc.p.Temp))
			sum += want[i]
		}
		const n = 200000
		got := make([]float64, len(l))
		s := New(tc.p, len(l))
		for range n {
			got[s.Sample(l)]++
		}
		for i := range want {
			want[i] /= sum
			got[i] /= n
			// 5 standard deviations of a frequency.
			if tol := 5 * math.Sqrt(want[i]*(1-want[i])/n); math.Abs(got[i]-want[i]) > tol {
				t.Errorf("%s: token %d drawn %.4f of the time, want %.4f ± %.4f", tc.name, i, got[i], want[i], tol)
			}
		}
	}
}

func TestSeed(t *testing.T) {
	l := make([]float32, 1000)
	r := rand.New(rand.NewPCG(7, 8))
	for i := range l {
		l[i] = float32(r.NormFloat64())
	}
	draw := func(s *Sampler) []int32 {
		out := make([]int32, 200)
		for i := range out {
			out[i] = s.Sample(l)
		}
		return out
	}
	p := Defaults()
	p.Seed = 42
	a, b := New(p, len(l)), New(p, len(l))
	first := draw(a)
	if !slices.Equal(first, draw(b)) {
		t.Error("two samplers seeded 42 drew different tokens")
	}
	if slices.Equal(first, draw(a)) {
		t.Error("the RNG did not move on between draws")
	}
	a.Reset()
	if !slices.Equal(first, draw(a)) {
		t.Error("after Reset, a sampler seeded 42 did not start over")
	}
	p.Seed = 43
	if slices.Equal(first, draw(New(p, len(l)))) {
		t.Error("seeds 42 and 43 drew the same tokens")
	}
	if a.Seed() != 42 {
		t.Errorf("Seed() = %d, want 42", a.Seed())
	}

	p.Seed = DefaultSeed
	c, d := New(p, len(l)), New(p, len(l))
	if c.Seed() == DefaultSeed || c.Seed() == d.Seed() {
		t.Errorf("random seeds %d and %d", c.Seed(), d.Seed())
	}
	p.Seed = c.Seed()
	if !slices.Equal(draw(c), draw(New(p, len(l)))) {
		t.Error("the seed Seed() reports does not repeat its draws")
	}
}

func TestSampleKeepsLogits(t *testing.T) {
	l := []float32{3, 1, 2, 2, 0}
	orig := slices.Clone(l)
	p := Defaults()
	p.RepeatPenalty = 1.5
	p.TypicalP = 0.9
	s := New(p, len(l))
	s.Accept(0)
	for range 10 {
		s.Sample(l)
	}
	if !slices.Equal(l, orig) {
		t.Errorf("Sample changed the logits: %v, were %v", l, orig)
	}
}

func TestSampleWrongLength(t *testing.T) {
	defer func() {
		if r, _ := recover().(string); !strings.HasPrefix(r, "BUG:") {
			t.Errorf("recovered %q, want a BUG: panic", r)
		}
	}()
	New(Defaults(), 10).Sample(make([]float32, 9))
}

func TestNoAllocs(t *testing.T) {
	const n = 5000
	l := make([]float32, n)
	r := rand.New(rand.NewPCG(9, 10))
	for i := range l {
		l[i] = float32(r.NormFloat64() * 3)
	}
	for name, f := range map[string]func(*Params){
		"defaults":  func(*Params) {},
		"greedy":    func(p *Params) { p.Temp = 0 },
		"top-k off": func(p *Params) { p.TopK = 0 },
		"typical":   func(p *Params) { p.TypicalP = 0.9; p.TopK = 0 },
		"penalties": func(p *Params) { p.RepeatPenalty = 1.1; p.FrequencyPenalty = 0.1 },
	} {
		p := Defaults()
		f(&p)
		s := New(p, n)
		for i := range 100 {
			s.Accept(int32(i))
		}
		if a := testing.AllocsPerRun(20, func() { s.Sample(l) }); a != 0 {
			t.Errorf("%s: %v allocations per Sample", name, a)
		}
	}
}

func TestFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	p := Defaults()
	p.Flags(fs)
	for name, def := range map[string]string{
		"temp": "0.8", "top-k": "40", "top-p": "0.95", "min-p": "0.05", "typical": "1",
		"repeat-last-n": "64", "repeat-penalty": "1", "presence-penalty": "0",
		"frequency-penalty": "0", "seed": "-1",
	} {
		if f := fs.Lookup(name); f == nil || f.DefValue != def {
			t.Errorf("flag -%s: %+v, want default %s", name, f, def)
		}
	}
	err := fs.Parse(strings.Fields("-temp 0.5 -top-k 10 --top-p 0.9 -min-p 0.1 -typical 0.7 " +
		"-repeat-last-n -1 -repeat-penalty 1.1 -presence-penalty 0.2 -frequency-penalty 0.3 -seed 42"))
	if err != nil {
		t.Fatal(err)
	}
	want := Params{Temp: 0.5, TopK: 10, TopP: 0.9, MinP: 0.1, TypicalP: 0.7, RepeatLastN: -1,
		RepeatPenalty: 1.1, PresencePenalty: 0.2, FrequencyPenalty: 0.3, Seed: 42}
	if p != want {
		t.Errorf("parsed %+v, want %+v", p, want)
	}
	if err := fs.Parse([]string{"-seed", "-1"}); err != nil || p.Seed != DefaultSeed {
		t.Errorf("-seed -1: seed %d, %v; want DefaultSeed", p.Seed, err)
	}
	for _, args := range [][]string{{"-temp", "hot"}, {"-seed", "-2"}, {"-top-k", "1.5"}} {
		if err := fs.Parse(args); err == nil {
			t.Errorf("%v parsed", args)
		}
	}
}

func TestCheck(t *testing.T) {
	if err := Defaults().Check(); err != nil {
		t.Errorf("Defaults: %v", err)
	}
	ok := Defaults()
	ok.Temp, ok.TopK, ok.TopP, ok.MinP, ok.RepeatLastN, ok.PresencePenalty = -1, -1, 1, 0, -1, -0.5
	if err := ok.Check(); err != nil {
		t.Errorf("%+v: %v", ok, err)
	}
	nan := float32(math.NaN())
	for flag, f := range map[string]func(*Params){
		"-temp":              func(p *Params) { p.Temp = nan },
		"-top-p":             func(p *Params) { p.TopP = 0 },
		"-top-p 1.5":         func(p *Params) { p.TopP = 1.5 },
		"-min-p":             func(p *Params) { p.MinP = -0.1 },
		"-min-p 2":           func(p *Params) { p.MinP = 2 },
		"-typical":           func(p *Params) { p.TypicalP = 0 },
		"-repeat-last-n":     func(p *Params) { p.RepeatLastN = -2 },
		"-repeat-penalty":    func(p *Params) { p.RepeatPenalty = 0 },
		"-presence-penalty":  func(p *Params) { p.PresencePenalty = float32(math.Inf(1)) },
		"-frequency-penalty": func(p *Params) { p.FrequencyPenalty = nan },
	} {
		p := Defaults()
		f(&p)
		if err := p.Check(); err == nil || !strings.HasPrefix(err.Error(), flag) {
			t.Errorf("%+v: %v, want an error naming %s", p, err, flag)
		}
	}
}

// bench samples a row of 128256 logits (Llama 3's vocabulary) with
// Defaults() changed by f.
func bench(b *testing.B, f func(*Params)) {
	const n = 128256
	l := make([]float32, n)
	r := rand.New(rand.NewPCG(11, 12))
	for i := range l {
		l[i] = float32(r.NormFloat64() * 3)
	}
	p := Defaults()
	f(&p)
	s := New(p, n)
	for i := range 64 {
		s.Accept(int32(i))
	}
	for b.Loop() {
		s.Sample(l)
	}
}

func BenchmarkSample(b *testing.B)          { bench(b, func(*Params) {}) }
func BenchmarkSampleGreedy(b *testing.B)    { bench(b, func(p *Params) { p.Temp = 0 }) }
func BenchmarkSamplePenalties(b *testing.B) { bench(b, func(p *Params) { p.RepeatPenalty = 1.1 }) }
func BenchmarkSampleTopKOff(b *testing.B)   { bench(b, func(p *Params) { p.TopK = 0 }) }
