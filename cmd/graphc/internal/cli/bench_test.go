package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/format"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

func TestBenchJSON(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main([]string{"bench", "-json", "-run", "^(gemm/f32/m=256,|add/)", "-threads", "1", "-time", "5ms"}, &out, &errb)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var r struct {
		ISA     string
		Results []struct {
			Kernel, DType    string
			M, N, K, Threads int
			GFLOPS           float64 `json:"gflops"`
			GBps             float64 `json:"gbps"`
		}
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 2 {
		t.Fatalf("%d results, want gemm and add: %s", len(r.Results), out.String())
	}
	for _, x := range r.Results {
		if x.Threads != 1 || x.GFLOPS+x.GBps <= 0 {
			t.Errorf("result %+v", x)
		}
	}
	if !strings.Contains(out.String(), `"gflops"`) || !strings.Contains(out.String(), `"gbps"`) {
		t.Errorf("missing fields: %s", out.String())
	}
}

func TestBenchUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"bench", "-threads", "0"}, &out, &errb); code != ExitUsage {
		t.Errorf("-threads 0: exit %d, want %d", code, ExitUsage)
	}
	if code := Main([]string{"bench", "-run", "("}, &out, &errb); code != ExitUsage {
		t.Errorf("-run (: exit %d, want %d", code, ExitUsage)
	}
}

// TestBenchLlamaShort runs bench -llama -short at one thread, with graphc's
// side the generated package (the default) and internal/interp (-interp):
// a row per file and test with graphc's speed positive, and the line naming
// the side (llama.cpp's side runs where its libraries are installed, and is
// skipped otherwise).
func TestBenchLlamaShort(t *testing.T) {
	if testing.Short() {
		t.Skip("writes two small files and compiles a model for each")
	}
	for _, c := range []struct {
		flags []string
		side  string
	}{
		{nil, "graphc: the generated package (go build, "},
		{[]string{"-interp"}, "graphc: internal/interp (-interp)\n"},
	} {
		var out, errb bytes.Buffer
		code := Main(append([]string{"bench", "-llama", "-short", "-threads", "1"}, c.flags...), &out, &errb)
		if code != ExitOK {
			t.Fatalf("%v: exit %d: %s", c.flags, code, errb.String())
		}
		if !strings.HasPrefix(out.String(), c.side) {
			t.Errorf("%v: output does not start with %q:\n%s", c.flags, c.side, out.String())
		}
		checkBenchRows(t, out.String(), "q4_0.gguf pp64", "q4_0.gguf tg16", "q8_0.gguf pp64", "q8_0.gguf tg16")
	}
}

// TestBenchLlamaDepth runs bench -llama -short at a depth, with flash
// attention and q8_0 caches, on both of graphc's sides: the rows are
// named by the depth, as llama-bench's, and graphc's speeds positive.
func TestBenchLlamaDepth(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a small file and compiles a model for it")
	}
	for _, side := range [][]string{nil, {"-interp"}} {
		var out, errb bytes.Buffer
		args := []string{"bench", "-llama", "-short", "-threads", "1", "-type", "q8_0", "-d", "600", "-fa", "on", "-ctk", "q8_0", "-ctv", "q8_0"}
		if code := Main(append(args, side...), &out, &errb); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", side, code, errb.String())
		}
		checkBenchRows(t, out.String(), "q8_0.gguf pp64@d600", "q8_0.gguf tg16@d600")
	}
}

// TestBenchLlamaISA runs bench -llama -short -isa avx2 on a machine with
// AVX2: the table names the level both sides ran at.
func TestBenchLlamaISA(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a small file and compiles a model for it")
	}
	if !slices.Contains(cpu.ISAs(), "avx2") {
		t.Skip("this machine has no AVX2")
	}
	best, env, hadEnv := cpu.ISA(), os.Getenv(cpu.ISAEnv), os.Getenv(cpu.ISAEnv) != ""
	t.Cleanup(func() {
		if hadEnv {
			os.Setenv(cpu.ISAEnv, env)
		} else {
			os.Unsetenv(cpu.ISAEnv)
		}
		if err := cpu.SetISA(best); err != nil {
			t.Error(err)
		}
	})
	var out, errb bytes.Buffer
	if code := Main([]string{"bench", "-llama", "-short", "-interp", "-threads", "1", "-type", "q8_0", "-isa", "avx2"}, &out, &errb); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if want := "graphc: internal/interp (-interp); -isa avx2: graphc's kernels at avx2, llama.cpp's haswell build\n"; !strings.HasPrefix(out.String(), want) {
		t.Errorf("output does not start with %q:\n%s", want, out.String())
	}
	if cpu.ISA() != "avx2" {
		t.Errorf("graphc's kernels ran at %s", cpu.ISA())
	}
	checkBenchRows(t, out.String(), "q8_0.gguf pp64", "q8_0.gguf tg16")
}

// TestBenchLlamaGenerate runs bench -llama -short -generate: the ttft and
// gen rows of graphc generate's loop.
func TestBenchLlamaGenerate(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a small file and builds the generated package for it")
	}
	if !haveGo() {
		t.Skip("no go on $PATH to build the generated package with")
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"bench", "-llama", "-short", "-threads", "1", "-type", "q8_0", "-generate"}, &out, &errb); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	checkBenchRows(t, out.String(), "q8_0.gguf pp64", "q8_0.gguf tg16", "q8_0.gguf ttft64", "q8_0.gguf gen16")
}

// TestBenchLlamaArch runs bench -llama -short on qwen2, mixtral and gemma3 files:
// the bench compiles the architecture's model (examples.ForArch's).
func TestBenchLlamaArch(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a small file and compiles a model for it")
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"bench", "-llama", "-short", "-interp", "-threads", "1", "-arch", "qwen2", "-type", "q8_0"}, &out, &errb); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	checkBenchRows(t, out.String(), "q8_0.gguf pp64", "q8_0.gguf tg16")
	if !strings.Contains(out.String(), "qwen2-l2-") {
		t.Errorf("no qwen2 file in\n%s", out.String())
	}
	// mixtral: a llama file with experts, llama.g's mixture of them.
	out.Reset()
	if code := Main([]string{"bench", "-llama", "-short", "-interp", "-threads", "1", "-arch", "mixtral", "-type", "q4_0"}, &out, &errb); code != ExitOK {
		t.Fatalf("mixtral: exit %d: %s", code, errb.String())
	}
	checkBenchRows(t, out.String(), "q4_0.gguf pp64", "q4_0.gguf tg16")
	if !strings.Contains(out.String(), "llama-l2-e256-h8-kv2-ff512-x8u2-v512-q4_0") {
		t.Errorf("no llama file with 8 experts of 2 in\n%s", out.String())
	}
	// gemma3's sliding-window mask, at a depth past the window, built by
	// the generated package's driver; -interp says it does not build it.
	if !haveGo() {
		t.Skip("no go on $PATH to build the generated package with")
	}
	out.Reset()
	if code := Main([]string{"bench", "-llama", "-short", "-threads", "1", "-arch", "gemma3", "-type", "q8_0", "-d", "40"}, &out, &errb); code != ExitOK {
		t.Fatalf("gemma3: exit %d: %s", code, errb.String())
	}
	checkBenchRows(t, out.String(), "q8_0.gguf pp64@d40", "q8_0.gguf tg16@d40")
	errb.Reset()
	if code := Main([]string{"bench", "-llama", "-short", "-interp", "-threads", "1", "-arch", "gemma3", "-type", "q8_0"}, &out, &errb); code == ExitOK || !strings.Contains(errb.String(), "takes input KQ_mask_swa") {
		t.Errorf("gemma3 -interp: exit %d: %s", code, errb.String())
	}
}

// TestBenchShapes: every -arch's real-model shape makes a file ggufarch
// writes (checked, not written: they are gigabytes).
func TestBenchShapes(t *testing.T) {
	for arch, o := range benchShapes {
		o.Type = tensor.Q8_0
		if err := o.Check(); err != nil {
			t.Errorf("-arch %s: %v", arch, err)
		}
	}
}

// TestBenchLlamaNoGo runs bench -llama -short without go on $PATH: graphc's
// side falls back to internal/interp, saying so.
func TestBenchLlamaNoGo(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a small file and compiles a model for it")
	}
	t.Setenv("PATH", t.TempDir())
	var out, errb bytes.Buffer
	code := Main([]string{"bench", "-llama", "-short", "-threads", "1", "-type", "q4_0"}, &out, &errb)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "no Go toolchain") || !strings.HasPrefix(out.String(), "graphc: internal/interp (no Go toolchain)\n") {
		t.Errorf("no word of the fallback:\nstdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
	checkBenchRows(t, out.String(), "q4_0.gguf pp64", "q4_0.gguf tg16")
}

// checkBenchRows checks that bench -llama's table has a row per want
// ("FILE-SUFFIX TEST") with a positive graphc t/s.
func checkBenchRows(t *testing.T, table string, want ...string) {
	t.Helper()
	speeds := map[string]string{}
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) > 3 && strings.HasSuffix(f[0], ".gguf") {
			speeds[f[0]+" "+f[1]] = f[3]
		}
	}
	for _, w := range want {
		suffix, test, _ := strings.Cut(w, " ")
		found := false
		for k, v := range speeds {
			file, tt, _ := strings.Cut(k, " ")
			if !strings.HasSuffix(file, suffix) || tt != test {
				continue
			}
			found = true
			if x, err := strconv.ParseFloat(v, 64); err != nil || x <= 0 {
				t.Errorf("%s: graphc t/s %q, want a positive number", k, v)
			}
		}
		if !found {
			t.Errorf("no %q row in\n%s", w, table)
		}
	}
}

// TestBenchDriverFails starts the generated package's bench driver on a
// file that is not GGUF, and asks a working one for a batch over the
// model's bound: both are errors naming the driver, with what it wrote
// to stderr, not a hang.
func TestBenchDriverFails(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a small file and builds the generated package for it")
	}
	if !haveGo() {
		t.Skip("no go on $PATH to build the generated package with")
	}
	e := &env{ctx: context.Background(), stdout: io.Discard, stderr: io.Discard}
	lb := &llamaBench{short: true, types: []string{"q4_0"}}
	if err := lb.defaults(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := lb.defaultFiles(e, dir)
	if err != nil {
		t.Fatal(err)
	}
	name, res, err := lb.compile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	bin, cleanup, err := buildBenchDriver(e.ctx, res, name)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()

	bad := filepath.Join(dir, "bad.gguf")
	if err := os.WriteFile(bad, []byte("not a GGUF file"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := startDriver(e.ctx, bin, bad, 1, 512, lb.batch()); err == nil {
		d.close()
		t.Error("the driver started on a file that is not GGUF")
	} else if msg := err.Error(); !strings.Contains(msg, "bench driver (bad.gguf, 1 thread(s))") || !strings.Contains(msg, "exit status 1") || !strings.Contains(msg, bad) {
		t.Errorf("error %q: want the driver, its exit status and gguf's word on the file", msg)
	}

	d, err := startDriver(e.ctx, bin, files[0], 1, 512, lb.batch())
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	if took, err := d.pp(8); err != nil || took <= 0 {
		t.Fatalf("pp 8: %v, %v", took, err)
	}
	_, err = d.pp(lb.pp + 1)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("exit status 1:\npp %d: dim n_", lb.pp+1)) || !strings.Contains(err.Error(), "is outside [0, ") {
		t.Errorf("pp over the bound: %v, want Eval's error", err)
	}
	if _, err := d.tg(1); err == nil {
		t.Error("tg after the driver failed: no error")
	}
}

// TestBenchDriverSourceFormatted keeps the embedded driver gofmt'd, as the
// checks that see .go files cannot see it.
func TestBenchDriverSourceFormatted(t *testing.T) {
	got, err := format.Source(benchDriverSource)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, benchDriverSource) {
		t.Error("internal/cli/benchdriver.go.tmpl is not gofmt'd: gofmt -w it (as a .go file)")
	}
}

func TestBenchLlamaFlags(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "-short"},
		{"bench", "-llama", "-json"},
		{"bench", "-llama", "-pp", "513"},
		{"bench", "-llama", "-type", "q5_9"},
		{"bench", "-ggml", "-llama"},
		{"bench", "-llama", "-d", "-1"},
		{"bench", "-llama", "-arch", "gpt9"},
		{"bench", "-llama", "-d", "64", "-parallel", "2"},
		{"bench", "-llama", "-fa", "auto"},
		{"bench", "-llama", "-ctk", "q3_K"},
		{"bench", "-llama", "-ctv", "q8_0"},
		{"bench", "-llama", "-d", "64", "-ctx", "100"},
		{"bench", "-llama", "-isa", "avx512"},
		{"bench", "-llama", "-isa", "sse"},
	} {
		var out, errb bytes.Buffer
		if code := Main(args, &out, &errb); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d (usage): %s", args, code, ExitUsage, errb.String())
		}
	}
}

// TestBenchGGML runs bench -ggml on the q4_0 and q8_0 matrix-vector
// products at one thread on a short clock, as JSON and as a table:
// graphc's times are positive and, where ggml's libraries are installed,
// so are ggml's for every buffer type that takes the weight, with no
// product differing from ggml's plain one. Without the libraries ggml's
// columns are skipped with one line saying how to get them.
func TestBenchGGML(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main([]string{"bench", "-ggml", "-json", "-run", "^matvec/q8_0/", "-threads", "1", "-time", "5ms"}, &out, &errb)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var r struct {
		GGML *struct {
			Version          string
			ExtraBufferTypes []string `json:"extra_buffer_types"`
		}
		Skipped string `json:"ggml_skipped"`
		Results []struct {
			Kernel, DType    string
			M, N, K, Threads int
			Graphc           float64 `json:"graphc_ns"`
			GraphcPacked     float64 `json:"graphc_packed_ns"`
			Note             string
			GGML             []struct {
				BufferType string  `json:"buffer_type"`
				NsPerOp    float64 `json:"ns_per_op"`
				Ratio      float64
				Declined   bool
				Note       string
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if len(r.Results) != 1 {
		t.Fatalf("%d results, want matvec q8_0 at 1 thread: %s", len(r.Results), out.String())
	}
	c := r.Results[0]
	if c.Kernel != "matvec" || c.DType != "q8_0" || c.M != 4096 || c.N != 1 || c.K != 4096 || c.Threads != 1 || c.Graphc <= 0 || c.GraphcPacked <= 0 || c.Note != "" {
		t.Errorf("result %+v", c)
	}
	if r.GGML == nil {
		if !strings.Contains(errb.String(), "npm pack @node-llama-cpp/linux-x64@3.22.1") || !strings.Contains(errb.String(), "GRAPHC_GGML_PATH") {
			t.Errorf("no how-to for ggml's libraries in stderr: %s", errb.String())
		}
		if len(c.GGML) != 0 {
			t.Errorf("ggml's times without ggml: %+v", c.GGML)
		}
		t.Skipf("graphc's side only: %s", r.Skipped)
	}
	if want := 1 + len(r.GGML.ExtraBufferTypes); len(c.GGML) != want {
		t.Fatalf("%d ggml times, want one per buffer type (%d): %+v", len(c.GGML), want, c.GGML)
	}
	for i, g := range c.GGML {
		if g.Declined && i > 0 {
			continue // an extra buffer type without kernels for q8_0 here
		}
		if g.Declined || g.NsPerOp <= 0 || g.Ratio <= 0 || g.Note != "" {
			t.Errorf("ggml %+v", g)
		}
	}

	out.Reset()
	errb.Reset()
	code = Main([]string{"bench", "-ggml", "-run", "^matvec/q4_0/", "-threads", "1", "-time", "5ms"}, &out, &errb)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	table := out.String()
	for _, want := range []string{"ggml " + r.GGML.Version, "graphc packed", "ggml CPU", "matvec   q4_0  4096  1  4096"} {
		if !strings.Contains(table, want) {
			t.Errorf("no %q in\n%s", want, table)
		}
	}
	if strings.Contains(table, " !") {
		t.Errorf("a ggml product differs from the plain one:\n%s", table)
	}
}

// fakeSide is a benchSide that logs what it is asked to do.
type fakeSide struct {
	name string
	log  *[]string
}

func (s *fakeSide) pp(n int) (time.Duration, error) {
	*s.log = append(*s.log, fmt.Sprintf("%s pp%d", s.name, n))
	return time.Duration(n), nil
}

func (s *fakeSide) tg(n int) (time.Duration, error) {
	*s.log = append(*s.log, fmt.Sprintf("%s tg%d", s.name, n))
	return time.Duration(2 * n), nil
}

func (s *fakeSide) gen(n int) (time.Duration, error) {
	*s.log = append(*s.log, fmt.Sprintf("%s gen%d", s.name, n))
	return time.Duration(n), nil
}

func (s *fakeSide) ttft(n int) (time.Duration, error) {
	*s.log = append(*s.log, fmt.Sprintf("%s ttft%d", s.name, n))
	return time.Duration(n), nil
}

func (s *fakeSide) bd(seqs, n int) (time.Duration, error) {
	*s.log = append(*s.log, fmt.Sprintf("%s bd%dx%d", s.name, seqs, n))
	return time.Duration(seqs * n), nil
}
func (s *fakeSide) close()         { *s.log = append(*s.log, s.name+" close") }
func (s *fakeSide) peakRSS() int64 { return 0 }

// TestBenchPairOrder checks that a repetition's pair starts, warms up and
// runs both sides in the order it is given, each test on both before the
// next, and that llama.cpp's side may be missing.
func TestBenchPairOrder(t *testing.T) {
	for _, c := range []struct {
		graphcFirst, llama bool
		want               string
	}{
		{true, true, "graphc open 2, llama open 2, graphc pp4, graphc tg1, llama pp4, llama tg1, graphc tg8, llama tg8, graphc bd4x8, llama bd4x8, graphc close, llama close"},
		{false, true, "llama open 2, graphc open 2, llama pp4, llama tg1, graphc pp4, graphc tg1, llama tg8, graphc tg8, llama bd4x8, graphc bd4x8, graphc close, llama close"},
		{false, false, "graphc open 2, graphc pp4, graphc tg1, graphc tg8, graphc bd4x8, graphc close"},
	} {
		var log []string
		opener := func(name string) func(int) (benchSide, error) {
			return func(threads int) (benchSide, error) {
				log = append(log, fmt.Sprintf("%s open %d", name, threads))
				return &fakeSide{name, &log}, nil
			}
		}
		openLlama := opener("llama")
		if !c.llama {
			openLlama = nil
		}
		p := &benchPair{graphcFirst: c.graphcFirst}
		if err := p.start(opener("graphc"), openLlama, 2); err != nil {
			t.Fatal(err)
		}
		if err := p.warmUp(4); err != nil {
			t.Fatal(err)
		}
		d, err := p.run("tg", 8, 0)
		if err != nil {
			t.Fatal(err)
		}
		bd, err := p.run("bd", 8, 4)
		if err != nil {
			t.Fatal(err)
		}
		p.close()
		if bd[0] != 32 || (c.llama && bd[1] != 32) {
			t.Errorf("bd: %v", bd)
		}
		want := [2]time.Duration{16, 16}
		if !c.llama {
			want[1] = 0
		}
		if got := strings.Join(log, ", "); got != c.want || d != want {
			t.Errorf("graphcFirst %v, llama %v:\n got %s, times %v\nwant %s, times %v", c.graphcFirst, c.llama, got, d, c.want, want)
		}
	}
}
