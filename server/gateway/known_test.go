package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/redact"
)

// lastRun is what a test upstream listed on a run before: a title and
// instructions holding a secret, echo with an older description, and a
// tool the server no longer has.
func lastRun() []index.ListedTools {
	obj := json.RawMessage(`{"type":"object"}`)
	return []index.ListedTools{{Domain: "test", Title: "Last s3cret title", Instructions: "Last run's instructions.", Tools: []index.ToolSpec{
		{Name: "echo", Description: "Echoed on the last run.", InputSchema: obj},
		{Name: "gone", Description: "Gone since.", InputSchema: obj, Group: "stale group"},
	}}, {Domain: "unconfigured", Tools: []index.ToolSpec{{Name: "x", InputSchema: obj}}}}
}

// TestKnownHeadStart: with the tools its servers listed on the last
// run, a gateway serves them before any server is started (WaitKnown
// returns at once), as this run's config says (groups, disabled tools)
// and redacted; a server still starting is said so; once it lists its
// tools they replace the last run's.
func TestKnownHeadStart(t *testing.T) {
	t.Parallel()
	cfg := testUpstream(t, "test", "")
	cfg.Groups = map[string]string{"echo": "talk"}
	cfg.DisabledTools = []string{"gone"}
	cfg.Env[upstreamDelayEnv] = "300"
	g := New(Options{Upstreams: []UpstreamConfig{cfg}, Known: lastRun(), Redactor: redact.New("s3cret"), MinBackoff: 10 * time.Millisecond})
	defer g.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g.WaitKnown(ctx) // known already: does not need ctx
	specs := g.Specs()
	if len(specs) != 1 || specs[0].Name != "test" {
		t.Fatalf("Specs before Start = %+v, want the test server's last run only (not the unconfigured domain's)", specs)
	}
	var state []string
	for _, ts := range specs[0].Tools {
		state = append(state, ts.Name+":"+ts.Group+":"+map[bool]string{true: "off", false: "on"}[ts.Enabled != nil && !*ts.Enabled])
	}
	if want := []string{"echo:talk:on", "gone::off"}; !slices.Equal(state, want) {
		t.Errorf("last run's tools = %q, want %q (this run's config applied)", state, want)
	}
	if got := g.Directory().Titles()["test"]; strings.Contains(got, "s3cret") || !strings.HasPrefix(got, "Last ") {
		t.Errorf("title = %q, want the last run's, redacted", got)
	}
	if got := g.Upstreams().Connecting(); !slices.Equal(got, []string{"test"}) {
		t.Errorf("Connecting() = %q, want test", got)
	}
	if got := g.Directory().Unavailable()["test"]; got != StillConnecting {
		t.Errorf("Unavailable()[test] = %q, want %q", got, StillConnecting)
	}
	select {
	case <-g.Upstreams().Started("test"):
		t.Error("Started(test) is closed before the server started")
	default:
	}
	if g.Upstreams().Started("nobody") != nil {
		t.Error("Started of an unknown domain is not nil")
	}
	g.Start(context.Background())
	// A call waits for the server to start, and runs.
	res, err := call(g, "test", "echo", map[string]any{"text": "early"})
	if err != nil || !strings.HasPrefix(resultText(res), "echo: early") {
		t.Fatalf("echo while the server starts = %q, %v; want it to wait and run", resultText(res), err)
	}
	<-g.Upstreams().Started("test")
	if d := echoDescription(g); d != "Echoes the text it is given." {
		t.Errorf("echo = %q after the server listed it, want its own description", d)
	}
	if names := toolNames(g, "test"); slices.Contains(names, "gone") {
		t.Errorf("tools = %q: the last run's gone is still served", names)
	}
}

// TestStillStartingPastTheTimeout: a call of a server that has not
// started within the call's timeout fails saying it is still starting
// (ErrUnavailable); asking it for a prompt fails as unavailable.
func TestStillStartingPastTheTimeout(t *testing.T) {
	t.Parallel()
	cfg := testUpstream(t, "test", "")
	cfg.Env[upstreamDelayEnv] = "60000"
	cfg.Timeout = 50 * time.Millisecond
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{cfg}, Known: lastRun()})
	_, err := call(g, "test", "echo", nil)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `server "test" is still starting: it did not connect within 50ms`) {
		t.Errorf("call = %v, want ErrUnavailable saying the server is still starting", err)
	}
	if _, err := g.Surfaces().ReadResource(context.Background(), "test", nil); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "(connecting)") {
		t.Errorf("ReadResource = %v, want ErrUnavailable (connecting)", err)
	}
}

// TestWaitReadyHonoursCtx: WaitReady and WaitKnown return when ctx is
// done, whatever the servers do.
func TestWaitReadyHonoursCtx(t *testing.T) {
	t.Parallel()
	cfg := testUpstream(t, "test", "")
	cfg.Env[upstreamDelayEnv] = "60000"
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{cfg}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g.WaitReady(ctx)
	g.WaitKnown(ctx)
	select {
	case <-g.Upstreams().Started("test"):
		t.Error("the server is said started")
	default:
	}
}
