package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolscout/toolscout/internal/logtest"
	"github.com/toolscout/toolscout/server/gateway"
)

// logBuffer collects a gateway's log as JSON lines, for tests that read
// what it logged.
type logBuffer struct{ logtest.Buffer }

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// records returns the records logged with message msg, in order.
func (b *logBuffer) records(msg string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(b.String(), "\n") {
		var r map[string]any
		if json.Unmarshal([]byte(line), &r) == nil && r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
}

// TestUpstreamEnvironment: a stdio upstream gets its config's env and the
// allow-listed variables, never the rest of toolscout's environment (the
// bearer token above all).
func TestUpstreamEnvironment(t *testing.T) {
	if !inOwnProcess(t) { // it sets the process's environment
		return
	}
	t.Setenv("TOOLSCOUT_AUTH_TOKEN", "bearer-secret")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
	t.Setenv("HTTPS_PROXY", "http://proxy.test:3128")
	t.Setenv("LC_TIME", "C")
	t.Setenv("HOME", "/home/from-toolscout")
	up := fakeConfig(t, "env", "env")
	up.Env["GITHUB_TOKEN"] = "given-in-config"
	up.Env["HOME"] = "/home/from-config"
	env := startGateway(t, []gateway.UpstreamConfig{up}, Exposure{Mode: ExposeMeta})
	waitFor(t, "the fake's tools", func() bool { return env.hasTool("env__environ") })
	res := call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "env__environ"})
	if res.IsError {
		t.Fatal(text(res))
	}
	got := map[string]string{}
	for _, kv := range strings.Split(text(res), "\n") {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	for _, tc := range []struct {
		name, want string // want "" for a variable that must not be set
	}{
		{"PATH", os.Getenv("PATH")},
		{"HTTPS_PROXY", "http://proxy.test:3128"},
		{"LC_TIME", "C"},
		{"HOME", "/home/from-config"},
		{"GITHUB_TOKEN", "given-in-config"},
		{"TOOLSCOUT_FAKE_UPSTREAM", "env"},
		{"TOOLSCOUT_AUTH_TOKEN", ""},
		{"AWS_SECRET_ACCESS_KEY", ""},
	} {
		if v, ok := got[tc.name]; v != tc.want || tc.want == "" && ok {
			t.Errorf("upstream's %s = %q (set: %v), want %q", tc.name, v, ok, tc.want)
		}
	}
}

// TestUpstreamBanner: lines on stdout that are not JSON-RPC (a banner, log
// lines) are skipped and logged, at most noisePerSecond a second; the
// session goes on and the server is not restarted.
func TestUpstreamBanner(t *testing.T) {
	t.Parallel()
	logs := &logBuffer{}
	starts := filepath.Join(t.TempDir(), "starts")
	up := fakeConfig(t, "banner", "banner")
	up.Env["TOOLSCOUT_FAKE_STARTS"] = starts
	env := startGatewayWith(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{up}, MinBackoff: 100 * time.Millisecond, MaxBackoff: 500 * time.Millisecond, Logger: logs.logger()}, Exposure{Mode: ExposeMeta})
	waitFor(t, "the tools of a server that prints a banner", func() bool { return env.hasTool("banner__echo") })
	time.Sleep(1100 * time.Millisecond) // the next skipped line is logged in a new second
	res := call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "banner__echo", "arguments": map[string]any{"text": "hi"}})
	if res.IsError || text(res) != "hi" {
		t.Fatalf("echo = %v %q", res.IsError, text(res))
	}
	if b, _ := os.ReadFile(starts); bytes.Count(b, []byte("\n")) != 1 {
		t.Errorf("the server started %d times, want once", bytes.Count(b, []byte("\n")))
	}

	// 29 lines before initialize, 1 before tools/list, 1 before tools/call
	// (the blank line is no message at all): all counted, at most
	// noisePerSecond logged in one second.
	skipped := logs.records("upstream printed a line on stdout that is not JSON-RPC; skipped")
	if len(skipped) == 0 || skipped[0]["domain"] != "banner" || !strings.Contains(skipped[0]["line"].(string), "Fake MCP server v1") {
		t.Fatalf("skipped lines logged: %v, want the banner first, with the domain", skipped)
	}
	total := len(skipped)
	for _, r := range skipped {
		n, _ := r["unlogged_before"].(float64)
		total += int(n)
	}
	const noisePerSecond = 10 // the gateway's
	if total != 31 || len(skipped) > 2*noisePerSecond+1 {
		t.Errorf("%d skipped lines logged, standing for %d lines; want at most %d logged, standing for 31", len(skipped), total, 2*noisePerSecond+1)
	}
}

// TestUpstreamRestartBackoff: a server that exits right after connecting
// is restarted after ever longer waits, up to MaxBackoff, not every
// MinBackoff forever.
func TestUpstreamRestartBackoff(t *testing.T) {
	t.Parallel()
	logs := &logBuffer{}
	gw := gateway.New(gateway.Options{Upstreams: []gateway.UpstreamConfig{fakeConfig(t, "die", "die")}, MinBackoff: 50 * time.Millisecond, MaxBackoff: 400 * time.Millisecond, Logger: logs.logger()})
	gw.Start(context.Background())
	defer gw.Close()
	waits := func() []time.Duration {
		var out []time.Duration
		for _, msg := range []string{"upstream stopped; restarting", "upstream unavailable"} {
			for _, r := range logs.records(msg) {
				out = append(out, time.Duration(r["retry_in"].(float64)))
			}
		}
		return out
	}
	waitFor(t, "five restarts", func() bool { return len(waits()) >= 5 })
	if stopped := logs.records("upstream stopped; restarting"); len(stopped) < 5 {
		t.Errorf("%d of 5 attempts connected, want all: the fake should exit only after tools/list", len(stopped))
	}
	ms := time.Millisecond
	if got, want := waits()[:5], []time.Duration{50 * ms, 100 * ms, 200 * ms, 400 * ms, 400 * ms}; !reflect.DeepEqual(got, want) {
		t.Errorf("waits before restarting = %v, want %v", got, want)
	}
}

// TestListChangedCoalesced: a server announcing a change every 5 ms is
// re-listed at most once a second, and its last change is applied.
func TestListChangedCoalesced(t *testing.T) {
	t.Parallel()
	env := startGateway(t, []gateway.UpstreamConfig{fakeConfig(t, "flood", "flood")}, Exposure{Mode: ExposeMeta})
	waitFor(t, "the fake's tools", func() bool { return env.hasTool("flood__lists") })
	lists := func() int {
		t.Helper()
		res := call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "flood__lists"})
		n, err := strconv.Atoi(text(res))
		if err != nil {
			t.Fatalf("lists = %q", text(res))
		}
		return n
	}
	before := lists()
	start := time.Now()
	if res := call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "flood__flood", "arguments": map[string]any{"n": 200}}); res.IsError {
		t.Fatal(text(res))
	}
	waitFor(t, "the last change", func() bool { return env.hasTool("flood__gen_200") })
	elapsed := time.Since(start)
	if env.hasTool("flood__gen_199") {
		t.Error("gen_199 is still indexed: the last re-listing was not applied")
	}
	// One at the first notice, then at most one a second (the gateway's
	// relistEvery).
	if n, most := lists()-before, int(elapsed/time.Second)+2; n > most {
		t.Errorf("200 notifications in %s caused %d tools/list requests, want at most %d", elapsed.Round(time.Millisecond), n, most)
	}
}
