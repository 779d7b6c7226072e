package server

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/index"

	"github.com/toolscout/toolscout/server/gateway"
)

// TestDynamicModeShowsItsState: in dynamic mode discover_tools marks the
// domains (and groups) this client enabled, and disable_domain says
// which tools it took off the list.
func TestDynamicModeShowsItsState(t *testing.T) {
	t.Parallel()
	cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil), Expose: Exposure{Mode: ExposeDynamic}}))
	contents := func() map[string]DomainEntry {
		var c Contents
		if err := json.Unmarshal([]byte(structured(t, call(t, cs, DiscoverTools, map[string]any{}))), &c); err != nil {
			t.Fatal(err)
		}
		out := map[string]DomainEntry{}
		for _, d := range c.Domains {
			out[d.Name] = d
		}
		return out
	}
	if c := contents(); c["github"].Enabled || c["weather"].Enabled {
		t.Errorf("contents before enabling anything = %+v, want nothing enabled", c)
	}
	call(t, cs, EnableDomain, map[string]any{"domain": "weather"})
	call(t, cs, EnableDomain, map[string]any{"domain": "github", "group": "issues"})
	c := contents()
	if !c["weather"].Enabled || c["jira"].Enabled || c["github"].Enabled || !reflect.DeepEqual(c["github"].EnabledGroups, []string{"issues"}) {
		t.Errorf("contents = %+v, want weather enabled and github's issues group", c)
	}
	var listing DomainListing
	json.Unmarshal([]byte(structured(t, call(t, cs, DiscoverTools, map[string]any{"domain": "github", "group": "issues"}))), &listing)
	if !listing.Enabled {
		t.Errorf("listing of an enabled group = %+v, want enabled", listing)
	}
	listing = DomainListing{}
	json.Unmarshal([]byte(structured(t, call(t, cs, DiscoverTools, map[string]any{"domain": "jira"}))), &listing)
	if listing.Enabled {
		t.Errorf("listing of a domain not enabled = %+v", listing)
	}

	disable := func(args map[string]any) EnableAnswer {
		var a EnableAnswer
		res := call(t, cs, DisableDomain, args)
		if res.IsError {
			t.Fatalf("disable_domain(%v) = %s", args, text(res))
		}
		json.Unmarshal([]byte(structured(t, res)), &a)
		return a
	}
	if a := disable(map[string]any{"domain": "github", "group": "issues"}); !reflect.DeepEqual(a.Removed, []string{"github__create_issue", "github__list_issues"}) || strings.Join(a.Enabled, ",") != "weather" {
		t.Errorf("disable_domain github/issues = %+v, want its two tools removed", a)
	}
	if a := disable(map[string]any{"domain": "jira"}); len(a.Removed) != 0 || !strings.Contains(a.Note, "jira was not enabled") {
		t.Errorf("disable_domain of a domain not enabled = %+v, want a note", a)
	}
	// A group of an enabled domain: its tools stay.
	call(t, cs, EnableDomain, map[string]any{"domain": "github"})
	call(t, cs, EnableDomain, map[string]any{"domain": "github", "group": "repos"})
	if a := disable(map[string]any{"domain": "github", "group": "repos"}); len(a.Removed) != 0 || !strings.Contains(a.Note, "stay listed") {
		t.Errorf("disable_domain of a group of an enabled domain = %+v", a)
	}
	// Other modes mark nothing.
	cs = connect(t, New(Options{Live: testLive(t, testCatalog, nil), Expose: Exposure{Mode: ExposeEager}}))
	if strings.Contains(text(call(t, cs, DiscoverTools, map[string]any{})), "enabled") {
		t.Error("eager mode marks domains as enabled")
	}
}

// stateCatalog has a disabled tool and two deprecated ones.
const stateCatalog = `{"domains":[
 {"name":"github","description":"GitHub repositories and issues","tools":[
  {"name":"create_issue","description":"Open a new issue in a repository.","inputSchema":{"type":"object","properties":{"repo":{"type":"string"},"title":{"type":"string"}},"required":["repo","title"]}},
  {"name":"delete_repo","description":"Delete a repository for good.","inputSchema":{"type":"object","properties":{"repo":{"type":"string"}},"required":["repo"]},"enabled":false},
  {"name":"open_issue","description":"Open a new issue in a repository (old API).","inputSchema":{"type":"object","properties":{"repo":{"type":"string"}}},"deprecated":"use github__create_issue"}]},
 {"name":"weather","description":"Weather forecasts","tools":[
  {"name":"get_forecast","description":"Get the weather forecast for a city.","inputSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"deprecated":true}]}]}`

// TestToolState: a disabled tool is not listed, found, related or run,
// unless discovery asks for it (include_disabled), and then it is
// marked; a deprecated tool is marked everywhere, its listed description
// first of all.
func TestToolState(t *testing.T) {
	t.Parallel()
	ex := &fakeExecutor{}
	cs := connect(t, New(Options{Live: testLive(t, stateCatalog, nil), Executor: ex, Expose: Exposure{Mode: ExposeEager}}))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	descs := map[string]string{}
	for _, tl := range res.Tools {
		descs[tl.Name] = tl.Description
	}
	if _, ok := descs["github__delete_repo"]; ok || len(descs) != 6 {
		t.Errorf("eager tools/list = %v, want every tool but the disabled one", toolNames(res))
	}
	if descs["github__open_issue"] != "Deprecated: use github__create_issue. Open a new issue in a repository (old API)." || !strings.HasPrefix(descs["weather__get_forecast"], "Deprecated. Get") {
		t.Errorf("deprecated tools are listed as %q and %q", descs["github__open_issue"], descs["weather__get_forecast"])
	}

	var c Contents
	json.Unmarshal([]byte(structured(t, call(t, cs, DiscoverTools, map[string]any{}))), &c)
	if c.TotalTools != 3 || c.Domains[0].ToolCount != 2 || c.Domains[0].DisabledTools != 1 {
		t.Errorf("contents = %+v, want 3 tools, github with 2 and 1 disabled", c)
	}
	listing := text(call(t, cs, DiscoverTools, map[string]any{"domain": "github"}))
	if strings.Contains(listing, "delete_repo") || !strings.Contains(listing, `"deprecated":"use github__create_issue"`) {
		t.Errorf("domain listing = %s, want no disabled tool, the deprecated one marked", listing)
	}
	listing = text(call(t, cs, DiscoverTools, map[string]any{"domain": "github", "include_disabled": true}))
	if !strings.Contains(listing, `"name":"github__delete_repo","summary":"Delete a repository for good.","disabled":true`) {
		t.Errorf("domain listing with include_disabled = %s, want the disabled tool marked", listing)
	}
	for _, mode := range []string{"keyword", "hybrid"} {
		found := text(call(t, cs, DiscoverTools, map[string]any{"query": "delete a repository", "search_mode": mode}))
		if strings.Contains(found, "delete_repo") {
			t.Errorf("%s search found the disabled tool: %s", mode, found)
		}
		found = text(call(t, cs, DiscoverTools, map[string]any{"query": "delete a repository", "search_mode": mode, "include_disabled": true}))
		if !strings.Contains(found, `"name":"github__delete_repo","domain":"github","summary":"Delete a repository for good.","disabled":true`) {
			t.Errorf("%s search with include_disabled = %s, want the disabled tool marked", mode, found)
		}
	}
	if found := text(call(t, cs, DiscoverTools, map[string]any{"query": "weather forecast", "search_mode": "keyword"})); !strings.Contains(found, `"deprecated":true`) {
		t.Errorf("search result of a tool deprecated with true = %s", found)
	}

	var schemas SchemaAnswer
	json.Unmarshal([]byte(structured(t, call(t, cs, GetToolSchema, map[string]any{"tool_names": []string{"github__delete_repo", "github__create_issue"}}))), &schemas)
	if len(schemas.Tools) != 2 || !schemas.Tools[0].Disabled || schemas.Tools[1].Disabled {
		t.Errorf("get_tool_schema = %+v, want the disabled tool marked", schemas.Tools)
	}
	for _, r := range schemas.Tools[1].RelatedTools {
		if r.Name == "github__delete_repo" {
			t.Errorf("related tools of create_issue hold the disabled tool: %+v", schemas.Tools[1].RelatedTools)
		}
	}
	for _, name := range []string{ExecuteTool, "github__delete_repo"} {
		args := map[string]any{"repo": "a/b"}
		if name == ExecuteTool {
			args = map[string]any{"tool_name": "github__delete_repo", "arguments": args}
		}
		if res := call(t, cs, name, args); !res.IsError || !strings.Contains(text(res), "github__delete_repo is disabled") {
			t.Errorf("%s of a disabled tool = %s", name, text(res))
		}
	}
	if ex.calls != 0 {
		t.Error("a disabled tool ran")
	}
}

// TestIncludeExamples: include_examples false leaves the examples out of
// get_tool_schema and nothing else.
func TestIncludeExamples(t *testing.T) {
	t.Parallel()
	cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil)}))
	with := text(call(t, cs, GetToolSchema, map[string]any{"tool_name": "weather__get_forecast"}))
	without := text(call(t, cs, GetToolSchema, map[string]any{"tool_name": "weather__get_forecast", "include_examples": false}))
	if !strings.Contains(with, `"examples"`) || strings.Contains(without, `"examples"`) ||
		strings.Replace(with, `,"examples":[{"description":"Get forecast: city Paris","arguments":{"city":"Paris"},"source":"synthesized"}]`, "", 1) != without {
		t.Errorf("get_tool_schema with examples:\n%s\nwithout:\n%s", with, without)
	}
	if res := call(t, cs, GetToolSchema, map[string]any{"tool_name": "weather__get_forecast", "include_examples": "no"}); !res.IsError {
		t.Errorf("include_examples \"no\" = %s, want an error", text(res))
	}
}

// TestCompactMode: every tool is listed with a condensed description and
// a stripped schema (the required properties with their types, short
// enums and item types; no optional one), without title, annotations or
// output schema; calls are checked against the whole schema;
// get_tool_schema gives it.
func TestCompactMode(t *testing.T) {
	t.Parallel()
	cat := `{"domains":[{"name":"github","tools":[
	  {"name":"create_issue","title":"Create Issue","description":"Open a new issue (a bug, a task) in a repository. Labels must exist.","annotations":{"readOnlyHint":false,"openWorldHint":true},
	   "inputSchema":{"type":"object","properties":{
	     "repo":{"type":"string","description":"owner/name","pattern":"^[^/]+/[^/]+$"},
	     "state":{"type":"string","enum":["open","closed"]},
	     "labels":{"type":"array","items":{"type":"string","maxLength":50},"description":"labels to add"},
	     "meta":{"anyOf":[{"type":"string"},{"type":"object"}]}},"required":["repo","labels","meta"],"$defs":{"x":{"type":"string"}}},
	   "outputSchema":{"type":"object","properties":{"id":{"type":"integer"}}}}]}]}`
	ex := &fakeExecutor{}
	cs := connect(t, New(Options{Live: testLive(t, cat, nil), Executor: ex, Expose: Exposure{Mode: ExposeCompact}}))
	listed := listToolNamed(t, cs, "github__create_issue")
	schema, _ := json.Marshal(listed.InputSchema)
	want := `{"properties":{"labels":{"items":{"type":"string"},"type":"array"},"meta":{"type":["string","object"]},"repo":{"type":"string"}},"required":["repo","labels","meta"],"type":"object"}`
	if string(schema) != want || listed.Description != "Open new issue in repository." || listed.Title != "" || listed.Annotations != nil || listed.OutputSchema != nil {
		t.Errorf("compact entry = %q %s (title %q, annotations %v, output %v), want %s alone", listed.Description, schema, listed.Title, listed.Annotations, listed.OutputSchema, want)
	}
	if res := call(t, cs, "github__create_issue", map[string]any{"repo": "nope", "labels": []any{}, "meta": "m"}); !res.IsError || !strings.Contains(text(res), "repo") {
		t.Errorf("a call the whole schema refuses = %s", text(res))
	}
	if res := call(t, cs, "github__create_issue", map[string]any{"repo": "a/b", "labels": []any{"bug"}, "meta": "m", "state": "open"}); res.IsError || ex.calls != 1 {
		t.Errorf("a valid call = %s", text(res))
	}
	got := text(call(t, cs, GetToolSchema, map[string]any{"tool_name": "github__create_issue"}))
	if !strings.Contains(got, `"pattern":"^[^/]+/[^/]+$"`) || !strings.Contains(got, "Labels must exist.") {
		t.Errorf("get_tool_schema in compact mode = %s, want the whole schema and description", got)
	}
}

// TestAutoMode: auto lists every tool while their entries cost less than
// the budget, and the meta-tools alone above it; a catalog that grows
// past the budget takes them off the list (one tools/list_changed).
func TestAutoMode(t *testing.T) {
	t.Parallel()
	eagerCost, under := listingCost(testLive(t, testCatalog, nil).Engine().Catalog(), 1<<30)
	if !under || eagerCost < 100 {
		t.Fatalf("the test catalog's listing costs %d tokens", eagerCost)
	}
	for _, tc := range []struct {
		name   string
		budget int
		want   int
	}{
		{"under the budget", eagerCost + 1, 3 + 5},
		{"at the budget", eagerCost, 3},
		{"default budget", 0, 3 + 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil), Expose: Exposure{Mode: ExposeAuto, Budget: tc.budget}}))
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil || len(res.Tools) != tc.want {
				t.Errorf("tools/list with a budget of %d (listing %d) = %d tools (%v), want %d", tc.budget, eagerCost, len(res.Tools), err, tc.want)
			}
		})
	}
	// Past the budget once the catalog grows.
	live := testLive(t, testCatalog, nil)
	l := connectLister(t, New(Options{Live: live, Expose: Exposure{Mode: ExposeAuto, Budget: eagerCost + 50}}))
	if n, _ := l.list(nil); n != 8 {
		t.Fatalf("first list = %d tools, want 8", n)
	}
	bigger := strings.Replace(testCatalog, `"description":"Jira tickets","tools":[`, `"description":"Jira tickets","tools":[
	  {"name":"search","description":"Search Jira tickets with JQL, a query language with fields, operators and functions.","inputSchema":{"type":"object","properties":{"jql":{"type":"string","description":"the JQL query"},"max":{"type":"integer"}}}},`, 1)
	if _, err := live.Load(context.Background(), specsOf(t, bigger), nil, nil); err != nil {
		t.Fatal(err)
	}
	l.waitList(t, 3)
	if n := l.notices.Load(); n != 1 {
		t.Errorf("%d tools/list_changed for the switch, want 1", n)
	}
}

// TestCompactListingCosts: on the built-in catalog, no tool's compact
// entry is larger than its whole one, and the listing is smaller.
func TestCompactListingCosts(t *testing.T) {
	t.Parallel()
	cat, err := index.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	full, compact := eagerTools(cat, false), eagerTools(cat, true)
	var fullBytes, compactBytes int
	for i := range full {
		f, _ := json.Marshal(full[i])
		c, _ := json.Marshal(compact[i])
		if len(c) > len(f) {
			t.Errorf("%s: compact entry of %d bytes, whole one %d", full[i].Name, len(c), len(f))
		}
		fullBytes += len(f)
		compactBytes += len(c)
	}
	if compactBytes >= fullBytes {
		t.Errorf("compact listing is %d bytes, eager %d", compactBytes, fullBytes)
	}
}

// TestUpstreamToolStateServed: the tools an upstream's config turns off
// or marks deprecated (gateway's TestUpstreamToolState) are served so, on
// the tools it lists and on those kept from its last run.
func TestUpstreamToolStateServed(t *testing.T) {
	t.Parallel()
	known := fakeKnown(t, "fake")
	up := fakeConfig(t, "fake", "ok")
	up.DisabledTools, up.DeprecatedTools = []string{"crash"}, map[string]string{"fail": "use fake__echo"}
	srv := knownGateway(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{up}, Known: []index.ListedTools{known}}, Exposure{Mode: ExposeEager}).srv
	cs := connect(t, srv)
	check := func(when string) {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		names := strings.Join(toolNames(res), ",")
		if strings.Contains(names, "fake__crash") || !strings.Contains(names, "fake__fail") {
			t.Errorf("%s: tools/list = %s, want no fake__crash", when, names)
		}
		if got := text(call(t, cs, DiscoverTools, map[string]any{"domain": "fake"})); !strings.Contains(got, `"deprecated":"use fake__echo"`) {
			t.Errorf("%s: listing = %s, want fake__fail deprecated", when, got)
		}
	}
	check("from the last run's tools")
	waitFor(t, "the server", func() bool { return srv.scope.unavailable()["fake"] == "" })
	check("once the server listed its tools")
}
