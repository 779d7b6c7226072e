package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConfiguredDescriptionKeepsAbout: a server given a description in
// its config is shown with that description, and what it says about
// itself (its title, the first sentence of its instructions) still
// reaches the index as About; without a configured description it is in
// the derived description and About stays empty. The everything
// reference server has both a title and instructions.
func TestConfiguredDescriptionKeepsAbout(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	everything := filepath.Join(root, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(everything); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("server-everything is not installed: run npm ci (make test does)")
		}
		t.Skip("server-everything is not installed: run npm ci (make test does)")
	}
	const desc = "A test server for MCP client builders"
	g := New(Options{Upstreams: []UpstreamConfig{
		{Domain: "described", Command: "node", Args: []string{everything}, Description: desc},
		{Domain: "plain", Command: "node", Args: []string{everything}},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	g.Start(ctx)
	defer g.Close()
	g.WaitReady(ctx)
	got := map[string][2]string{}
	for _, s := range g.Specs() {
		got[s.Name] = [2]string{s.Description, s.About}
	}
	if d := got["described"]; d[0] != desc || !strings.Contains(d[1], "Everything Reference Server") {
		t.Errorf("described: description %q, about %q; want %q and the server's title", d[0], d[1], desc)
	}
	if p := got["plain"]; !strings.Contains(p[0], "Everything Reference Server") || p[1] != "" {
		t.Errorf("plain: description %q, about %q; want the title in the derived description, no about", p[0], p[1])
	}
}
