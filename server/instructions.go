package server

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/server/callers"
)

// The server's instructions: what the catalog covers (each domain with
// what it is for, or with many domains the largest), then how to use
// what the exposure mode lists, then the upstream servers' own
// instructions. They are written when a client initializes (or asks
// server/discover), from the catalog then; at a server's start the
// first initialize waits for the index to take in the upstream servers'
// tools, within Options.InitializeWait (startup.waitGreeting), and a
// client that comes before that gets them from Options.Domains, which
// the command fills from the same sources.

// DomainSize is a domain and the number of its enabled tools (0 when they
// are not known yet: an upstream server that has not listed them).
type DomainSize struct {
	Name  string
	Tools int
	// Purpose, when set, says what the domain is for (KnownDomains):
	// the instructions give it until the catalog has loaded, and for a
	// domain it does not hold.
	Purpose string
}

// maxNamedDomains is the most domains the instructions name, largest
// first; up to this many, each on its line with what it is for.
const maxNamedDomains = 8

// Instructions returns the instructions of a server in meta mode over
// cat.
func Instructions(cat *index.Catalog) string {
	return InstructionsFor(cat, ExposeMeta, "", Selves{})
}

// InstructionsFor returns the instructions a client initializing gets
// from a server over cat exposed in mode, with an operator's extra text
// (Options.Instructions), its upstream servers saying s of themselves
// (SelvesOf the gateway), and known naming the configured domains cat
// does not hold (Options.Domains): what doctor shows.
func InstructionsFor(cat *index.Catalog, mode Mode, extra string, s Selves, known ...DomainSize) string {
	return compose(cat, known, mode, extra, s)
}

// compose writes the instructions over cat, with known (Options.Domains)
// for the domains cat does not hold yet.
func compose(cat *index.Catalog, known []DomainSize, mode Mode, extra string, s Selves) string {
	domains := domainSizes(cat, known)
	purposes := map[string]string{}
	if len(domains) <= maxNamedDomains {
		for _, d := range domains {
			if dom := cat.Domain(d.Name); dom != nil {
				purposes[d.Name] = purposeOf(textOf(dom, s))
			} else {
				purposes[d.Name] = d.Purpose
			}
		}
	}
	out := instructions(domains, purposes, mode)
	by := map[string]string{}
	for d, text := range s.Instructions {
		// Only the servers whose tools this catalog (a caller's view)
		// holds.
		if cat.Domain(d) != nil {
			by[d] = text
		}
	}
	out += relayedInstructions(by)
	if extra = strings.TrimSpace(extra); extra != "" {
		out += "\n\n" + extra
	}
	return out
}

// greeting writes the instructions a client gets when it initializes:
// made from what its caller sees now, the upstream servers' own, and the
// operator's.
type greeting struct {
	scope *callerScope
	exec  Executor // asked what the upstream servers say of themselves
	expo  *exposure
	start *startup // the first initialize waits for the upstreams' tools
	extra string   // Options.Instructions
}

// now returns the instructions for a client of who initializing now.
func (g *greeting) now(who *callers.Caller) string {
	return compose(g.scope.catalogFor(who), g.scope.domainsFor(who), g.expo.mode(), g.extra, SelvesOf(g.exec))
}

// UpstreamInstructions is an Executor that knows the instructions each
// upstream server gave (the gateway): the server relays them, bounded.
type UpstreamInstructions interface {
	Instructions() map[string]string
}

// Bounds of the upstream servers' instructions relayed: each server's
// and all of them together, in characters. A server's instructions are
// how it tells a client how to use it ("call list_allowed_directories
// first"); behind toolscout a client no longer sees them unless relayed.
const (
	maxRelayedEach  = 400
	maxRelayedTotal = 1600
)

// relayedInstructions writes the upstream servers' own instructions, by
// domain in name order, each on one line and cut at maxRelayedEach
// characters, while they fit in maxRelayedTotal; "" without any.
// Instructions that match a tool-poisoning pattern (index.ScanTool:
// hidden directives, exfiltration wording) are left out, as a poisoned
// tool description is flagged: they would reach every client first.
func relayedInstructions(by map[string]string) string {
	var b strings.Builder
	for _, d := range slices.Sorted(maps.Keys(by)) {
		var words []string
		for _, l := range strings.Split(by[d], "\n") {
			// Markdown headings and quotes lose their marks on one line.
			words = append(words, strings.Fields(strings.TrimLeft(strings.TrimSpace(l), "#> "))...)
		}
		line := strings.Join(words, " ")
		if line == "" || len(index.ScanTool("", line)) > 0 {
			continue
		}
		line = cutAtWord(line, maxRelayedEach)
		entry := "\n- " + d + ": " + line
		if b.Len()+len(entry) > maxRelayedTotal {
			break
		}
		b.WriteString(entry)
	}
	if b.Len() == 0 {
		return ""
	}
	return "\n\nWhat the upstream servers say of themselves:" + b.String()
}

// cutAtWord cuts s to at most n bytes at a word boundary, marking the cut
// with "…".
func cutAtWord(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := s[:n]
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	for !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}

// MaxExtraInstructions is the most characters of instructions an operator
// may add (Options.Instructions): every client reads them before its
// first request.
const MaxExtraInstructions = 2000

// middleware writes the instructions into initialize's and
// server/discover's answers.
func (g *greeting) middleware(v *view) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			switch r := res.(type) {
			case *mcp.InitializeResult:
				if r != nil {
					g.start.waitGreeting(ctx)
					r.Instructions = g.now(v.who)
				}
			case *mcp.DiscoverResult:
				if r != nil {
					g.start.waitGreeting(ctx)
					r.Instructions = g.now(v.who)
				}
			}
			return res, nil
		}
	}
}

// domainSizes returns the domains of cat with their enabled tools and
// those of known that cat does not have (configured servers that have
// not listed their tools), largest first, then by name.
func domainSizes(cat *index.Catalog, known []DomainSize) []DomainSize {
	var out []DomainSize
	seen := map[string]bool{}
	for _, d := range cat.Domains() {
		n := 0
		for _, t := range d.Tools {
			if !t.Disabled {
				n++
			}
		}
		out = append(out, DomainSize{Name: d.Name, Tools: n})
		seen[d.Name] = true
	}
	for _, d := range known {
		if !seen[d.Name] {
			out = append(out, d)
			seen[d.Name] = true
		}
	}
	slices.SortStableFunc(out, func(a, b DomainSize) int {
		if a.Tools != b.Tools {
			return b.Tools - a.Tools
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// Workflows: how the meta-tools are used, and how tools listed directly
// are.
const (
	metaWorkflow   = "Workflow: 1) discover_tools with a query describing the task; 2) get_tool_schema for the tool you pick; 3) execute_tool with its arguments. Skip discovery for tools you have already seen."
	codeWorkflow   = "Workflow: 1) discover_tools with a query for the task: each result has its call signature; 2) get_tool_schema with format \"typescript\" for one without; 3) run_code: one JavaScript program that calls the tools and returns only what you need."
	listedWorkflow = "Tools in tools/list can be called by name. For others: 1) discover_tools with a query describing the task; 2) get_tool_schema for the tool you pick; 3) execute_tool with its arguments."
)

func instructions(domains []DomainSize, purposes map[string]string, mode Mode) string {
	var b strings.Builder
	b.WriteString(covers(domains, purposes))
	if strings.Contains(b.String(), "\n") {
		b.WriteByte('\n')
	} else {
		b.WriteByte(' ')
	}
	b.WriteString(policyOf(mode).workflow)
	return b.String()
}

// covers says what the domains cover. Up to maxNamedDomains, each on its
// line with what it is for (purposes): "37 tools in 3 domains:\n-
// memory (9 tools): tools on the knowledge graph such as
// create_entities, …"; with more, in one line, the largest with their
// sizes: "302 tools in 26 domains, the largest: github (41 tools),
// slack (20 tools), …; discover_tools without arguments lists them
// all."
func covers(domains []DomainSize, purposes map[string]string) string {
	if len(domains) == 0 {
		return "This server finds and runs tools; it has none yet."
	}
	total := 0
	for _, d := range domains {
		total += d.Tools
	}
	var b strings.Builder
	if total > 0 {
		fmt.Fprintf(&b, "%s in %s", plural(total, "tool"), plural(len(domains), "domain"))
	} else {
		fmt.Fprintf(&b, "Tools in %s", plural(len(domains), "domain"))
	}
	size := func(d DomainSize) string {
		if d.Tools == 0 {
			return d.Name + " (tools not listed yet)"
		}
		return d.Name + " (" + plural(d.Tools, "tool") + ")"
	}
	if len(domains) > maxNamedDomains {
		names := make([]string, 0, maxNamedDomains)
		for _, d := range domains[:maxNamedDomains] {
			names = append(names, size(d))
		}
		fmt.Fprintf(&b, ", the largest: %s; discover_tools without arguments lists them all.", strings.Join(names, ", "))
		return b.String()
	}
	b.WriteByte(':')
	for _, d := range domains {
		b.WriteString("\n- " + size(d))
		if p := purposes[d.Name]; p != "" {
			b.WriteString(": " + p)
		}
	}
	return b.String()
}

// plural is n and noun, in the plural unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
