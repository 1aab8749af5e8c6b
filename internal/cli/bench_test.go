package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
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

// TestBenchLlamaShort runs bench -llama -short at one thread: a row per
// file and test, graphc's speed positive (llama.cpp's side runs where its
// libraries are installed, and is skipped otherwise).
func TestBenchLlamaShort(t *testing.T) {
	if testing.Short() {
		t.Skip("writes two small files and compiles a model for each")
	}
	var out, errb bytes.Buffer
	code := Main([]string{"bench", "-llama", "-short", "-threads", "1"}, &out, &errb)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"q4_0.gguf  pp64", "q4_0.gguf  tg16", "q8_0.gguf  pp64", "q8_0.gguf  tg16"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q row in\n%s", want, out.String())
		}
	}
}

func TestBenchLlamaFlags(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "-short"},
		{"bench", "-llama", "-json"},
		{"bench", "-llama", "-pp", "513"},
		{"bench", "-llama", "-type", "q5_k"},
		{"bench", "-ggml", "-llama"},
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
