package server

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tiktoken-go/tokenizer"
)

// TestSchemaTypeScript: get_tool_schema with format "typescript"
// answers with declarations (the content text is the declarations
// themselves, names not found as comments after them) instead of JSON
// Schemas; the default and "json" answer as before; another format is
// an error naming both.
//
// The properties come in the order of the catalog's schema as the index
// keeps it: index.checkObjectSchema stores schemas re-encoded from a Go
// map, so that their keys are sorted before any answer is made.
func TestSchemaTypeScript(t *testing.T) {
	t.Parallel()
	cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil)}))
	tests := []struct {
		name      string
		args      map[string]any
		isError   bool
		wantText  []string // in the content text, in this order
		wantCalls []string // DeclaredTool.Call of each tool
		errors    int
	}{
		{name: "one tool",
			args: map[string]any{"tool_name": "github__create_issue", "format": "typescript"},
			wantText: []string{"declare namespace tools.github {\n", "   * Open a new issue in a repository. Labels and assignees are optional.\n   * @example\n",
				"  function create_issue(args: { labels?: string[]; repo: string; title: string }): Promise<unknown>;\n}\n"},
			wantCalls: []string{"tools.github.create_issue"}},
		{name: "several, an output type, a name not found",
			args: map[string]any{"tool_names": []string{"github__get_file_contents", "weather__get_forecast", "github__nope"}, "format": "typescript", "include_examples": false},
			wantText: []string{"function get_file_contents(args?: { [key: string]: unknown }): Promise<{ content?: string }>;",
				"declare namespace tools.weather {", "function get_forecast(args: { city: string }): Promise<unknown>;",
				"\n// unknown tool \"github__nope\""},
			wantCalls: []string{"tools.github.get_file_contents", "tools.weather.get_forecast"}, errors: 1},
		{name: "examples",
			args:      map[string]any{"tool_name": "weather__get_forecast", "format": "typescript"},
			wantText:  []string{"   * @example\n   * await tools.weather.get_forecast({\"city\":"},
			wantCalls: []string{"tools.weather.get_forecast"}},
		{name: "json, as before",
			args:     map[string]any{"tool_name": "weather__get_forecast", "format": "json"},
			wantText: []string{`"inputSchema":{`}},
		{name: "unknown format",
			args:     map[string]any{"tool_name": "weather__get_forecast", "format": "ts"},
			isError:  true,
			wantText: []string{"json", "typescript"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, cs, GetToolSchema, tt.args)
			got := text(res)
			if res.IsError != tt.isError {
				t.Fatalf("get_tool_schema(%v) error = %v, want %v: %s", tt.args, res.IsError, tt.isError, got)
			}
			rest := got
			for _, w := range tt.wantText {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("get_tool_schema(%v) =\n%s\nwant (after what came before) %q", tt.args, got, w)
				}
				rest = rest[i+len(w):]
			}
			if tt.isError || tt.args["format"] != "typescript" {
				if strings.Contains(got, "declare namespace") || strings.Contains(structured(t, res), `"typescript":`) {
					t.Errorf("get_tool_schema(%v) = %s, want no declarations", tt.args, got)
				}
				return
			}
			var a DeclarationsAnswer
			if err := json.Unmarshal([]byte(structured(t, res)), &a); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(got, a.TypeScript) || strings.Contains(got, `"inputSchema"`) {
				t.Errorf("get_tool_schema(%v) text =\n%s\nwant the declarations %q, no schemas", tt.args, got, a.TypeScript)
			}
			var calls []string
			for _, d := range a.Tools {
				calls = append(calls, d.Call)
			}
			if fmt.Sprint(calls) != fmt.Sprint(tt.wantCalls) || len(a.Errors) != tt.errors {
				t.Errorf("get_tool_schema(%v) = calls %v and %d errors, want %v and %d", tt.args, calls, len(a.Errors), tt.wantCalls, tt.errors)
			}
		})
	}
}

// TestSchemaTypeScriptStructured: a client that reads structuredContent
// gets the declarations there and one line of text.
func TestSchemaTypeScriptStructured(t *testing.T) {
	t.Parallel()
	caps := &mcp.ClientCapabilities{Experimental: map[string]any{StructuredCapability: map[string]any{}}}
	cs := connectWith(t, New(Options{Live: testLive(t, testCatalog, nil)}), &mcp.ClientOptions{Capabilities: caps})
	res := call(t, cs, GetToolSchema, map[string]any{"tool_name": "weather__get_forecast", "format": "typescript"})
	if got, want := text(res), "TypeScript declarations of weather__get_forecast (the answer is in structuredContent)"; got != want {
		t.Errorf("get_tool_schema text = %q, want %q", got, want)
	}
	if !strings.Contains(structured(t, res), `"typescript":"declare namespace tools.weather {`) {
		t.Errorf("get_tool_schema structuredContent = %s, want the declarations", structured(t, res))
	}
	res = call(t, cs, DiscoverTools, map[string]any{"domain": "weather", "detail": "typescript"})
	if got := text(res); strings.Contains(got, "declare") || len(res.Content) != 1 {
		t.Errorf("discover_tools text = %q, want one line", got)
	}
}

// TestDiscoverTypeScript: discover_tools with detail "typescript"
// declares the tools a search or a listing returns: structuredContent
// in its typescript field, the content text as the JSON answer without
// them and then the declarations.
func TestDiscoverTypeScript(t *testing.T) {
	t.Parallel()
	cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil)}))
	tests := []struct {
		name    string
		args    map[string]any
		isError bool
		want    []string // in the declarations, each
	}{
		{name: "search",
			args: map[string]any{"query": "create an issue", "search_mode": "keyword", "detail": "typescript"},
			want: []string{"declare namespace tools.github {\n  /** Open a new issue in a repository.", "function create_issue(args: { labels?: string[]; repo: string; title: string })",
				"declare namespace tools.jira {\n  /** Create a Jira ticket. */", "function create_issue(args?: { summary?: string })"}},
		{name: "domain and group",
			args: map[string]any{"domain": "github", "group": "issues", "detail": "typescript"},
			want: []string{"function create_issue(", "function list_issues(args?: { [key: string]: unknown }): Promise<unknown>;"}},
		{name: "summary, as before", args: map[string]any{"domain": "github", "detail": "summary"}},
		{name: "contents have no tools to declare", args: map[string]any{"detail": "typescript"}, isError: true,
			want: []string{"pass query or domain"}},
		{name: "unknown detail", args: map[string]any{"domain": "github", "detail": "full"}, isError: true,
			want: []string{"summary", "typescript"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, cs, DiscoverTools, tt.args)
			if res.IsError != tt.isError {
				t.Fatalf("discover_tools(%v) error = %v, want %v: %s", tt.args, res.IsError, tt.isError, text(res))
			}
			if tt.isError {
				for _, w := range tt.want {
					if !strings.Contains(text(res), w) {
						t.Errorf("discover_tools(%v) = %s, want %q in it", tt.args, text(res), w)
					}
				}
				return
			}
			var a struct {
				TypeScript string `json:"typescript"`
			}
			json.Unmarshal([]byte(structured(t, res)), &a)
			if tt.args["detail"] != "typescript" {
				if a.TypeScript != "" || len(res.Content) != 1 {
					t.Errorf("discover_tools(%v) = %s, want no declarations", tt.args, text(res))
				}
				return
			}
			for _, w := range tt.want {
				if !strings.Contains(a.TypeScript, w) {
					t.Fatalf("discover_tools(%v) declarations =\n%s\nwant %q in them", tt.args, a.TypeScript, w)
				}
			}
			if len(res.Content) != 2 || res.Content[1].(*mcp.TextContent).Text != a.TypeScript {
				t.Fatalf("discover_tools(%v) content = %d blocks, want the JSON and the declarations", tt.args, len(res.Content))
			}
			first := res.Content[0].(*mcp.TextContent).Text
			var js map[string]any
			if err := json.Unmarshal([]byte(first), &js); err != nil || js["typescript"] != nil {
				t.Errorf("discover_tools(%v) first block = %s, want the JSON answer without the declarations", tt.args, first)
			}
		})
	}
}

// TestDiscoverTypeScriptBudget: the declarations of a listing of many
// large tools stay within DeclarationsBudget tokens, and the tools left
// out are named, never dropped silently.
func TestDiscoverTypeScriptBudget(t *testing.T) {
	t.Parallel()
	var tools []string
	for i := range 40 {
		var props []string
		for j := range 12 {
			props = append(props, fmt.Sprintf(`"field_%d":{"type":"string","description":"The %d-th field of the record, which the server stores as it is given"}`, j, j))
		}
		tools = append(tools, fmt.Sprintf(`{"name":"tool_%02d","description":"Store a record of kind %d with its fields.","inputSchema":{"type":"object","properties":{%s}}}`, i, i, strings.Join(props, ",")))
	}
	cat := `{"domains":[{"name":"records","description":"Records","tools":[` + strings.Join(tools, ",") + `]}]}`
	cs := connect(t, New(Options{Live: testLive(t, cat, nil)}))
	res := call(t, cs, DiscoverTools, map[string]any{"domain": "records", "detail": "typescript"})
	var a DomainListing
	if err := json.Unmarshal([]byte(structured(t, res)), &a); err != nil {
		t.Fatal(err)
	}
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := enc.Count(a.TypeScript)
	declared := strings.Count(a.TypeScript, "  function ")
	t.Logf("%d of %d tools declared in %d tokens", declared, len(a.Tools), n)
	if n > DeclarationsBudget || declared == 0 {
		t.Errorf("declarations of %d tools = %d tokens, want at most %d", declared, n, DeclarationsBudget)
	}
	left := len(a.Tools) - declared
	if !strings.Contains(a.TypeScriptNote, fmt.Sprintf("%d of the %d tools listed are not declared", left, len(a.Tools))) ||
		!strings.Contains(a.TypeScriptNote, "records__tool_39") || !strings.Contains(a.TypeScript, fmt.Sprintf("// %d tools left out", left)) {
		t.Errorf("note on %d tools left out = %q; declarations end %q", left, a.TypeScriptNote, a.TypeScript[max(0, len(a.TypeScript)-200):])
	}
}

// TestTypeScriptIdentifiers: identifiers are chosen among every tool of
// the domain, not only those declared: of get-sum and get_sum, get-sum
// is get_sum_2 whether or not get_sum is in the answer.
func TestTypeScriptIdentifiers(t *testing.T) {
	t.Parallel()
	cat := `{"domains":[{"name":"calc","description":"Calculator","tools":[
	 {"name":"get_sum","description":"Add two numbers.","inputSchema":{"type":"object"}},
	 {"name":"get-sum","description":"Add two numbers, the old way.","inputSchema":{"type":"object"}}]}]}`
	cs := connect(t, New(Options{Live: testLive(t, cat, nil)}))
	res := call(t, cs, GetToolSchema, map[string]any{"tool_name": "calc__get-sum", "format": "typescript"})
	var a DeclarationsAnswer
	json.Unmarshal([]byte(structured(t, res)), &a)
	if len(a.Tools) != 1 || a.Tools[0].Call != "tools.calc.get_sum_2" || !strings.Contains(a.TypeScript, "function get_sum_2(") {
		t.Errorf("get_tool_schema of calc__get-sum = %+v, want it called tools.calc.get_sum_2", a)
	}
}

// TestTypeScriptArgumentsListed: in code mode, get_tool_schema's input
// schema offers format, with its values and description (and the go-sdk
// checks it); in other modes it is accepted, not listed. discover_tools'
// detail is accepted and not listed in any mode: in code mode a search's
// results carry their signatures.
func TestTypeScriptArgumentsListed(t *testing.T) {
	t.Parallel()
	t.Run("meta mode", func(t *testing.T) {
		cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil)}))
		list, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range list.Tools {
			if b, _ := json.Marshal(tool.InputSchema); strings.Contains(string(b), "typescript") {
				t.Errorf("%s's input schema in meta mode = %s, want no format or detail", tool.Name, b)
			}
		}
		res := call(t, cs, GetToolSchema, map[string]any{"tool_name": "weather__get_forecast", "format": "typescript"})
		if res.IsError || !strings.HasPrefix(text(res), "declare namespace tools.weather") {
			t.Errorf("get_tool_schema with format typescript in meta mode = %s", text(res))
		}
	})
	cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil), Expose: Exposure{Mode: ExposeCode}}))
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res := call(t, cs, GetToolSchema, map[string]any{"tool_name": "weather__get_forecast", "format": "ts"}); !res.IsError || !strings.Contains(text(res), "json, typescript") {
		t.Errorf("get_tool_schema with format ts in code mode = %s, want the values named", text(res))
	}
	want := map[string]string{GetToolSchema: "format"}
	for _, tool := range list.Tools {
		if b, _ := json.Marshal(tool.InputSchema); tool.Name == DiscoverTools && strings.Contains(string(b), `"detail"`) {
			t.Errorf("discover_tools' input schema in code mode = %s, want no detail", b)
		}
		arg, ok := want[tool.Name]
		if !ok {
			continue
		}
		delete(want, tool.Name)
		b, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Properties map[string]struct {
				Enum        []string `json:"enum"`
				Description string   `json:"description"`
			} `json:"properties"`
		}
		json.Unmarshal(b, &s)
		p := s.Properties[arg]
		if !strings.Contains(fmt.Sprint(p.Enum), "typescript") || p.Description == "" {
			t.Errorf("%s's %s = %+v, want typescript among its values and a description", tool.Name, arg, p)
		}
	}
	if len(want) > 0 {
		t.Errorf("tools/list lacks %v", want)
	}
}

// domainsExecutor runs the tools of its domains only, and says so, as
// the gateway does for the configured servers among a catalog's
// domains.
type domainsExecutor struct {
	fakeExecutor
	domains []string
}

func (d *domainsExecutor) Executable(domain string) bool { return slices.Contains(d.domains, domain) }

// TestDiscoverSignatures: in code mode, each result of a search that a
// program could call carries its signature, the call a program writes
// with its types on one line, named as the sandbox resolves it (of
// get-sum and get_sum, get-sum is get_sum_2); a tool of a domain the
// executor does not run (listed from a catalog) has none, nor does any
// without an executor; a listing, and a search in meta mode, carry
// none; with detail "typescript" the declarations replace them.
func TestDiscoverSignatures(t *testing.T) {
	t.Parallel()
	cat := `{"domains":[{"name":"calc","description":"Calculator","tools":[
	 {"name":"get_sum","description":"Add two numbers.","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}},
	 {"name":"get-sum","description":"Add two numbers, the old way.","inputSchema":{"type":"object","properties":{"a":{"type":"number"}}},
	  "outputSchema":{"type":"object","properties":{"sum":{"type":"number","description":"a plus b"}}}}]},
	 {"name":"abacus","description":"Abacus","tools":[
	 {"name":"add","description":"Add two numbers on an abacus.","inputSchema":{"type":"object","properties":{"a":{"type":"number"}}}}]}]}`
	signatures := func(t *testing.T, cs *mcp.ClientSession, args map[string]any) map[string]string {
		t.Helper()
		res := call(t, cs, DiscoverTools, args)
		if res.IsError {
			t.Fatalf("discover_tools(%v): %s", args, text(res))
		}
		var a struct {
			Results []ToolEntry `json:"results"`
			Tools   []ToolEntry `json:"tools"`
		}
		if err := json.Unmarshal([]byte(structured(t, res)), &a); err != nil {
			t.Fatalf("discover_tools(%v) = %s: %v", args, structured(t, res), err)
		}
		if strings.Contains(text(res), `\u003c`) {
			t.Errorf("discover_tools(%v) text = %s, want it unescaped", args, text(res))
		}
		out := map[string]string{}
		for _, e := range append(a.Results, a.Tools...) {
			out[e.Name] = e.Signature
		}
		return out
	}
	search := map[string]any{"query": "add two numbers", "search_mode": "keyword"}
	code := connect(t, New(Options{Live: testLive(t, cat, nil), Expose: Exposure{Mode: ExposeCode}, Executor: &domainsExecutor{domains: []string{"calc"}}}))
	got := signatures(t, code, search)
	want := map[string]string{
		"calc__get_sum": "tools.calc.get_sum(args: { a: number; b: number }): Promise<unknown>",
		"calc__get-sum": "tools.calc.get_sum_2(args?: { a?: number }): Promise<{ sum?: number }>",
		"abacus__add":   "",
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("code mode: discover_tools(%v) signature of %s = %q, want %q", search, name, got[name], w)
		}
	}
	for name, args := range map[string]map[string]any{
		"a listing":         {"domain": "calc"},
		"detail typescript": {"query": "add two numbers", "detail": "typescript"},
	} {
		for tool, sig := range signatures(t, code, args) {
			if sig != "" {
				t.Errorf("code mode, %s: %s has signature %q, want none", name, tool, sig)
			}
		}
	}
	for name, srv := range map[string]*Server{
		"meta mode":                 New(Options{Live: testLive(t, cat, nil), Executor: &fakeExecutor{}}),
		"code mode without servers": New(Options{Live: testLive(t, cat, nil), Expose: Exposure{Mode: ExposeCode}}),
	} {
		for tool, sig := range signatures(t, connect(t, srv), search) {
			if sig != "" {
				t.Errorf("%s: %s has signature %q, want none", name, tool, sig)
			}
		}
	}
}

// TestDiscoverSignaturesBudget: the signatures of a search of 100 large
// tools stay within the declarations' budget; those past it have none
// (get_tool_schema declares them).
func TestDiscoverSignaturesBudget(t *testing.T) {
	t.Parallel()
	var tools []string
	for i := range 100 {
		var props []string
		for j := range 8 {
			props = append(props, fmt.Sprintf(`"record_field_%d":{"type":"string"}`, j))
		}
		tools = append(tools, fmt.Sprintf(`{"name":"store_%02d","description":"Store a record of kind %d with its fields.","inputSchema":{"type":"object","properties":{%s}}}`, i, i, strings.Join(props, ",")))
	}
	cat := `{"domains":[{"name":"records","description":"Records","tools":[` + strings.Join(tools, ",") + `]}]}`
	cs := connect(t, New(Options{Live: testLive(t, cat, nil), Expose: Exposure{Mode: ExposeCode}, Executor: &fakeExecutor{}}))
	res := call(t, cs, DiscoverTools, map[string]any{"query": "store a record", "search_mode": "keyword", "limit": 100})
	var a SearchAnswer
	if err := json.Unmarshal([]byte(structured(t, res)), &a); err != nil {
		t.Fatal(err)
	}
	total, signed := 0, 0
	for _, e := range a.Results {
		if e.Signature != "" {
			total += len(e.Signature)
			signed++
		}
	}
	t.Logf("%d of %d results signed, %d bytes", signed, len(a.Results), total)
	if len(a.Results) != 100 || signed == 0 || signed == len(a.Results) || total > declarationsBudgetBytes {
		t.Errorf("%d of %d results signed in %d bytes, want some but not all, within %d", signed, len(a.Results), total, declarationsBudgetBytes)
	}
}
