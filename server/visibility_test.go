package server

import (
	"context"
	"slices"
	"testing"

	"github.com/toolscout/toolscout/server/callers"
)

// downExecutor reports configured servers that have not listed tools.
type downExecutor struct {
	fakeExecutor
	down map[string]string
}

func (d *downExecutor) Unavailable() map[string]string { return d.down }

// TestCallerScope tests callerScope on its own, without a server: each
// caller's catalog is its subset, made once per catalog; hidden tools,
// servers without tools and configured domains are filtered by the
// caller's rules; nil sees everything; a request without a caller sees
// nothing when callers are configured.
func TestCallerScope(t *testing.T) {
	t.Parallel()
	live := testLive(t, testCatalog, nil)
	set := testCallers(t)
	gh := set.Caller("gh")
	c := &callerScope{eng: live.Engine(), callers: set,
		exec:    &downExecutor{down: map[string]string{"gitlab": "connection refused", "weather_eu": "still connecting"}},
		domains: []DomainSize{{Name: "github", Tools: 4}, {Name: "jira", Tools: 1}, {Name: "gitlab"}}}
	full := live.Engine().Catalog()

	if got := c.catalogFor(nil); got != full {
		t.Errorf("catalogFor(nil) = a catalog of %d tools, want the whole one (%d)", got.Len(), full.Len())
	}
	sub := c.catalogFor(gh)
	if sub == full || sub.Domain("jira") != nil || sub.Tool("github__get_file_contents") != nil || sub.Tool("github__create_issue") == nil {
		t.Errorf("catalogFor(gh) has jira %v, get_file_contents %v, create_issue %v; want only what gh sees",
			sub.Domain("jira") != nil, sub.Tool("github__get_file_contents") != nil, sub.Tool("github__create_issue") != nil)
	}
	if again := c.catalogFor(gh); again != sub {
		t.Error("catalogFor(gh) made the subset again for the same catalog, want it kept")
	}
	hidden := c.hiddenFrom(gh, full)
	if !slices.Contains(hidden, "jira__create_issue") || !slices.Contains(hidden, "github__get_file_contents") || len(hidden)+sub.Len() != full.Len() {
		t.Errorf("hiddenFrom(gh) = %v, want every tool of the catalog gh does not see", hidden)
	}
	if h := c.hiddenFrom(nil, full); h != nil {
		t.Errorf("hiddenFrom(nil) = %v, want none", h)
	}

	for _, tc := range []struct {
		who    *callers.Caller
		domain string
		want   bool
	}{
		{nil, "jira", true},
		{gh, "github", true},
		{gh, "jira", false},       // in the catalog, none of its tools visible
		{gh, "gitlab", false},     // no tools yet, not in gh's rules
		{gh, "weather_eu", false}, // "weather__get_*" names weather only
		{set.Caller("all"), "gitlab", true},
	} {
		name := "nil"
		if tc.who != nil {
			name = tc.who.Name
		}
		if got := c.domainVisible(tc.who, tc.domain); got != tc.want {
			t.Errorf("domainVisible(%s, %s) = %v, want %v", name, tc.domain, got, tc.want)
		}
	}
	if down := c.unavailableFor(gh); len(down) != 0 {
		t.Errorf("unavailableFor(gh) = %v, want none: gh sees neither gitlab nor weather_eu", down)
	}
	if down := c.unavailableFor(set.Caller("all")); len(down) != 2 {
		t.Errorf("unavailableFor(all) = %v, want gitlab and weather_eu", down)
	}
	var names []string
	for _, d := range c.domainsFor(gh) {
		names = append(names, d.Name)
		if d.Tools != 0 {
			t.Errorf("domainsFor(gh) gives %s %d tools, want no size: it counts tools gh may not see", d.Name, d.Tools)
		}
	}
	if !slices.Equal(names, []string{"github"}) {
		t.Errorf("domainsFor(gh) = %v, want [github]", names)
	}
	if got := c.domainsFor(nil); len(got) != 3 || got[0].Tools != 4 {
		t.Errorf("domainsFor(nil) = %v, want Options.Domains as given", got)
	}

	if who := c.callerIn(context.Background()); who == nil || who.Visible("github", "create_issue") {
		t.Errorf("callerIn(no caller) = %v, want one that sees nothing when callers are configured", who)
	}
	if who := c.callerIn(callers.WithCaller(context.Background(), gh)); who != gh {
		t.Errorf("callerIn(gh's context) = %v, want gh", who)
	}
	if who := (&callerScope{eng: live.Engine()}).callerIn(context.Background()); who != nil {
		t.Errorf("callerIn without callers configured = %v, want nil (sees everything)", who)
	}
}
