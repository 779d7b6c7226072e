package server

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/server/callers"
)

// The server's instructions: one line on what the catalog covers (its
// largest domains), then how to use what the exposure mode lists, in
// about 80 tokens whatever the catalog's size. They are written when a
// client initializes (or asks server/discover), from the catalog then:
// before it has loaded, from Options.Domains, which the command fills
// from the same sources, so that a client gets the same text either way.

// DomainSize is a domain and the number of its enabled tools (0 when they
// are not known yet: an upstream server that has not listed them).
type DomainSize struct {
	Name  string
	Tools int
}

// maxNamedDomains is the most domains the instructions name, largest
// first.
const maxNamedDomains = 8

// Instructions returns the instructions of a server in meta mode over
// cat.
func Instructions(cat *index.Catalog) string {
	return instructions(domainSizes(cat, nil), ExposeMeta)
}

// InstructionsFor returns the instructions a client initializing gets
// from a server over cat exposed in mode, with an operator's extra text
// (Options.Instructions): what doctor shows.
func InstructionsFor(cat *index.Catalog, mode, extra string) string {
	out := instructions(domainSizes(cat, nil), mode)
	if extra = strings.TrimSpace(extra); extra != "" {
		out += "\n\n" + extra
	}
	return out
}

// instructionsNow returns the instructions for a client initializing now.
func (s *Server) instructionsNow(who *callers.Caller) string {
	s.mu.Lock()
	mode := s.expose.Mode
	s.mu.Unlock()
	out := instructions(domainSizes(s.catalogFor(who), s.domainsFor(who)), mode)
	if s.extra != "" {
		out += "\n\n" + s.extra
	}
	return out
}

// MaxExtraInstructions is the most characters of instructions an operator
// may add (Options.Instructions): every client reads them before its
// first request.
const MaxExtraInstructions = 2000

// instructionsMiddleware writes the instructions into initialize's and
// server/discover's answers.
func (s *Server) instructionsMiddleware(v *view) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			switch r := res.(type) {
			case *mcp.InitializeResult:
				if r != nil {
					r.Instructions = s.instructionsNow(v.who)
				}
			case *mcp.DiscoverResult:
				if r != nil {
					r.Instructions = s.instructionsNow(v.who)
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
		out = append(out, DomainSize{d.Name, n})
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
	listedWorkflow = "Tools in tools/list can be called by name. For others: 1) discover_tools with a query describing the task; 2) get_tool_schema for the tool you pick; 3) execute_tool with its arguments."
)

func instructions(domains []DomainSize, mode string) string {
	var b strings.Builder
	b.WriteString(covers(domains))
	b.WriteByte(' ')
	switch mode {
	case ExposeEager:
		b.WriteString("Every tool is listed: call it by name. discover_tools with a query finds the right one for a task.")
	case ExposeCompact:
		b.WriteString("Every tool is listed with a summary and a short schema (its required arguments, optional ones where room is left): call it by name. get_tool_schema gives a tool's full schema, description and examples; discover_tools with a query finds the right one for a task.")
	case ExposeCore, ExposeAuto:
		b.WriteString(listedWorkflow)
	case ExposeDynamic:
		b.WriteString(metaWorkflow + " enable_domain lists a domain's tools directly.")
	default:
		b.WriteString(metaWorkflow)
	}
	return b.String()
}

// covers says in one line what the domains cover: "61 tools in 3
// domains: github, slack and jira.", or with more than maxNamedDomains
// "302 tools in 26 domains, the largest: github, slack, ...".
func covers(domains []DomainSize) string {
	if len(domains) == 0 {
		return "This server finds and runs tools; it has none yet."
	}
	total := 0
	names := make([]string, 0, min(len(domains), maxNamedDomains))
	for i, d := range domains {
		total += d.Tools
		if i < maxNamedDomains {
			names = append(names, d.Name)
		}
	}
	var b strings.Builder
	if total > 0 {
		fmt.Fprintf(&b, "%s in %s", plural(total, "tool"), plural(len(domains), "domain"))
	} else {
		fmt.Fprintf(&b, "Tools in %s", plural(len(domains), "domain"))
	}
	switch {
	case len(names) < len(domains):
		fmt.Fprintf(&b, ", the largest: %s.", strings.Join(names, ", "))
	case len(names) == 1:
		fmt.Fprintf(&b, ": %s.", names[0])
	default:
		fmt.Fprintf(&b, ": %s and %s.", strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
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
