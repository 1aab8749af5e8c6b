package server

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestOpenAIClient runs the official openai npm client (testdata/client.mjs)
// against Serve with the fake engine. It needs node and the package,
// installed by npm ci --prefix runtime/lm/server/testdata; without them it
// skips, unless $GRAPHC_REQUIRE_NODE=1, as in CI once .ci/run has installed
// them.
func TestOpenAIClient(t *testing.T) {
	missing := func(why string) {
		t.Helper()
		msg := why + ": install the openai client with npm ci --prefix runtime/lm/server/testdata (Node 20 or later)"
		if os.Getenv("GRAPHC_REQUIRE_NODE") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("no node on $PATH")
	}
	if _, err := os.Stat("testdata/node_modules/openai/package.json"); err != nil {
		missing("the openai npm package is not in testdata/node_modules")
	}
	e := newFake()
	e.delay = time.Millisecond
	c := testConfig(e)
	url, stop, log := serve(t, c)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs", url+"/v1", c.Model)
	cmd.Dir = "testdata"
	out, err := cmd.CombinedOutput()
	t.Logf("node client.mjs %s/v1 %s:\n%s", url, c.Model, out)
	if err != nil {
		t.Errorf("node client.mjs: %v\nthe server's log:\n%s", err, log)
	}
	if err := stop(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	// The client aborted one stream.
	select {
	case <-e.canceled:
	default:
		t.Error("the engine saw no sequence canceled")
	}
}
