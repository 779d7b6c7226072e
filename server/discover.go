package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server/callers"
	"github.com/toolscout/toolscout/server/relay"

	"github.com/toolscout/toolscout/server/arguments"
	"github.com/toolscout/toolscout/server/gateway"
)

// DiscoverArgs are discover_tools' arguments.
type DiscoverArgs struct {
	Domain     string `json:"domain,omitempty"`
	Group      string `json:"group,omitempty"`
	Query      string `json:"query,omitempty"`
	SearchMode string `json:"search_mode,omitempty"`
	Limit      int    `json:"limit,omitempty"`
	// Cursor continues a listing (domains, or a domain's tools) where the
	// previous page's next_cursor says.
	Cursor string `json:"cursor,omitempty"`
	// IncludeDisabled lists and ranks disabled tools too, marked.
	IncludeDisabled bool `json:"include_disabled,omitempty"`
	// Detail is "summary" (the default) or "typescript": a search's and
	// a domain listing's answer also declares the tools it lists, for
	// code mode (declarations.go).
	Detail string `json:"detail,omitempty"`
}

// PageSize is the number of entries a listing returns without a limit:
// the domains of a 1,000-server gateway, or of a domain of 1,000 tools,
// come a page at a time.
const PageSize = 50

// DomainEntry is one domain of the table of contents.
type DomainEntry struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// ToolCount counts the domain's enabled tools; DisabledTools the
	// others.
	ToolCount     int      `json:"tool_count"`
	DisabledTools int      `json:"disabled_tools,omitempty"`
	Groups        []string `json:"groups,omitempty"`
	// Enabled, in dynamic mode, says that the domain's tools are in
	// this client's tools/list; EnabledGroups names the groups that are,
	// when the domain is not whole.
	Enabled       bool     `json:"enabled,omitempty"`
	EnabledGroups []string `json:"enabled_groups,omitempty"`
	// Status says why a configured domain's server is not connected:
	// "unavailable: why" or "connecting; its tools are not known yet"
	// for one without tools; for one whose tools are
	// those it listed last (on this run or, at start, on the last one),
	// "connecting" or "unavailable: why", then "; tools as it last
	// listed them". Empty for a domain that answers.
	Status string `json:"status,omitempty"`
}

// Contents is discover_tools' answer without arguments: a page of the
// domains.
type Contents struct {
	Domains      []DomainEntry `json:"domains"`
	TotalDomains int           `json:"total_domains"`
	TotalTools   int           `json:"total_tools"`
	// NextCursor, when set, is the cursor of the next page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// ToolEntry is one tool of a listing or a ranked answer.
type ToolEntry struct {
	Name    string `json:"name"`
	Domain  string `json:"domain,omitempty"`
	Group   string `json:"group,omitempty"`
	Summary string `json:"summary,omitempty"`
	// Step, in the answer to a request of several steps, is the 1-based
	// step of SearchAnswer.Steps the tool answers best.
	Step int `json:"step,omitempty"`
	// Warnings are the tool's poisoning flags: read its full description
	// with care before using it.
	Warnings []string `json:"warnings,omitempty"`
	// Deprecated is true, or says what to use instead, for a deprecated
	// tool.
	Deprecated index.Deprecation `json:"deprecated,omitempty"`
	// Disabled marks a disabled tool (listed with include_disabled).
	Disabled bool `json:"disabled,omitempty"`
	// Held, for a tool whose new definition awaits toolscout approve,
	// says that it does not run until then (get_tool_schema's held says
	// why at length).
	Held string `json:"held,omitempty"`
	// Confidence, on each result of a search, estimates from 0 to 1 the
	// chance that the tool is one the request needs, never above the
	// result before it (search.Result.Confidence); absent when the mode
	// and embedder have no confidence model.
	Confidence *float64 `json:"confidence,omitempty"`
	// Signature, on a search's results in code mode, is how a program
	// calls the tool, with the TypeScript types of its arguments and
	// result on one line (declarations.go, signListed).
	Signature string `json:"signature,omitempty"`
}

// DomainListing is discover_tools' answer for a domain (and group).
type DomainListing struct {
	Domain string `json:"domain"`
	Group  string `json:"group,omitempty"`
	// Enabled, in dynamic mode, says that these tools are in this
	// client's tools/list.
	Enabled bool        `json:"enabled,omitempty"`
	Tools   []ToolEntry `json:"tools"`
	// Total is the number of tools in the domain (and group), when the
	// list is a page of them.
	Total int `json:"total,omitempty"`
	// NextCursor, when set, is the cursor of the next page.
	NextCursor string `json:"next_cursor,omitempty"`
	// TypeScript, with detail "typescript", declares the tools listed,
	// and TypeScriptNote names those it leaves out to stay within
	// DeclarationsBudget.
	TypeScript     string `json:"typescript,omitempty"`
	TypeScriptNote string `json:"typescript_note,omitempty"`
}

// SearchAnswer is discover_tools' answer for a query.
type SearchAnswer struct {
	Query      string `json:"query"`
	SearchMode string `json:"search_mode"`
	Embedder   string `json:"embedder"`
	Notice     string `json:"notice,omitempty"`
	// LowConfidence says that no tool may fit the request well: its
	// confidence is under the threshold of its model, set so that about
	// one request in ten whose tool is in the catalog is flagged
	// (search/confidence_models.json). Rephrase, or tell the user.
	LowConfidence bool `json:"low_confidence,omitempty"`
	// Steps are the steps a request of several was split into.
	Steps   []string    `json:"steps,omitempty"`
	Results []ToolEntry `json:"results"`
	// TypeScript and TypeScriptNote are as in DomainListing.
	TypeScript     string `json:"typescript,omitempty"`
	TypeScriptNote string `json:"typescript_note,omitempty"`
}

// add registers the meta-tools on v.
func (mt *metaTools) add(v *view) {
	srv := v.mcp
	srv.AddReceivingMiddleware(relay.Middleware) // large execute_tool results go through raw
	ts := mt.schemas
	decoded := ts.decoded
	// Only the meta-tools go through the go-sdk's schema check: tools
	// listed directly are checked by arguments.Validate, in plain words.
	srv.AddReceivingMiddleware(arguments.PlainErrors(func(name string) map[string]any { return decoded[name] }))
	mcp.AddTool(srv, &mcp.Tool{
		Name:        DiscoverTools,
		Description: "Find tools. No arguments: list domains. domain (and group): list its tools. query: rank tools for a task.",
		InputSchema: ts.input[DiscoverTools],
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(false)},
	}, shortAnswers(mt, func(ctx context.Context, req *mcp.CallToolRequest, args DiscoverArgs) (*mcp.CallToolResult, any, error) {
		res, out, err := mt.discover(ctx, v, args)
		if err != nil {
			return res, out, err
		}
		if a, ok := out.(SearchAnswer); ok {
			mt.feedback.noteAnswer(req, a)
		}
		res, err = withDeclarations(res, out, mt.structuredClients.reads(req))
		return res, out, err
	}))
	mcp.AddTool(srv, &mcp.Tool{
		Name:        GetToolSchema,
		Description: "Full description and input schema of tool_name or each of tool_names.",
		InputSchema: ts.input[GetToolSchema],
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(false)},
	}, shortAnswers(mt, mt.getSchema))
	if mt.code != nil {
		mt.addRunCode(v)
		return
	}
	mcp.AddTool(srv, &mcp.Tool{
		Name:        ExecuteTool,
		Description: "Run a tool with arguments matching its schema.",
		InputSchema: ts.input[ExecuteTool],
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(true), OpenWorldHint: boolPtr(true)},
	}, mt.execute)
}

// UnavailableReporter is implemented by executors whose domains can be
// configured but down (the gateway): discover_tools lists such domains
// with their status instead of hiding them.
type UnavailableReporter interface {
	// Unavailable returns, per configured domain without tools, why.
	Unavailable() map[string]string
}

func (c *callerScope) unavailable() map[string]string {
	if r, ok := ability[UnavailableReporter](c.exec); ok {
		return r.Unavailable()
	}
	return nil
}

// discover is discover_tools: a search with a query, else the domains
// (no domain), else a domain's (or group's) tools, each as v's caller
// sees the catalog.
func (mt *metaTools) discover(ctx context.Context, v *view, args DiscoverArgs) (*mcp.CallToolResult, any, error) {
	mt.start.waitReady(ctx)
	if err := discoverDetail(args); err != nil {
		return nil, nil, err
	}
	cat := mt.scope.catalogFor(v.who)
	down := mt.scope.unavailableFor(v.who)
	if why, ok := down[args.Domain]; ok && cat.Domain(args.Domain) == nil {
		return nil, nil, fmt.Errorf("domain %q has no tools yet: %s. Other domains work", args.Domain, serverDown(args.Domain, why))
	}
	if args.Query != "" {
		out, err := mt.discoverQuery(ctx, v.who, cat, down, args)
		if err != nil {
			return nil, nil, err
		}
		return nil, out, nil
	}
	if args.SearchMode != "" {
		return nil, nil, errors.New("search_mode needs a query: pass query with the task in words")
	}
	size := PageSize
	if args.Limit > 0 {
		size = args.Limit
	}
	enabled := mt.expo.enabledSet(v)
	if args.Domain == "" && args.Group == "" {
		out, err := domainContents(cat, down, enabled, args.Cursor, size)
		if err != nil {
			return nil, nil, err
		}
		return nil, out, nil
	}
	out, err := domainTools(cat, enabled, args, size, mt.status)
	if err != nil {
		return nil, nil, err
	}
	if args.Detail == DetailTypeScript {
		out.TypeScript, out.TypeScriptNote = mt.decl.declareListed(cat, entryTools(cat, out.Tools))
	}
	return nil, out, nil
}

// discoverQuery is discover_tools with a query: the tools ranked for it
// among those who sees in cat (down: its servers without tools).
func (mt *metaTools) discoverQuery(ctx context.Context, who *callers.Caller, cat *index.Catalog, down map[string]string, args DiscoverArgs) (SearchAnswer, error) {
	if args.Cursor != "" {
		return SearchAnswer{}, errors.New("cursor pages a listing, not a query: use limit (up to 100) to get more results")
	}
	if who != nil {
		// The index knows every tool: the scope is checked against
		// what the caller sees, so that a hidden domain is unknown.
		if err := search.CheckScope(cat, args.Domain, args.Group); err != nil {
			return SearchAnswer{}, err
		}
	}
	sr := search.Request{Query: args.Query, Mode: search.Mode(args.SearchMode), Domain: args.Domain, Group: args.Group, Limit: args.Limit}
	full := mt.eng.Catalog()
	if !args.IncludeDisabled {
		sr.Exclude = mt.disabled.of(full)
	}
	if hidden := mt.scope.hiddenFrom(who, full); len(hidden) > 0 {
		// Left out before the top k is cut: k results still.
		sr.Exclude = append(slices.Clip(sr.Exclude), hidden...)
	}
	resp, err := mt.feedback.search(ctx, mt.eng, sr)
	if ctx.Err() == nil {
		mt.failures.done(err)
	}
	if err != nil {
		return SearchAnswer{}, err
	}
	out := searchAnswer(resp, cat, down, mt.status)
	switch {
	case args.Detail == DetailTypeScript:
		out.TypeScript, out.TypeScriptNote = mt.decl.declareListed(cat, entryTools(mt.eng.Catalog(), out.Results))
	case mt.code != nil:
		mt.decl.signListed(cat, mt.eng.Catalog(), out.Results)
	}
	return out, nil
}

// searchAnswer is discover_tools' answer of resp, ranked in cat (down:
// the caller's servers without tools, named when cat has no tools).
func searchAnswer(resp *search.Response, cat *index.Catalog, down map[string]string, status toolStatus) SearchAnswer {
	out := SearchAnswer{Query: resp.Query, SearchMode: string(resp.Mode), Embedder: resp.Embedder, Notice: resp.Notice, Steps: resp.Steps, Results: []ToolEntry{}}
	if len(resp.Results) == 0 && cat.Len() == 0 {
		if why := serversWithoutTools(down); why != "" && out.Notice != "" {
			out.Notice += "; " + why
		} else if why != "" {
			out.Notice = why
		}
	}
	for _, r := range resp.Results {
		e := status.entry(r.Tool)
		e.Domain, e.Step = r.Tool.Domain, r.Step
		if resp.Confidence != nil {
			v := math.Round(r.Confidence*100) / 100
			e.Confidence = &v
		}
		out.Results = append(out.Results, e)
	}
	if c := resp.Confidence; c != nil && len(out.Results) > 0 {
		out.LowConfidence = c.Low
	}
	return out
}

// domainContents is discover_tools without arguments: the page of the
// domains of cat and of the servers without tools (down) that starts at
// cursor, marked as enabled says (dynamic mode).
func domainContents(cat *index.Catalog, down map[string]string, enabled map[string]bool, cursor string, size int) (Contents, error) {
	all := make([]DomainEntry, 0, len(cat.Domains())+len(down))
	total := 0
	for _, d := range cat.Domains() {
		e := domainEntry(d, enabled)
		if why, ok := down[d.Name]; ok {
			e.Status = knownStatus(why)
		}
		total += e.ToolCount
		all = append(all, e)
	}
	for name, why := range down {
		if cat.Domain(name) == nil {
			st := "unavailable: " + why
			if why == gateway.StillConnecting {
				st = "connecting; its tools are not known yet"
			}
			all = append(all, DomainEntry{Name: name, Status: st, Enabled: enabled[name]})
		}
	}
	slices.SortFunc(all, func(a, b DomainEntry) int { return strings.Compare(a.Name, b.Name) })
	from, to, next, err := page(cursor, len(all), size)
	if err != nil {
		return Contents{}, err
	}
	return Contents{Domains: all[from:to], TotalDomains: len(all), TotalTools: total, NextCursor: next}, nil
}

// domainEntry is d's entry in the domains' listing: its tools counted,
// and its groups that enabled enables when it does not enable d whole.
func domainEntry(d *index.Domain, enabled map[string]bool) DomainEntry {
	e := DomainEntry{Name: d.Name, Description: d.Description, Groups: d.Groups, Enabled: enabled[d.Name]}
	for _, t := range d.Tools {
		if t.Disabled {
			e.DisabledTools++
		} else {
			e.ToolCount++
		}
	}
	if !e.Enabled {
		for _, g := range d.Groups {
			if enabled[d.Name+"/"+g] {
				e.EnabledGroups = append(e.EnabledGroups, g)
			}
		}
	}
	return e
}

// domainTools is discover_tools with a domain (and group): the page of
// its tools that starts at args.Cursor, marked as enabled says.
func domainTools(cat *index.Catalog, enabled map[string]bool, args DiscoverArgs, size int, status toolStatus) (DomainListing, error) {
	if err := search.CheckScope(cat, args.Domain, args.Group); err != nil {
		return DomainListing{}, err
	}
	d := cat.Domain(args.Domain)
	var tools []ToolEntry
	for _, t := range d.Tools {
		if args.Group != "" && t.Group != args.Group || t.Disabled && !args.IncludeDisabled {
			continue
		}
		tools = append(tools, status.entry(t))
	}
	from, to, next, err := page(args.Cursor, len(tools), size)
	if err != nil {
		return DomainListing{}, err
	}
	out := DomainListing{Domain: d.Name, Group: args.Group, Tools: append([]ToolEntry{}, tools[from:to]...), NextCursor: next,
		Enabled: enabled[d.Name] || args.Group != "" && enabled[d.Name+"/"+args.Group]}
	if to-from < len(tools) {
		out.Total = len(tools)
	}
	return out, nil
}

// serversWithoutTools says, for an answer from a catalog without tools,
// which configured servers have not listed theirs (down: Unavailable),
// and why: "" when none.
func serversWithoutTools(down map[string]string) string {
	var connecting, unavailable []string
	for _, name := range slices.Sorted(maps.Keys(down)) {
		if why := down[name]; why == gateway.StillConnecting {
			connecting = append(connecting, name)
		} else {
			unavailable = append(unavailable, name+" ("+why+")")
		}
	}
	var parts []string
	if len(connecting) > 0 {
		parts = append(parts, "upstream servers still connecting: "+strings.Join(connecting, ", ")+"; try again in a moment")
	}
	if len(unavailable) > 0 {
		parts = append(parts, "upstream servers unavailable: "+strings.Join(unavailable, ", "))
	}
	return strings.Join(parts, "; ")
}

// knownStatus is the status of a domain listed with the tools its
// server listed last, the server not connected for why.
func knownStatus(why string) string {
	if why == gateway.StillConnecting {
		return "connecting; tools as it last listed them"
	}
	return "unavailable: " + why + "; tools as it last listed them"
}

// page returns the bounds of the page of n entries that cursor (an offset
// a previous page gave, "" for the first) starts, and the next cursor.
func page(cursor string, n, size int) (from, to int, next string, err error) {
	if cursor != "" {
		from, err = strconv.Atoi(cursor)
		if err != nil || from < 0 || from >= max(n, 1) {
			return 0, 0, "", fmt.Errorf("cursor %s is not one this listing gave: pass the next_cursor of the previous page, or no cursor for the first", search.Quote(cursor, 40))
		}
	}
	to = min(from+size, n)
	if to < n {
		next = strconv.Itoa(to)
	}
	return from, to, next, nil
}

// heldEntryNote is a held tool's mark in listings and ranked answers:
// short, since get_tool_schema's held says why at length.
func heldEntryNote(t *index.Tool) string {
	return fmt.Sprintf("awaits approval of its new definition (toolscout approve %s): it does not run until then", t.QualifiedName)
}

// disabledNames keeps the qualified names of a catalog's disabled tools,
// which searches leave out: found once per catalog.
type disabledNames struct {
	mu    sync.Mutex
	cat   *index.Catalog
	names []string
}

// of returns the names of cat's disabled tools.
func (d *disabledNames) of(cat *index.Catalog) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cat != cat {
		var names []string
		for _, t := range cat.Tools() {
			if t.Disabled {
				names = append(names, t.QualifiedName)
			}
		}
		d.cat, d.names = cat, names
	}
	return d.names
}

// eagerFallback lists every tool directly (exposure.fallBackToEager).
type eagerFallback interface {
	fallBackToEager(reason string) bool
}

var _ eagerFallback = (*exposure)(nil)

// searchFailures counts the searches that failed in a row (not bad
// requests) and, with Options.Fallback "eager", falls back after
// FallbackAfter of them.
type searchFailures struct {
	fallback string        // Options.Fallback
	expo     eagerFallback // falls back
	mu       sync.Mutex
	n        int
}

// done counts a search outcome toward the fallback.
func (f *searchFailures) done(err error) {
	if errors.Is(err, search.ErrInvalidRequest) {
		return // says nothing about the index
	}
	f.mu.Lock()
	if err == nil {
		f.n = 0
		f.mu.Unlock()
		return
	}
	f.n++
	n := f.n
	f.mu.Unlock()
	if f.fallback == string(ExposeEager) && n >= FallbackAfter {
		f.expo.fallBackToEager(fmt.Sprintf("%d searches failed in a row, the last: %v", n, err))
	}
}
