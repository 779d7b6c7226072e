package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/callers"
	"github.com/toolscout/toolscout/server/httpguard"
)

// visibleCatalog is testCatalog as caller "gh" sees it (github, and
// weather's get_forecast), with jira left out: a server of this catalog
// without callers answers what gh must be answered.
const visibleCatalog = `{"domains":[
 {"name":"github","description":"GitHub repositories and issues","tools":[
  {"name":"create_issue","description":"Open a new issue in a repository. Labels and assignees are optional.","group":"issues",
   "inputSchema":{"type":"object","properties":{"repo":{"type":"string"},"title":{"type":"string","minLength":1},"labels":{"type":"array","items":{"type":"string"}}},"required":["repo","title"]}},
  {"name":"list_issues","description":"List the issues of a repository.","group":"issues","inputSchema":{"type":"object"}}]},
 {"name":"weather","description":"Weather forecasts","tools":[
  {"name":"get_forecast","description":"Get the weather forecast for a city.","inputSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"annotations":{"readOnlyHint":true}}]}]}`

const ghToken = "gh-token-0123456789abcdef"

// testCallers: gh sees github but its get_file_contents, and weather;
// jira is hidden from it.
func testCallers(t *testing.T) *callers.Set {
	t.Helper()
	set, err := callers.New(callers.Options{Callers: []callers.Config{
		{Name: "gh", Tokens: []string{ghToken}, Allow: []string{"github", "weather__get_*"}, Deny: []string{"github__get_file_contents"}},
		{Name: "all", Tokens: []string{"all-token-0123456789abcdef"}, Allow: []string{"*"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestCallerSeesAsIfHiddenToolsDidNotExist: every answer caller gh gets
// from the whole catalog is, byte for byte, the answer a server of only
// the tools gh may see gives: a hidden tool is answered exactly as one
// that does not exist (its bare name no longer ambiguous, its domain
// unknown, its misspellings suggesting only what gh sees). Searches rank
// with the whole index's statistics, so they are compared by the tools
// they name, and must still return k results.
func TestCallerSeesAsIfHiddenToolsDidNotExist(t *testing.T) {
	t.Parallel()
	for _, mode := range []Mode{ExposeMeta, ExposeEager, ExposeCore, ExposeDynamic, ExposeAuto, ExposeCompact} {
		for _, protocol := range []string{"", "2025-11-25"} {
			t.Run(string(mode)+"/"+protocol, func(t *testing.T) {
				exp := Exposure{Mode: mode, Pinned: []string{"github__*", "jira__*", "weather__get_forecast"}}
				// The upstream servers' own instructions: jira's must not
				// reach gh, as if jira were not there.
				instr := map[string]string{"github": "Repositories first.", "jira": "Projects first.", "weather": "Cities by name."}
				full := New(Options{Live: testLive(t, testCatalog, nil), Executor: &fakeExecutor{instr: instr}, Expose: exp, Callers: testCallers(t)})
				hs := httptest.NewServer(full.HTTPHandler(HTTPOptions{}))
				t.Cleanup(hs.Close)
				ref := New(Options{Live: testLive(t, visibleCatalog, nil), Executor: &fakeExecutor{instr: map[string]string{"github": instr["github"], "weather": instr["weather"]}}, Expose: exp})
				rs := httptest.NewServer(ref.HTTPHandler(HTTPOptions{}))
				t.Cleanup(rs.Close)
				got := connectURL(t, hs.URL, &http.Client{Transport: bearerRT(ghToken)}, protocol)
				want := connectURL(t, rs.URL, nil, protocol)
				ctx := context.Background()

				if g, w := got.InitializeResult().Instructions, want.InitializeResult().Instructions; g != w || !strings.Contains(g, "- weather: Cities by name.") {
					t.Errorf("instructions:\n%s\nwant\n%s", g, w)
				}
				gl, err := got.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				wl, _ := want.ListTools(ctx, nil)
				if g, w := strings.Join(toolNames(gl), ","), strings.Join(toolNames(wl), ","); g != w {
					t.Errorf("tools/list = %s, want %s", g, w)
				}
				if gl.CacheScope != cachePrivate {
					t.Errorf("tools/list cacheScope %q, want private: the list varies by caller", gl.CacheScope)
				}
				for _, c := range []struct {
					tool string
					args map[string]any
				}{
					{DiscoverTools, map[string]any{}},
					{DiscoverTools, map[string]any{"domain": "github"}},
					{DiscoverTools, map[string]any{"domain": "jira"}},
					{DiscoverTools, map[string]any{"domain": "github", "group": "repos"}},
					{DiscoverTools, map[string]any{"query": "create a ticket", "domain": "jira"}},
					{GetToolSchema, map[string]any{"tool_name": "create_issue"}},
					{GetToolSchema, map[string]any{"tool_name": "jira__create_issue"}},
					{GetToolSchema, map[string]any{"tool_name": "github__get_file_contents"}},
					{GetToolSchema, map[string]any{"tool_name": "get_file_contents"}},
					{GetToolSchema, map[string]any{"tool_name": "github__get_file_content"}},
					{GetToolSchema, map[string]any{"tool_name": "jira/create_issue"}},
					{GetToolSchema, map[string]any{"tool_names": []string{"github__list_issues", "jira__create_issue"}}},
					{ExecuteTool, map[string]any{"tool_name": "create_issue", "arguments": map[string]any{"repo": "a/b", "title": "t"}}},
					{ExecuteTool, map[string]any{"tool_name": "jira__create_issue", "arguments": map[string]any{}}},
					{ExecuteTool, map[string]any{"tool_name": "github__get_file_contents"}},
					{"github__list_issues", map[string]any{}},
					{"jira__create_issue", map[string]any{}},
					{"github__get_file_contents", map[string]any{}},
					{EnableDomain, map[string]any{"domain": "jira"}},
					{EnableDomain, map[string]any{"domain": "github"}},
					{EnableDomain, map[string]any{"domain": "github", "group": "repos"}},
					{DisableDomain, map[string]any{"domain": "github"}},
					{EnableDomain, map[string]any{"domain": "weather", "toolset": encodeToolset(map[string]bool{"jira": true, "github": true})}},
				} {
					g, gerr := got.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
					w, werr := want.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
					if gs, ws := answer(g, gerr), answer(w, werr); gs != ws {
						t.Errorf("%s %v =\n%s\nwant\n%s", c.tool, c.args, gs, ws)
					}
				}
				// The lists after enable_domain and disable_domain, and with a
				// toolset that names a hidden domain.
				for _, p := range []*mcp.ListToolsParams{nil, {Meta: mcp.Meta{ToolsetMetaKey: encodeToolset(map[string]bool{"jira": true, "github": true})}}} {
					gl, err := got.ListTools(ctx, p)
					if err != nil {
						t.Fatal(err)
					}
					wl, _ := want.ListTools(ctx, p)
					if g, w := strings.Join(toolNames(gl), ","), strings.Join(toolNames(wl), ","); g != w {
						t.Errorf("tools/list %v = %s, want %s", p, g, w)
					}
				}
				// Searches: only visible tools, and as many as from the
				// visible catalog alone (a hidden tool that ranks first is
				// left out before the top k is cut, not after).
				for _, q := range []string{"create an issue or ticket", "jira ticket", "read a file from a repository", "weather forecast"} {
					for _, limit := range []int{1, 2, 10} {
						args := map[string]any{"query": q, "limit": limit, "search_mode": "keyword"}
						g, w := searchNames(t, got, args), searchNames(t, want, args)
						if len(g) != len(w) || limit == 10 && strings.Join(g, ",") != strings.Join(w, ",") {
							t.Errorf("search %q limit %d = %v, want %v", q, limit, g, w)
						}
						for _, n := range g {
							if strings.HasPrefix(n, "jira__") || n == "github__get_file_contents" {
								t.Errorf("search %q names hidden %s", q, n)
							}
						}
					}
				}
			})
		}
	}
}

// searchNames returns the names a search answered, sorted.
func searchNames(t *testing.T, cs *mcp.ClientSession, args map[string]any) []string {
	t.Helper()
	res := call(t, cs, DiscoverTools, args)
	var a SearchAnswer
	if err := json.Unmarshal([]byte(text(res)), &a); err != nil {
		t.Fatalf("search %v: %s", args, text(res))
	}
	var names []string
	for _, r := range a.Results {
		names = append(names, r.Name)
	}
	slices.Sort(names)
	return names
}

// answer is a call's outcome as comparable text.
func answer(res *mcp.CallToolResult, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	b, _ := json.Marshal(res)
	return string(b)
}

// bearerRT adds a bearer token to every request.
type bearerRT string

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// TestCallersHTTPGuard: with callers configured, /mcp and /metrics need
// a caller's credential (401 with a challenge otherwise), a session
// answers only the caller that opened it, and /metrics seen by a caller
// names no server it may not see.
func TestCallersHTTPGuard(t *testing.T) {
	t.Parallel()
	srv := New(Options{Live: testLive(t, testCatalog, nil), Callers: testCallers(t), Metrics: NewMetrics()})
	hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	for _, tok := range []string{"", "nope-nope-nope-nope-nope"} {
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
		req.Header.Set("Mcp-Protocol-Version", StatelessProtocol)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer ") {
			t.Errorf("tools/list with token %q: %d %q, want 401 with a Bearer challenge", tok, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	code, _ := statelessPost(t, hs.URL, "tools/list", nil, map[string]string{"Authorization": "Bearer " + ghToken})
	if code != http.StatusOK {
		t.Errorf("tools/list with gh's token: %d, want 200", code)
	}
	// gh's session is not all's.
	cs := connectURL(t, hs.URL, &http.Client{Transport: bearerRT(ghToken)}, "2025-11-25")
	req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", "Bearer all-token-0123456789abcdef")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("all using gh's session: %d, want 403", resp.StatusCode)
	}

	ms := httptest.NewServer(srv.MetricsHandler())
	t.Cleanup(ms.Close)
	if resp, err := http.Get(ms.URL); err != nil || resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("/metrics without a token: %v %v, want 401 with a challenge", resp, err)
	}
	scrape := func(tok string) string {
		req, _ := http.NewRequest(http.MethodGet, ms.URL, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("/metrics: %v %v", resp, err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return b.String()
	}
	if got := metricLine(scrape(ghToken), "toolscout_index_tools"); got != "toolscout_index_tools 3" {
		t.Errorf("gh's /metrics: %q, want toolscout_index_tools 3 (the tools it sees)", got)
	}
	if got := metricLine(scrape("all-token-0123456789abcdef"), "toolscout_index_tools"); got != "toolscout_index_tools 5" {
		t.Errorf("all's /metrics: %q, want toolscout_index_tools 5", got)
	}
}

// metricLine returns the line of the series in a scrape, or "".
func metricLine(scrape, series string) string {
	for line := range strings.Lines(scrape) {
		if strings.HasPrefix(line, series+" ") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// TestAuthorizationGivenTwice: a request that gives Authorization twice
// gets 400 wherever toolscout reads it (callers, --auth-token-file, the
// handler that forward_authorization reads it in), as a routing header
// given twice does: a proxy in front may have checked the other copy
// (issue 52, item 7: it was served as the first copy's caller). One copy
// still passes.
func TestAuthorizationGivenTwice(t *testing.T) {
	t.Parallel()
	const token = "shared-token-0123456789abcdef"
	withCallers := New(Options{Live: testLive(t, testCatalog, nil), Callers: testCallers(t), Metrics: NewMetrics()})
	plain := New(Options{Live: testLive(t, testCatalog, nil)})
	serve := func(h http.Handler) string {
		hs := httptest.NewServer(h)
		t.Cleanup(hs.Close)
		return hs.URL
	}
	callersURL := serve(withCallers.HTTPHandler(HTTPOptions{}))
	metricsURL := serve(withCallers.MetricsHandler())
	tokenURL := serve(httpguard.Wrap(plain.HTTPHandler(HTTPOptions{}), httpguard.Options{Token: token}))
	plainURL := serve(plain.HTTPHandler(HTTPOptions{}))
	for _, tc := range []struct {
		name   string
		url    string
		method string // GET for /metrics, else a stateless tools/list
		auth   []string
		want   int
	}{
		{"callers, two callers", callersURL, http.MethodPost, []string{"Bearer " + ghToken, "Bearer all-token-0123456789abcdef"}, http.StatusBadRequest},
		{"callers, one caller twice", callersURL, http.MethodPost, []string{"Bearer " + ghToken, "Bearer " + ghToken}, http.StatusBadRequest},
		{"callers, once", callersURL, http.MethodPost, []string{"Bearer " + ghToken}, http.StatusOK},
		{"callers metrics, two callers", metricsURL, http.MethodGet, []string{"Bearer " + ghToken, "Bearer all-token-0123456789abcdef"}, http.StatusBadRequest},
		{"token, right then wrong", tokenURL, http.MethodPost, []string{"Bearer " + token, "Bearer nope"}, http.StatusBadRequest},
		{"token, once", tokenURL, http.MethodPost, []string{"Bearer " + token}, http.StatusOK},
		{"no auth, two", plainURL, http.MethodPost, []string{"Bearer a", "Bearer b"}, http.StatusBadRequest},
		{"no auth, once", plainURL, http.MethodPost, []string{"Bearer a"}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.method == http.MethodPost {
				body = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":` + newProtocolMeta + `}}`)
			}
			req, _ := http.NewRequest(tc.method, tc.url, body)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", StatelessProtocol)
			req.Header.Set("Mcp-Method", "tools/list")
			for _, a := range tc.auth {
				req.Header.Add("Authorization", a)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("%s with %d Authorization headers: %d %.200s, want %d", tc.method, len(tc.auth), resp.StatusCode, b, tc.want)
			}
			if tc.want == http.StatusBadRequest && !strings.Contains(string(b), "Authorization is given 2 times") {
				t.Errorf("answer %.200s does not say Authorization is given twice", b)
			}
		})
	}
}

// TestCallersReplacedWhileServing: when the callers are re-read with a
// caller's lists changed (callers.Set.Replace, as serve does on a
// config change), the caller's next requests see its new lists, the
// toolset view of the same toolset included, with no restart; a caller whose
// definition did not change is the same Caller as before.
func TestCallersReplacedWhileServing(t *testing.T) {
	t.Parallel()
	set := testCallers(t)
	srv := New(Options{Live: testLive(t, testCatalog, nil), Executor: &fakeExecutor{}, Expose: Exposure{Mode: ExposeDynamic}, Callers: set})
	hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	toolset := &mcp.ListToolsParams{Meta: mcp.Meta{ToolsetMetaKey: encodeToolset(map[string]bool{"github": true, "weather": true})}}
	look := func() (listed, domains string) {
		t.Helper()
		cs := connectURL(t, hs.URL, &http.Client{Transport: bearerRT(ghToken)}, "")
		l, err := cs.ListTools(context.Background(), toolset)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(toolNames(l), ","), answer(cs.CallTool(context.Background(), &mcp.CallToolParams{Name: DiscoverTools, Arguments: map[string]any{}}))
	}
	listed, domains := look()
	if !strings.Contains(listed, "github__create_issue") || !strings.Contains(domains, `"name":"github"`) {
		t.Fatalf("gh before: tools/list %s, discover_tools %s; want github's tools", listed, domains)
	}
	all := set.Caller("all")
	next, err := callers.New(callers.Options{Callers: []callers.Config{
		{Name: "gh", Tokens: []string{ghToken}, Allow: []string{"github", "weather__get_*"}, Deny: []string{"github__get_file_contents", "github__create_issue"}},
		{Name: "all", Tokens: []string{"all-token-0123456789abcdef"}, Allow: []string{"*"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	set.Replace(next)
	listed, domains = look()
	if strings.Contains(listed, "github__create_issue") || !strings.Contains(listed, "github__list_issues") || !strings.Contains(listed, "weather__get_forecast") {
		t.Errorf("gh's toolset list after github__create_issue was denied it: %s", listed)
	}
	if !strings.Contains(domains, `"name":"github"`) {
		t.Errorf("gh's discover_tools after the change: %s, want github still", domains)
	}
	if set.Caller("all") != all {
		t.Error("all's definition did not change, but its Caller did")
	}
}
