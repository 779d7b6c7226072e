package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
)

// TestPartsAnswerForEveryDomain: what callers ask the gateway's parts
// (Upstreams, Directory, Surfaces) about one domain is answered for its
// running server, and, for a domain it has no server of (a catalog
// file's, an unknown one, an empty or hostile name), answered as none:
// no channel to wait on, nothing executable, no folders, nothing held,
// no reason it is unavailable, and an error naming the domain for a
// prompt, a resource, a completion or a subscription, never a panic.
func TestPartsAnswerForEveryDomain(t *testing.T) {
	t.Parallel()
	obj := json.RawMessage(`{"type":"object"}`)
	base := []index.DomainSpec{{Name: "github", Description: "GitHub.", Tools: []index.ToolSpec{{Name: "create_issue", InputSchema: obj}}}}
	g := startGateway(t, Options{Base: base, Upstreams: []UpstreamConfig{testUpstream(t, "test", "")}})
	g.WaitReady(context.Background())
	ups, dir, surf := g.Upstreams(), g.Directory(), g.Surfaces()
	ctx := context.Background()

	for _, tc := range []struct {
		name, domain string
		server       bool // a configured server's domain
	}{
		{name: "running server", domain: "test", server: true},
		{name: "catalog file's domain", domain: "github"},
		{name: "unknown", domain: "nosuch"},
		{name: "empty", domain: ""},
		{name: "hostile", domain: "../test\x00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ups.Started(tc.domain) != nil; got != tc.server {
				t.Errorf("Started(%q) != nil = %v, want %v", tc.domain, got, tc.server)
			}
			if got := ups.Executable(tc.domain); got != tc.server {
				t.Errorf("Executable(%q) = %v, want %v", tc.domain, got, tc.server)
			}
			if got := ups.Folders(tc.domain); got != nil {
				t.Errorf("Folders(%q) = %v, want none (the test server is given no folder)", tc.domain, got)
			}
			if ups.Held(tc.domain, "echo") || ups.Unchecked(tc.domain, "echo") {
				t.Errorf("Held or Unchecked(%q, echo) = true, want false: no pins", tc.domain)
			}
			if why, ok := dir.Unavailable()[tc.domain]; ok {
				t.Errorf("Unavailable()[%q] = %q, want no entry (up, or no server)", tc.domain, why)
			}
			_, err := surf.GetPrompt(ctx, tc.domain, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
			if tc.server != (err == nil) {
				t.Errorf("GetPrompt(%q, greet) = %v, want an answer only from the running server", tc.domain, err)
			}
			if tc.server {
				return
			}
			for what, err := range map[string]error{
				"ReadResource":        second(surf.ReadResource(ctx, tc.domain, &mcp.ReadResourceParams{URI: "test://hello"})),
				"Complete":            second(surf.Complete(ctx, tc.domain, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, Argument: mcp.CompleteParamsArgument{Name: "name"}})),
				"SubscribeResource":   surf.SubscribeResource(ctx, tc.domain, "test://hello"),
				"UnsubscribeResource": surf.UnsubscribeResource(ctx, tc.domain, "test://hello"),
				"GetPrompt":           err,
			} {
				if err == nil || !strings.Contains(err.Error(), "no server") {
					t.Errorf("%s(%q) = %v, want an error saying there is no such server", what, tc.domain, err)
				}
			}
		})
	}
}

// second returns the error of a call that answers a value and an error.
func second[T any](_ T, err error) error { return err }

// TestSurfacesWaitReady: Surfaces' own WaitReady (what server/surface
// waits on before its first lists) returns once the server has
// connected, its prompts and resources listed by then; every server's
// surface is listed in the order of the config.
func TestSurfacesWaitReady(t *testing.T) {
	t.Parallel()
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "one", ""), testUpstream(t, "two", "")}})
	g.Surfaces().WaitReady(context.Background())
	list := g.Surfaces().List()
	if len(list) != 2 || list[0].Domain != "one" || list[1].Domain != "two" {
		t.Fatalf("List() = %+v, want one then two", list)
	}
	for _, s := range list {
		if !s.Listed || !s.Prompts || !s.Resources {
			t.Errorf("%s: surface = %+v after WaitReady, want listed with prompts and resources", s.Domain, s)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// A wait whose context is done returns at once, servers or not.
	startGateway(t, Options{Upstreams: []UpstreamConfig{{Domain: "never", URL: "http://127.0.0.1:1/mcp"}}}).Surfaces().WaitReady(ctx)
}
