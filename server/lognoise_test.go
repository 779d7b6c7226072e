package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/server/gateway"
)

// Issue 52, item 10: what toolscout logs at the default level (info) is
// what an operator acts on, not a line per request or per routine event.

// all returns every record logged, in order.
func (b *logBuffer) all() []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(b.buf.String(), "\n") {
		var r map[string]any
		if json.Unmarshal([]byte(line), &r) == nil {
			out = append(out, r)
		}
	}
	return out
}

// atLeast returns the records logged at level or above ("INFO", "WARN").
func (b *logBuffer) atLeast(level string) []map[string]any {
	rank := map[string]int{"DEBUG": 0, "INFO": 1, "WARN": 2, "ERROR": 3}
	var out []map[string]any
	for _, r := range b.all() {
		if l, _ := r["level"].(string); rank[l] >= rank[level] {
			out = append(out, r)
		}
	}
	return out
}

// TestShutdownSaysShuttingDown: closing the gateway (a SIGTERM) with
// one server connected and one still connecting logs that toolscout is
// shutting down, once, and no warning: the connection attempt the
// shutdown cut is no "upstream unavailable ... context canceled".
func TestShutdownSaysShuttingDown(t *testing.T) {
	logs := &logBuffer{}
	hang := fakeConfig(t, "hang", "hang")
	env := startGatewayServer(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{fakeConfig(t, "fake", "ok"), hang}, Logger: logs.logger()}, Options{})
	waitFor(t, "the fake server", func() bool { return env.hasTool("fake__echo") })
	env.gw.Close()
	if got := logs.atLeast("WARN"); len(got) > 0 {
		t.Errorf("closing the gateway logged %d warnings or errors, want none: %v", len(got), got)
	}
	if got := logs.records("closing the upstream servers: toolscout is shutting down"); len(got) != 1 || got[0]["level"] != "INFO" || got[0]["servers"] != float64(2) {
		t.Errorf("closing the gateway logged %v, want one info record saying toolscout is shutting down, for 2 servers", got)
	}
}
