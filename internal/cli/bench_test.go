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
	} {
		var out, errb bytes.Buffer
		if code := Main(args, &out, &errb); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d (usage): %s", args, code, ExitUsage, errb.String())
		}
	}
}
