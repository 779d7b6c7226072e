package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/pin"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/internal/logtest"
)

// TestDirectoryWithoutServers: before any server runs, the gateway
// lists the base catalog first, then the upstreams it knows; every
// configured server is executable and has its configured description;
// Close is safe without Start and twice.
func TestDirectoryWithoutServers(t *testing.T) {
	t.Parallel()
	obj := json.RawMessage(`{"type":"object"}`)
	base := []index.DomainSpec{{Name: "github", Description: "GitHub.", Tools: []index.ToolSpec{{Name: "create_issue", InputSchema: obj}}}}
	g := New(Options{Base: base, Known: lastRun(), Upstreams: []UpstreamConfig{
		{Domain: "test", Command: "/nonexistent/a", Description: "Configured."},
		{Domain: "fresh", URL: "http://127.0.0.1:1/mcp"},
	}})
	specs := g.Specs()
	var names []string
	for _, s := range specs {
		names = append(names, s.Name+"="+s.Source)
	}
	if want := "github= test=upstream test"; strings.Join(names, " ") != want {
		t.Errorf("Specs = %q, want %q (base first; fresh has no tools yet)", strings.Join(names, " "), want)
	}
	if specs[1].Description != "Configured." || !strings.Contains(specs[1].About, "Last") {
		t.Errorf("test: description %q, about %q; want the configured one, and the last run's title as about", specs[1].Description, specs[1].About)
	}
	for domain, want := range map[string]bool{"test": true, "fresh": true, "github": false} {
		if g.Upstreams().Executable(domain) != want {
			t.Errorf("Executable(%q) = %v", domain, !want)
		}
	}
	if got := g.Directory().ConfiguredDescriptions(); got["test"] != "Configured." || got["fresh"] != "" || len(got) != 2 {
		t.Errorf("ConfiguredDescriptions() = %v", got)
	}
	if got := g.Directory().Instructions(); got["test"] != "Last run's instructions." || len(got) != 1 {
		t.Errorf("Instructions() = %v, want the last run's of test only", got)
	}
	st := g.Upstreams().Status()
	if len(st) != 2 || st[0].State != "connecting" || st[0].Tools != 2 || st[1].Tools != 0 {
		t.Errorf("Status() = %+v, want both connecting, test with its last run's 2 tools", st)
	}
	// A server the last run did not list is known at once too: it adds
	// its tools when it lists them.
	g.WaitKnown(context.Background())
	g.Close()
	g.Close()
}

// TestKeepFails: a Keep that fails is logged, without the secret of
// the listing's server, and the gateway serves on.
func TestKeepFails(t *testing.T) {
	t.Parallel()
	var buf logtest.Buffer
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", "")},
		Keep:   func([]index.ListedTools) error { return errors.New("disk full") },
		Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	g.WaitReady(context.Background())
	if !strings.Contains(buf.String(), "could not keep the upstream servers' tools in the data dir") || !strings.Contains(buf.String(), "disk full") {
		t.Errorf("log = %s, want the failed Keep said", buf.String())
	}
	if st := stateOf(g, "test"); st.State != "up" {
		t.Errorf("Status = %+v, want up", st)
	}
}

// TestPinsUnreadable: pins that cannot be read or written leave the
// server's tools unserved (nothing it cannot check is trusted): the
// server is down, saying why, and retried.
func TestPinsUnreadable(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(data, []byte("a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", "")}, Pins: pin.NewGuard(store.OpenPins(data, nil)), MinBackoff: 1 << 62})
	g.WaitReady(context.Background())
	st := stateOf(g, "test")
	if st.State != "down" || st.Err == nil || !strings.Contains(st.Err.Error(), "not-a-dir") {
		t.Errorf("Status = %+v, want down with the pins' error", st)
	}
	if names := toolNames(g, "test"); names != nil {
		t.Errorf("tools served = %q, want none", names)
	}
}

// TestListPages: a list is read page by page within the bounds, and
// says why it stopped early; an error of a page fails the list.
func TestListPages(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", MaxSurfaceBytes/4)
	for _, tc := range []struct {
		name    string
		pages   func(cursor string) ([]string, string, error)
		n       int
		cut     string
		wantErr bool
	}{
		{"one page", func(string) ([]string, string, error) { return []string{"a", "b"}, "", nil }, 2, "", false},
		{"three pages", func(c string) ([]string, string, error) {
			next := map[string]string{"": "p2", "p2": "p3", "p3": ""}[c]
			return []string{c}, next, nil
		}, 3, "", false},
		{"too many items", func(c string) ([]string, string, error) { return make([]string, 3000), c + "x", nil }, MaxSurfaceItems, fmt.Sprintf("more than %d items", MaxSurfaceItems), false},
		{"too many bytes", func(c string) ([]string, string, error) { return []string{big}, c + "x", nil }, 3, fmt.Sprintf("more than %d bytes", MaxSurfaceBytes), false},
		{"too many pages", func(c string) ([]string, string, error) { return nil, c + "x", nil }, 0, fmt.Sprintf("more than %d pages", MaxSurfacePages), false},
		{"same cursor again", func(string) ([]string, string, error) { return []string{"a"}, "again", nil }, 2, "the server answered the same cursor again", false},
		{"a page fails", func(c string) ([]string, string, error) {
			if c == "" {
				return []string{"a"}, "p2", nil
			}
			return nil, "", errors.New("page 2 failed")
		}, 0, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items, cut, err := listPages(context.Background(), tc.pages)
			if len(items) != tc.n || cut != tc.cut || (err != nil) != tc.wantErr {
				t.Errorf("listPages = %d items, cut %q, err %v; want %d, %q, error %v", len(items), cut, err, tc.n, tc.cut, tc.wantErr)
			}
		})
	}
}

// TestCatalogOfWhatServersList: Catalog is the catalog of what a running
// server lists now, its tools found by qualified name; with the domains
// of catalog files, theirs first and the server's after; and a domain of
// those files that a server has too is an error naming it, not a
// catalog with one of them left out.
func TestCatalogOfWhatServersList(t *testing.T) {
	t.Parallel()
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", "")}})
	g.WaitReady(context.Background())
	cat, err := g.Directory().Catalog()
	if err != nil {
		t.Fatal(err)
	}
	if got := cat.Domains(); len(got) != 1 || got[0].Name != "test" {
		t.Fatalf("Catalog() domains = %v, want test alone", got)
	}
	if cat.Tool("test__echo") == nil {
		t.Error("Catalog() has no test__echo, which the server lists")
	}
	obj := json.RawMessage(`{"type":"object"}`)
	files := []index.DomainSpec{{Name: "github", Description: "GitHub.", Tools: []index.ToolSpec{{Name: "create_issue", InputSchema: obj}}}}
	all, err := g.Directory().Catalog(files...)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range all.Domains() {
		names = append(names, d.Name)
	}
	if strings.Join(names, " ") != "github test" || all.Len() != cat.Len()+1 {
		t.Errorf("Catalog(github) = domains %v, %d tools; want github then test, %d tools", names, all.Len(), cat.Len()+1)
	}
	if _, err := g.Directory().Catalog(index.DomainSpec{Name: "test", Tools: []index.ToolSpec{{Name: "x", InputSchema: obj}}}); err == nil || !strings.Contains(err.Error(), "test") {
		t.Errorf("Catalog(a file's domain test, as the server's) = %v, want an error naming test", err)
	}
}
