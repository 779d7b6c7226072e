package server

import (
	"strings"
	"testing"
	"time"

	"github.com/toolscout/toolscout/server/gateway"
)

// TestStuckUpstreamDoesNotHideTheOthers: one upstream server that does
// not answer for far longer than the startup wait does not keep another,
// which listed its tools at once, out of the first answer: past the wait,
// discover_tools answers with the fast server's tools, saying the stuck
// one is still connecting, not "no domain has tools yet" (issue 34,
// defect 3: the fast server's tools were indexed only when the stuck one
// answered or the index's own startup wait ended).
func TestStuckUpstreamDoesNotHideTheOthers(t *testing.T) {
	// Not parallel: the fast fake must connect within the 2 s startup wait,
	// which other tests' processes starting at the same time delay.
	fast := fakeConfig(t, "fast", "ok")
	stuck := fakeConfig(t, "stuck", "ok")
	stuck.Env["TOOLSCOUT_FAKE_DELAY"] = "60s"
	env := startGatewayServer(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{fast, stuck}}, Options{Expose: Exposure{Mode: ExposeMeta}, StartupWait: 2 * time.Second})
	start := time.Now()
	res := call(t, env.cs, DiscoverTools, map[string]any{"query": "echo the text back"})
	took := time.Since(start)
	if res.IsError || !strings.Contains(text(res), "fast__echo") {
		t.Errorf("first discover_tools with one server stuck = %s, want the fast server's tools", text(res))
	}
	if took > 10*time.Second {
		t.Errorf("first discover_tools took %s with a startup wait of 2 s", took)
	}
	res = call(t, env.cs, DiscoverTools, map[string]any{})
	if strings.Contains(text(res), "no domain has tools yet") || !strings.Contains(text(res), "fast") {
		t.Errorf("contents with one server stuck = %s", text(res))
	}
}
