package gateway

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// surfaceOf returns domain's surface in g.Surfaces.
func surfaceOf(g *Gateway, domain string) Surface {
	for _, s := range g.Surfaces().List() {
		if s.Domain == domain {
			return s
		}
	}
	return Surface{}
}

// TestSurfaceListed: a server's prompts, resources and capabilities are
// listed when it connects; a prompt is got, a resource read and an
// argument completed on it, each answer without the server's _meta.
func TestSurfaceListed(t *testing.T) {
	t.Parallel()
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", "")}})
	if s := surfaceOf(g, "test"); s.Listed {
		// Nothing is known before the server connects; it may have
		// connected already on a fast machine, which the rest checks.
		t.Logf("listed before WaitReady: %+v", s)
	}
	g.WaitReady(context.Background())
	s := surfaceOf(g, "test")
	if !s.Listed || !s.Prompts || !s.Resources || !s.Subscribe || !s.Completions {
		t.Fatalf("surface = %+v, want listed with prompts, resources, subscriptions and completions", s)
	}
	if len(s.PromptList) != 4 || s.PromptList[0].Name != "ask" || s.PromptList[2].Name != "greet" || len(s.ResourceList) != 1 || s.ResourceList[0].URI != "test://hello" {
		t.Errorf("lists = %v, %v; want the ask and greet prompts and the hello resource", s.PromptList, s.ResourceList)
	}
	ctx := context.Background()
	p, err := g.Surfaces().GetPrompt(ctx, "test", &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
	if err != nil || len(p.Messages) != 1 || p.Messages[0].Content.(*mcp.TextContent).Text != "Hello, Ada" {
		t.Fatalf("GetPrompt = %+v, %v", p, err)
	}
	if p.Meta != nil {
		t.Errorf("the prompt's _meta = %v, want the server's dropped", p.Meta)
	}
	r, err := g.Surfaces().ReadResource(ctx, "test", &mcp.ReadResourceParams{URI: "test://hello"})
	if err != nil || len(r.Contents) != 1 || r.Contents[0].Text != "hello from start 1" {
		t.Fatalf("ReadResource = %+v, %v", r, err)
	}
	c, err := g.Surfaces().Complete(ctx, "test", &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, Argument: mcp.CompleteParamsArgument{Name: "name", Value: "a"}})
	if err != nil || !slices.Equal(c.Completion.Values, []string{"alpha", "beta"}) {
		t.Fatalf("Complete = %+v, %v", c, err)
	}
}

// TestSurfaceErrors: what is asked of a server the gateway does not
// have, or of one that is down, fails saying so; a prompt the server
// does not have comes back as the server's error.
func TestSurfaceErrors(t *testing.T) {
	t.Parallel()
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", ""), {Domain: "down", Command: "/nonexistent/server"}}, MinBackoff: time.Hour})
	g.WaitReady(context.Background())
	ctx := context.Background()
	if _, err := g.Surfaces().GetPrompt(ctx, "nobody", &mcp.GetPromptParams{Name: "greet"}); err == nil || err.Error() != `no server "nobody"` {
		t.Errorf("GetPrompt of an unknown server = %v", err)
	}
	if err := g.Surfaces().SubscribeResource(ctx, "nobody", "x://y"); err == nil || err.Error() != `no server "nobody"` {
		t.Errorf("SubscribeResource of an unknown server = %v", err)
	}
	_, err := g.Surfaces().ReadResource(ctx, "down", &mcp.ReadResourceParams{URI: "x://y"})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `server "down" is unavailable`) || strings.Contains(err.Error(), "Tools of other domains") {
		t.Errorf("ReadResource of a down server = %v, want ErrUnavailable worded for a resource", err)
	}
	_, err = g.Surfaces().GetPrompt(ctx, "test", &mcp.GetPromptParams{Name: "nosuch"})
	if err == nil || !strings.HasPrefix(err.Error(), `server "test": `) || errors.Is(err, ErrUnavailable) {
		t.Errorf("GetPrompt of a missing prompt = %v, want the server's error", err)
	}
}

// TestSurfaceSubscriptions: an update of a subscribed resource reaches
// the watchers, and a subscription is made again after the server
// restarts; after UnsubscribeResource the updates stop. (The go-sdk
// server sends no update of a resource not subscribed to, so the
// gateway's own drop of such an update is not exercised here.)
func TestSurfaceSubscriptions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", dir)}})
	var mu sync.Mutex
	var told []string
	got := make(chan string, 16)
	g.Surfaces().WatchSurface(func(domain, uri string) {
		mu.Lock()
		told = append(told, domain+" "+uri)
		mu.Unlock()
		if uri != "" {
			got <- uri
		}
	})
	g.WaitReady(context.Background())
	ctx := context.Background()
	if err := g.Surfaces().SubscribeResource(ctx, "test", "test://hello"); err != nil {
		t.Fatal(err)
	}
	// Not subscribed: the server sends nothing. Subscribed: told.
	for _, uri := range []string{"test://other", "test://hello"} {
		if _, err := call(g, "test", "touch", map[string]any{"uri": uri}); err != nil {
			t.Fatal(err)
		}
	}
	if uri := recv(t, got, "the update of test://hello"); uri != "test://hello" {
		t.Errorf("watcher told of %q, want test://hello only", uri)
	}
	// A restart forgets the subscription on the server: the gateway
	// subscribes again.
	if _, err := call(g, "test", "crash", nil); !errors.Is(err, ErrStopped) {
		t.Fatalf("crash = %v", err)
	}
	// The new process is up once it listed its tools, and subscribed
	// to again just after, as it lists its resources: touch until the
	// update comes (it never comes when the gateway does not subscribe
	// again).
	waitUntil(t, g, "the restart", func() bool { return starts(t, dir) >= 2 && stateOf(g, "test").State == "up" })
	deadline := time.After(time.Minute)
	for told := false; !told; {
		if _, err := call(g, "test", "touch", map[string]any{"uri": "test://hello"}); err != nil {
			t.Fatal(err)
		}
		select {
		case uri := <-got:
			if uri != "test://hello" {
				t.Errorf("after the restart the watcher was told of %q", uri)
			}
			told = true
		case <-time.After(500 * time.Millisecond):
		case <-deadline:
			t.Fatal("waited a minute for an update after the restart: the resource was not subscribed to again")
		}
	}
	// Updates sent before the subscription are dropped by the server;
	// the ones after it may still be on their way.
	for len(got) > 0 {
		<-got
	}
	if err := g.Surfaces().UnsubscribeResource(ctx, "test", "test://hello"); err != nil {
		t.Fatal(err)
	}
	if _, err := call(g, "test", "touch", map[string]any{"uri": "test://hello"}); err != nil {
		t.Fatal(err)
	}
	// The server's notification, if any came, is handled before the
	// call's result is (one connection, in order).
	if _, err := call(g, "test", "echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	select {
	case uri := <-got:
		t.Errorf("after UnsubscribeResource the watcher was told of %q", uri)
	default:
	}
}

// TestSurfaceListChanged: a prompt the server adds while running is
// listed after its prompts/list_changed, and the watchers are told
// (uri "").
func TestSurfaceListChanged(t *testing.T) {
	t.Parallel()
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", "")}})
	changed := make(chan string, 16)
	g.Surfaces().WatchSurface(func(domain, uri string) {
		if uri == "" {
			changed <- domain
		}
	})
	g.WaitReady(context.Background())
	for len(changed) > 0 {
		<-changed // the first listing's
	}
	if _, err := call(g, "test", "add_prompt", map[string]any{"name": "later"}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, g, "the added prompt", func() bool {
		return slices.ContainsFunc(surfaceOf(g, "test").PromptList, func(p *mcp.Prompt) bool { return p.Name == "later" })
	})
	select {
	case d := <-changed:
		if d != "test" {
			t.Errorf("watchers told of %q, want test", d)
		}
	default:
		t.Error("the watchers were not told of the change")
	}
	p, err := g.Surfaces().GetPrompt(context.Background(), "test", &mcp.GetPromptParams{Name: "later"})
	if err != nil || p.Messages[0].Content.(*mcp.TextContent).Text != "later" {
		t.Errorf("GetPrompt(later) = %+v, %v", p, err)
	}
}

// TestSurfacesRouteByDomain: each server's surface is its own, in the
// order of the config, and what is asked of a domain goes to its
// server.
func TestSurfacesRouteByDomain(t *testing.T) {
	t.Parallel()
	bare := testUpstream(t, "bare", "")
	bare.Env[upstreamBareEnv] = "1"
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "full", ""), bare}})
	g.WaitReady(context.Background())
	s := g.Surfaces().List()
	if len(s) != 2 || s[0].Domain != "full" || s[1].Domain != "bare" || len(s[0].PromptList) == 0 || s[1].PromptList != nil {
		t.Fatalf("Surfaces() = %+v, want full's prompts then bare's none", s)
	}
	ctx := context.Background()
	if _, err := g.Surfaces().GetPrompt(ctx, "full", &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "x"}}); err != nil {
		t.Errorf("GetPrompt(full) = %v", err)
	}
	if _, err := g.Surfaces().GetPrompt(ctx, "bare", &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "x"}}); err == nil || !strings.HasPrefix(err.Error(), `server "bare": `) {
		t.Errorf("GetPrompt(bare) = %v, want bare's refusal", err)
	}
}
