package server

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tiktoken-go/tokenizer"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/search"

	"github.com/toolscout/toolscout/server/gateway"
)

const testCatalog = `{"domains":[
 {"name":"github","description":"GitHub repositories and issues","tools":[
  {"name":"create_issue","description":"Open a new issue in a repository. Labels and assignees are optional.","group":"issues",
   "inputSchema":{"type":"object","properties":{"repo":{"type":"string"},"title":{"type":"string","minLength":1},"labels":{"type":"array","items":{"type":"string"}}},"required":["repo","title"]}},
  {"name":"list_issues","description":"List the issues of a repository.","group":"issues","inputSchema":{"type":"object"}},
  {"name":"get_file_contents","description":"Read a file from a repository.","group":"repos","inputSchema":{"type":"object"},
   "outputSchema":{"type":"object","properties":{"content":{"type":"string"}}}}]},
 {"name":"jira","description":"Jira tickets","tools":[
  {"name":"create_issue","description":"Create a Jira ticket.","inputSchema":{"type":"object","properties":{"summary":{"type":"string"}}}}]},
 {"name":"weather","description":"Weather forecasts","tools":[
  {"name":"get_forecast","description":"Get the weather forecast for a city.","inputSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"annotations":{"readOnlyHint":true}}]}]}`

// testLive indexes the catalog js in memory (vectors too when emb is set).
func testLive(t *testing.T, js string, emb embed.Embedder) *search.Live {
	t.Helper()
	return testLiveIn(t, "", js, emb)
}

// testLiveIn indexes the catalog js in the data dir dir ("": in memory).
func testLiveIn(t *testing.T, dir, js string, emb embed.Embedder) *search.Live {
	t.Helper()
	live, _ := testLiveStore(t, dir, js, emb)
	return live
}

// testLiveStore is testLiveIn that also returns the store the live
// index owns.
func testLiveStore(t *testing.T, dir, js string, emb embed.Embedder) (*search.Live, *store.Store) {
	t.Helper()
	specs, err := index.ParseCatalog("test", []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	store, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	live, _, err := search.Open(context.Background(), search.LiveOptions{Store: store, Embedder: emb}, specs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })
	return live, store
}

// connect runs srv on in-memory transports and returns a client session.
func connect(t *testing.T, srv *Server) *mcp.ClientSession { return connectWith(t, srv, nil) }

// connectWith is connect with the client's options.
func connectWith(t *testing.T, srv *Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s, %v): %v", name, args, err)
	}
	return res
}

// structured returns the structured content as JSON with sorted keys.
func structured(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// normalize re-encodes JSON with sorted keys.
func normalize(t *testing.T, js string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		t.Fatalf("bad JSON %s: %v", js, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func TestToolsList(t *testing.T) {
	t.Parallel()
	cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil)}))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Annotations == nil {
			t.Errorf("%s has no annotations", tool.Name)
		}
	}
	if strings.Join(names, ",") != "discover_tools,execute_tool,get_tool_schema" {
		t.Errorf("tools/list = %v, want exactly the three meta-tools", names)
	}
	for _, tool := range res.Tools {
		ro := tool.Annotations.ReadOnlyHint
		if (tool.Name == ExecuteTool) == ro {
			t.Errorf("%s readOnlyHint = %v", tool.Name, ro)
		}
	}
	init := cs.InitializeResult()
	if !strings.Contains(init.Instructions, "discover_tools") || !strings.Contains(init.Instructions, "5 tools in 3 domains:\n- github (3 tools): GitHub repositories and issues; tools such as create_issue, list_issues, get_file_contents\n- jira (1 tool): Jira tickets; tools such as create_issue\n") {
		t.Errorf("instructions = %q, want the workflow and the domains", init.Instructions)
	}
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	live := testLive(t, testCatalog, embed.NewBuiltin(embed.BuiltinOptions{}))
	cs := connect(t, New(Options{Live: live}))
	// The first result's confidence is the engine's, rounded to two
	// places: the value follows the shipped models, the shape is fixed.
	conf := func(req search.Request) string {
		t.Helper()
		req.Limit = 1
		resp, err := live.Engine().Search(context.Background(), req)
		if err != nil || resp.Confidence == nil {
			t.Fatalf("engine search %q: %v, confidence %v", req.Query, err, resp)
		}
		return strconv.FormatFloat(math.Round(resp.Confidence.Value*100)/100, 'f', -1, 64)
	}
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"contents", map[string]any{},
			`{"domains":[{"name":"github","description":"GitHub repositories and issues","tool_count":3,"groups":["issues","repos"]},{"name":"jira","description":"Jira tickets","tool_count":1},{"name":"weather","description":"Weather forecasts","tool_count":1}],"total_domains":3,"total_tools":5}`},
		{"domain", map[string]any{"domain": "github"},
			`{"domain":"github","tools":[{"name":"github__create_issue","group":"issues","summary":"Open a new issue in a repository."},{"name":"github__list_issues","group":"issues","summary":"List the issues of a repository."},{"name":"github__get_file_contents","group":"repos","summary":"Read a file from a repository."}]}`},
		{"domain and group", map[string]any{"domain": "github", "group": "repos"},
			`{"domain":"github","group":"repos","tools":[{"name":"github__get_file_contents","group":"repos","summary":"Read a file from a repository."}]}`},
		{"domain with limit", map[string]any{"domain": "github", "limit": 1},
			`{"domain":"github","tools":[{"name":"github__create_issue","group":"issues","summary":"Open a new issue in a repository."}],"total":3,"next_cursor":"1"}`},
		{"query in keyword mode", map[string]any{"query": "weather forecast", "search_mode": "keyword", "limit": 1},
			`{"query":"weather forecast","search_mode":"keyword","embedder":"none","results":[{"name":"weather__get_forecast","domain":"weather","summary":"Get the weather forecast for a city.","confidence":` + conf(search.Request{Query: "weather forecast", Mode: search.Keyword}) + `}]}`},
		{"query in a domain", map[string]any{"query": "open a ticket", "domain": "jira"},
			`{"query":"open a ticket","search_mode":"hybrid","embedder":"builtin/wordvec-v2","results":[{"name":"jira__create_issue","domain":"jira","summary":"Create a Jira ticket.","confidence":` + conf(search.Request{Query: "open a ticket", Domain: "jira"}) + `}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, cs, DiscoverTools, tc.args)
			if res.IsError {
				t.Fatalf("error: %s", text(res))
			}
			if got := structured(t, res); got != normalize(t, tc.want) {
				t.Errorf("structuredContent =\n%s\nwant\n%s", got, tc.want)
			}
			if text(res) != tc.want {
				t.Errorf("text content = %s, want the same compact JSON", text(res))
			}
		})
	}
}

// TestDiscoverConfidenceEveryResult: every result of a search carries
// the engine's confidence in it, rounded to two places, none above the
// one before it, and low_confidence is the engine's.
func TestDiscoverConfidenceEveryResult(t *testing.T) {
	t.Parallel()
	live := testLive(t, testCatalog, embed.NewBuiltin(embed.BuiltinOptions{}))
	cs := connect(t, New(Options{Live: live}))
	for _, mode := range []string{"hybrid", "keyword", "semantic"} {
		for _, q := range []string{"list the issues of a repository", "open a ticket about the weather"} {
			resp, err := live.Engine().Search(context.Background(), search.Request{Query: q, Mode: search.Mode(mode), Limit: 5})
			if err != nil || resp.Confidence == nil {
				t.Fatalf("engine search %q: %v, confidence %v", q, err, resp)
			}
			res := call(t, cs, DiscoverTools, map[string]any{"query": q, "search_mode": mode, "limit": 5})
			var got SearchAnswer
			if err := json.Unmarshal([]byte(structured(t, res)), &got); err != nil || len(got.Results) != len(resp.Results) || len(got.Results) < 2 {
				t.Fatalf("%s %q: %v: %s: want the engine's %d results, at least 2", mode, q, err, structured(t, res), len(resp.Results))
			}
			for i, r := range got.Results {
				want := math.Round(resp.Results[i].Confidence*100) / 100
				if r.Confidence == nil || *r.Confidence != want || i > 0 && *r.Confidence > *got.Results[i-1].Confidence {
					t.Errorf("%s %q: result %d (%s) confidence %v, want %g, at most the one before", mode, q, i+1, r.Name, r.Confidence, want)
				}
			}
			if got.LowConfidence != resp.Confidence.Low {
				t.Errorf("%s %q: low_confidence %v, the engine's %v", mode, q, got.LowConfidence, resp.Confidence.Low)
			}
		}
	}
}

func TestDiscoverHybridFallback(t *testing.T) {
	t.Parallel()
	cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil)}))
	res := call(t, cs, DiscoverTools, map[string]any{"query": "will it rain", "search_mode": "semantic"})
	var got SearchAnswer
	json.Unmarshal([]byte(structured(t, res)), &got)
	if got.SearchMode != "keyword" || !strings.Contains(got.Notice, "ranked by keyword") {
		t.Errorf("answer = %+v, want keyword mode with a notice", got)
	}
}

func TestDiscoverErrors(t *testing.T) {
	t.Parallel()
	cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil)}))
	tests := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"unknown domain", map[string]any{"domain": "githubb"}, []string{`unknown domain "githubb"`, `did you mean "github"`, "valid domains: github, jira, weather"}},
		{"unknown group", map[string]any{"domain": "github", "group": "wiki"}, []string{`unknown group "wiki"`, "valid groups: issues, repos"}},
		{"misspelt group", map[string]any{"domain": "github", "group": "isues"}, []string{`did you mean "issues"`}},
		{"group without domain", map[string]any{"group": "issues"}, []string{"needs a domain"}},
		{"bad mode", map[string]any{"query": "x", "search_mode": "vector"}, []string{"search_mode", "must be one of hybrid, keyword, semantic; you sent \"vector\""}},
		{"mode without query", map[string]any{"search_mode": "keyword"}, []string{"needs a query"}},
		{"limit out of range", map[string]any{"query": "x", "limit": 1000}, []string{"limit", "must be at most 100; you sent 1000"}},
		{"huge domain", map[string]any{"domain": strings.Repeat("g", 4<<20)}, []string{"longer than 256 bytes", "(4194304 bytes)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, cs, DiscoverTools, tc.args)
			if !res.IsError {
				t.Fatalf("no error for %.200v: %s", tc.args, text(res))
			}
			if len(text(res)) > 1000 {
				t.Errorf("error of %d bytes: errors must not echo huge input", len(text(res)))
			}
			for _, w := range tc.want {
				if !strings.Contains(text(res), w) {
					t.Errorf("error %q does not contain %q", text(res), w)
				}
			}
		})
	}
}

func TestGetToolSchema(t *testing.T) {
	t.Parallel()
	cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil)}))
	huge20 := make([]string, 20)
	for i := range huge20 {
		huge20[i] = strings.Repeat("create_issue", 16000) // 190 KB each
	}
	res := call(t, cs, GetToolSchema, map[string]any{"tool_name": "get_forecast"})
	want := `{"tools":[{"name":"weather__get_forecast","domain":"weather","description":"Get the weather forecast for a city.","inputSchema":{"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"},"annotations":{"readOnlyHint":true},"examples":[{"description":"Get forecast: city Paris","arguments":{"city":"Paris"},"source":"synthesized"}]}]}`
	if text(res) != want {
		t.Errorf("text content = %s, want %s", text(res), want)
	}
	if got := structured(t, res); got != normalize(t, want) {
		t.Errorf("single schema =\n%s\nwant\n%s", got, want)
	}
	// Batch with an output schema, a typo and an ambiguous name.
	res = call(t, cs, GetToolSchema, map[string]any{"tool_names": []string{"github__get_file_contents", "get_forcast", "create_issue"}})
	if res.IsError {
		t.Fatalf("batch with one good name is an error: %s", text(res))
	}
	var got SchemaAnswer
	json.Unmarshal([]byte(structured(t, res)), &got)
	if len(got.Tools) != 1 || string(got.Tools[0].OutputSchema) != `{"properties":{"content":{"type":"string"}},"type":"object"}` {
		t.Errorf("batch tools = %+v, want get_file_contents with its output schema", got.Tools)
	}
	if len(got.Errors) != 2 || got.Errors[0].Candidates[0] != "weather__get_forecast" ||
		strings.Join(got.Errors[1].Candidates, ",") != "github__create_issue,jira__create_issue" {
		t.Errorf("batch errors = %+v, want a did-you-mean and the ambiguous candidates", got.Errors)
	}
	res = call(t, cs, GetToolSchema, map[string]any{"tool_name": "jira/create_issue"})
	if res.IsError || !strings.Contains(structured(t, res), `"name":"jira__create_issue"`) {
		t.Errorf("domain/tool form: %s", text(res))
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"tool_name": "zzzzzzzzzzzzzzzz"}, "discover_tools"},
		{map[string]any{"tool_name": "create_issue"}, "use one of github__create_issue, jira__create_issue"},
		{map[string]any{}, "pass tool_name"},
		{map[string]any{"tool_name": "list_isues"}, "did you mean github__list_issues"},
		{map[string]any{"tool_names": huge20}, "tool names are at most 64 characters"},
	} {
		res := call(t, cs, GetToolSchema, tc.args)
		if !res.IsError || !strings.Contains(text(res), tc.want) || len(text(res)) > 20*400 {
			t.Errorf("get_tool_schema(%.200v) = %v %.300q (%d bytes), want a bounded error containing %q", tc.args, res.IsError, text(res), len(text(res)), tc.want)
		}
	}
}

// fakeExecutor runs every tool by echoing its arguments; it refuses the
// jira domain like a catalog-only domain.
type fakeExecutor struct {
	calls int
	instr map[string]string // what Instructions reports
}

// Instructions reports the upstream servers' instructions, as the gateway
// does.
func (f *fakeExecutor) Instructions() map[string]string {
	out := map[string]string{}
	for d, s := range f.instr {
		out[d] = s
	}
	return out
}

func (f *fakeExecutor) Execute(ctx context.Context, req *mcp.CallToolRequest, t *index.Tool, args map[string]any) (*mcp.CallToolResult, error) {
	if t.Domain == "jira" {
		return nil, gateway.ErrNotExecutable
	}
	if t.Domain == "weather" {
		return nil, errors.New("upstream weather is unavailable; other domains still work")
	}
	f.calls++
	b, _ := json.Marshal(args)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: t.QualifiedName + " " + string(b)}}, StructuredContent: args}, nil
}

func TestExecuteTool(t *testing.T) {
	t.Parallel()
	ex := &fakeExecutor{}
	cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil), Executor: ex}))
	res := call(t, cs, ExecuteTool, map[string]any{"tool_name": "github__create_issue", "arguments": map[string]any{"repo": "a/b", "title": "Crash"}})
	if res.IsError || text(res) != `github__create_issue {"repo":"a/b","title":"Crash"}` || structured(t, res) != `{"repo":"a/b","title":"Crash"}` {
		t.Errorf("execute = %v %q %s", res.IsError, text(res), structured(t, res))
	}
	tests := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"missing required", map[string]any{"tool_name": "github__create_issue", "arguments": map[string]any{"repo": "a/b"}}, []string{"invalid arguments for github__create_issue", "title", "get_tool_schema"}},
		{"wrong type", map[string]any{"tool_name": "github__create_issue", "arguments": map[string]any{"repo": 5, "title": "x"}}, []string{"repo", "string"}},
		{"constraint", map[string]any{"tool_name": "github__create_issue", "arguments": map[string]any{"repo": "a", "title": ""}}, []string{"title"}},
		{"no arguments", map[string]any{"tool_name": "weather__get_forecast"}, []string{"city"}},
		{"unknown tool", map[string]any{"tool_name": "github__create_isue"}, []string{"did you mean github__create_issue"}},
		{"ambiguous", map[string]any{"tool_name": "create_issue", "arguments": map[string]any{}}, []string{"use one of"}},
		{"catalog only", map[string]any{"tool_name": "jira__create_issue", "arguments": map[string]any{}}, []string{"listed from a catalog and cannot run"}},
		{"upstream failure", map[string]any{"tool_name": "weather__get_forecast", "arguments": map[string]any{"city": "Oslo"}}, []string{"unavailable", "other domains still work"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := ex.calls
			res := call(t, cs, ExecuteTool, tc.args)
			if !res.IsError {
				t.Fatalf("execute(%v) succeeded: %s", tc.args, text(res))
			}
			for _, w := range tc.want {
				if !strings.Contains(text(res), w) {
					t.Errorf("error %q does not contain %q", text(res), w)
				}
			}
			if ex.calls != before {
				t.Error("the executor ran although the call was rejected")
			}
		})
	}
	// No executor at all: catalog-only server.
	cs = connect(t, New(Options{Live: testLive(t, testCatalog, nil)}))
	res = call(t, cs, ExecuteTool, map[string]any{"tool_name": "weather__get_forecast", "arguments": map[string]any{"city": "Oslo"}})
	if !res.IsError || !strings.Contains(text(res), "cannot run here") {
		t.Errorf("catalog-only execute = %v %q", res.IsError, text(res))
	}
}

func TestTokenBudget(t *testing.T) {
	t.Parallel()
	rep := builtinTokenReport(t)
	// 349 before discover_tools took a cursor (paged listings), 352 after,
	// 404 with a description for every parameter (issue 23 allows 420),
	// 415 with include_disabled and include_examples (the binary counts
	// 4 more: its version is in each answer's _meta).
	if rep.MetaToolsList > 420 {
		t.Errorf("meta tools/list = %d tokens, want ≤ 420", rep.MetaToolsList)
	}
	// About 80 tokens, and 20-30 more since each named domain has the
	// words that say what it does (issue 35 item 5).
	if rep.Instructions > 115 {
		t.Errorf("instructions = %d tokens, want at most 115", rep.Instructions)
	}
	if rep.EagerToolsList < 20*rep.MetaToolsList {
		t.Errorf("eager tools/list = %d tokens, meta = %d: the built-in catalog should cost far more eagerly", rep.EagerToolsList, rep.MetaToolsList)
	}
	if rep.DiscoverQuery == 0 || rep.GetToolSchema == 0 || rep.DiscoverContents == 0 {
		t.Errorf("typical answers not counted: %+v", rep)
	}
}

// TestInstructions: one line on what the catalog covers, largest domains
// first, then how to use what the mode lists: no workflow through the
// meta-tools where every tool is listed, and no "1 domains".
func TestInstructions(t *testing.T) {
	t.Parallel()
	three := []DomainSize{{Name: "github", Tools: 3}, {Name: "jira", Tools: 1}, {Name: "weather", Tools: 1}}
	var ten []DomainSize
	for i := range 10 {
		ten = append(ten, DomainSize{Name: "d" + itoa(i), Tools: 10 - i})
	}
	tests := []struct {
		name    string
		domains []DomainSize
		mode    Mode
		want    []string
		notWant []string
	}{
		{"meta", three, ExposeMeta, []string{"5 tools in 3 domains:\n- github (3 tools)\n- jira (1 tool)\n- weather (1 tool)\nWorkflow: 1) discover_tools", "3) execute_tool"}, []string{"enable_domain", "called by name"}},
		{"one domain", three[2:], ExposeMeta, []string{"1 tool in 1 domain:\n- weather (1 tool)\n"}, []string{"1 domains", "1 tools"}},
		{"unknown sizes", []DomainSize{{Name: "memory", Tools: 0}, {Name: "filesystem", Tools: 0, Purpose: "files on disk"}}, ExposeMeta, []string{"Tools in 2 domains:\n- filesystem (tools not listed yet): files on disk\n- memory (tools not listed yet)\n"}, []string{"0 tools"}},
		{"many domains", ten, ExposeMeta, []string{"55 tools in 10 domains, the largest: d0 (10 tools), d1 (9 tools), d2 (8 tools), d3 (7 tools), d4 (6 tools), d5 (5 tools), d6 (4 tools), d7 (3 tools); discover_tools without arguments lists them all"}, []string{"d8"}},
		{"eager", three, ExposeEager, []string{"Every tool is listed: call it by name."}, []string{"execute_tool", "get_tool_schema", "Workflow"}},
		{"compact", three, ExposeCompact, []string{"a summary and its required arguments", "get_tool_schema gives a tool's optional arguments"}, []string{"execute_tool", "Workflow"}},
		{"core", three, ExposeCore, []string{"Tools in tools/list can be called by name. For others: 1) discover_tools"}, nil},
		{"auto", three, ExposeAuto, []string{"Tools in tools/list can be called by name."}, nil},
		{"dynamic", three, ExposeDynamic, []string{"enable_domain lists a domain's tools directly"}, nil},
		{"none", nil, ExposeMeta, []string{"has none yet"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := compose(emptyCatalog(t), tc.domains, tc.mode, "", Selves{})
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("instructions(%s) = %q, want %q in it", tc.mode, got, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(got, w) {
					t.Errorf("instructions(%s) = %q, want no %q", tc.mode, got, w)
				}
			}
		})
	}
	// On the built-in catalog, in every mode, within the budget.
	cat, err := index.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := tokenizer.Get(tokenizer.O200kBase)
	for _, mode := range ExposeModes {
		got := InstructionsFor(cat, mode, "", Selves{})
		if n, _ := enc.Count(got); n > 120 {
			t.Errorf("instructions(%s) on the built-in catalog = %d tokens, want ≤ 120: %s", mode, n, got)
		}
	}
	// A server names the domains of its catalog, and of configured
	// servers that have no tools yet.
	cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil), Domains: []DomainSize{{Name: "slack", Tools: 0}}, Expose: Exposure{Mode: ExposeEager}}))
	if got := cs.InitializeResult().Instructions; !strings.HasPrefix(got, "5 tools in 4 domains:\n- github (3 tools): GitHub repositories and issues; tools such as create_issue, list_issues, get_file_contents\n- jira (1 tool): Jira tickets; tools such as create_issue\n- weather (1 tool): Weather forecasts; tools such as get_forecast\n- slack (tools not listed yet)\nEvery tool is listed") {
		t.Errorf("eager server's instructions = %q", got)
	}
}

func emptyCatalog(t *testing.T) *index.Catalog {
	t.Helper()
	cat, err := index.NewCatalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// TestOperatorInstructions: the config's toolscout.instructions
// (Options.Instructions) follow the generated instructions in what a
// client gets at initialize, after them and whole.
func TestOperatorInstructions(t *testing.T) {
	t.Parallel()
	extra := "Use the staging servers unless the user says production."
	cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil), Instructions: "  " + extra + "\n"}))
	got := cs.InitializeResult().Instructions
	if !strings.HasSuffix(got, "\n\n"+extra) || !strings.Contains(got, "discover_tools") {
		t.Errorf("instructions = %q, want the generated ones, then %q", got, extra)
	}
	plain := connect(t, New(Options{Live: testLive(t, testCatalog, nil)})).InitializeResult().Instructions
	if strings.Contains(plain, "\n\n") || plain+"\n\n"+extra != got {
		t.Errorf("without operator instructions = %q; with = %q", plain, got)
	}
}
