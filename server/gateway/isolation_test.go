package gateway

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/logtest"
	"github.com/toolscout/toolscout/internal/redact"
)

// TestServersAreIsolated: a server that crashes is restarted on its
// own: the other server keeps its process and serves meanwhile.
func TestServersAreIsolated(t *testing.T) {
	t.Parallel()
	dirA, dirB := t.TempDir(), t.TempDir()
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "a", dirA), testUpstream(t, "b", dirB)}})
	g.WaitReady(context.Background())
	run := func(domain, tool string) (string, error) {
		res, err := g.Execute(context.Background(), nil, &index.Tool{Domain: domain, Name: tool, QualifiedName: index.QualifiedName(domain, tool)}, map[string]any{"text": domain})
		return resultText(res), err
	}
	if _, err := run("a", "crash"); !errors.Is(err, ErrStopped) || !strings.Contains(err.Error(), `server "a"`) {
		t.Fatalf("crash on a = %v", err)
	}
	if got, err := run("b", "echo"); err != nil || got != "echo: b (start 1)" {
		t.Errorf("echo on b while a restarts = %q, %v", got, err)
	}
	waitUntil(t, g, "a restarted", func() bool { return starts(t, dirA) >= 2 && stateOf(g, "a").State == "up" })
	if got, err := run("a", "echo"); err != nil || got == "echo: a (start 1)" {
		t.Errorf("echo on a after its restart = %q, %v", got, err)
	}
	if n := starts(t, dirB); n != 1 {
		t.Errorf("b was started %d times, want once", n)
	}
}

// TestErrorsRedacted: a configured secret in what a server's failure
// says (here its command's path) is redacted from Status, Unavailable,
// a call's error and the log.
func TestErrorsRedacted(t *testing.T) {
	t.Parallel()
	var log logtest.Buffer
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{{Domain: "d", Command: "/nonexistent/s3cret-value/server"}},
		Redactor: redact.New("s3cret-value"), MinBackoff: 1 << 62, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	g.WaitReady(context.Background())
	_, err := call(g, "d", "x", nil)
	st := stateOf(g, "d")
	for what, s := range map[string]string{"Status": errString(st.Err), "Unavailable": g.Directory().Unavailable()["d"], "Execute": errString(err), "log": log.String()} {
		if strings.Contains(s, "s3cret-value") || !strings.Contains(s, "/nonexistent/") {
			t.Errorf("%s = %q, want the reason without the secret", what, s)
		}
	}
}

// TestConfigAppliedToListing: this run's config says which tools are
// grouped, off or deprecated; an entry for a tool the server does not
// list is logged with a suggestion, and does not stop the server.
func TestConfigAppliedToListing(t *testing.T) {
	t.Parallel()
	var log logtest.Buffer
	cfg := testUpstream(t, "test", "")
	cfg.Groups = map[string]string{"echo": "talk", "ecoh": "talk"}
	cfg.DisabledTools = []string{"crash"}
	cfg.DeprecatedTools = map[string]string{"slow": "use echo"}
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{cfg}, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	g.WaitReady(context.Background())
	state := map[string]string{}
	for _, s := range g.Specs() {
		for _, ts := range s.Tools {
			state[ts.Name] = ts.Group + "|" + string(ts.Deprecated)
			if ts.Enabled != nil && !*ts.Enabled {
				state[ts.Name] += "|off"
			}
		}
	}
	if state["echo"] != "talk|" || state["crash"] != "||off" || state["slow"] != "|use echo" || state["fail"] != "|" {
		t.Errorf("states = %v", state)
	}
	if !strings.Contains(log.String(), `groups entry \"ecoh\": the server has no such tool (did you mean \"echo\"?)`) {
		t.Errorf("log = %s, want the stale entry named with a suggestion", log.String())
	}
}

// TestRestartWithChangedTools: a server that lists other tools after a
// restart is served with the new ones (no pins), kept for the next
// start, and the change logged.
func TestRestartWithChangedTools(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var log logtest.Buffer
	var kept []index.ListedTools
	keptCh := make(chan []index.ListedTools, 8)
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", dir)}, Keep: func(l []index.ListedTools) error { keptCh <- l; return nil },
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	g.WaitReady(context.Background())
	recv(t, keptCh, "the first Keep")
	if err := os.WriteFile(filepath.Join(dir, "desc"), []byte("Echoes, second version."), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := call(g, "test", "crash", nil); !errors.Is(err, ErrStopped) {
		t.Fatal(err)
	}
	waitUntil(t, g, "the new description", func() bool { return echoDescription(g) == "Echoes, second version." })
	kept = recv(t, keptCh, "the Keep after the restart")
	if len(kept) != 1 || kept[0].Domain != "test" {
		t.Fatalf("kept %+v, want the test server's tools", kept)
	}
	found := false
	for _, ts := range kept[0].Tools {
		found = found || (ts.Name == "echo" && ts.Description == "Echoes, second version.")
	}
	if !found {
		t.Errorf("Keep was not given the new echo: %+v", kept[0].Tools)
	}
	if !strings.Contains(log.String(), "upstream stopped; restarting") {
		t.Errorf("log = %s, want the restart said", log.String())
	}
}
