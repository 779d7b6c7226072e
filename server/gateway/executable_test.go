package gateway

import (
	"context"
	"errors"
	"testing"

	"github.com/toolscout/toolscout/index"
)

// TestExecutable: the gateway runs the tools of its configured servers,
// connected or not yet, and no other domain's (a catalog's), as Execute
// finds out only when called.
func TestExecutable(t *testing.T) {
	g := New(Options{Upstreams: []UpstreamConfig{{Domain: "memory", Command: "/nonexistent/mcp-server-memory"}}})
	for domain, want := range map[string]bool{"memory": true, "github": false, "": false} {
		if got := g.Upstreams().Executable(domain); got != want {
			t.Errorf("Executable(%q) = %v, want %v", domain, got, want)
		}
	}
	_, err := g.Execute(context.Background(), nil, &index.Tool{Domain: "github", Name: "create_issue"}, nil)
	if !errors.Is(err, ErrNotExecutable) {
		t.Errorf("Execute of a catalog's tool = %v, want ErrNotExecutable, as Executable says", err)
	}
}
