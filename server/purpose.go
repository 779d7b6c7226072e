package server

import (
	"slices"
	"strings"
	"unicode"

	"github.com/toolscout/toolscout/index"
	txt "github.com/toolscout/toolscout/internal/text"
	"github.com/toolscout/toolscout/server/gateway"
)

// What each domain is for, in one line of the instructions that an
// agent can act on before its first search: "memory (9 tools): tools on
// the knowledge graph such as create_entities, add_observations,
// delete_entities". The line is written from data: the description its
// author gave (a catalog file's, or the config's for a server), else
// the server's own name for itself when it says more than the domain's
// name, and the phrase most of its tools' summaries share; then the
// first tools it lists, one per leading verb, which get_tool_schema and
// execute_tool take as they are. A server's own instructions follow the
// workflow whole (relayedInstructions).

// Selves is what the instructions read of the upstream servers, keyed
// by domain: the description each one's config gives ("" when none:
// every upstream domain has an entry, so that a description the gateway
// derived for ranking is not taken for its author's), and the title each
// server gives itself at initialize.
type Selves struct {
	Descriptions map[string]string
	Titles       map[string]string
	// Instructions are the servers' own instructions, relayed after the
	// workflow.
	Instructions map[string]string
}

// upstreamSelves is an Executor that knows what its servers say of
// themselves (the gateway).
type upstreamSelves interface {
	UpstreamInstructions
	ConfiguredDescriptions() map[string]string
	Titles() map[string]string
}

// SelvesOf returns what exec (an Executor, or nil) says of its upstream
// servers: nothing unless it is a gateway.
func SelvesOf(exec any) Selves {
	var s Selves
	if r, ok := ability[UpstreamInstructions](exec); ok {
		s.Instructions = r.Instructions()
	}
	if r, ok := ability[upstreamSelves](exec); ok {
		s.Descriptions, s.Titles = r.ConfiguredDescriptions(), r.Titles()
	}
	return s
}

// maxPurposeLead bounds the sentence a purpose starts with, in bytes;
// maxPurposeTools the tools it names.
const (
	maxPurposeLead  = 120
	maxPurposeTools = 3
)

// maxPhraseTools is the most tools of a domain whose summaries
// sharedPhrase reads.
const maxPhraseTools = 500

// domainText is what a domain's purpose is written from.
type domainText struct {
	name        string
	description string // its author's
	title       string // the server's own name for itself
	tools       []toolText
}

// toolText is an enabled tool of a domain, in listing order.
type toolText struct {
	name, summary string
	// deprecated and flagged (tool-poisoning warnings) tools are not
	// given as examples.
	deprecated, flagged bool
}

// textOf returns what purposeOf reads of dom: its description unless the
// domain is an upstream server's (then the config's, from s).
func textOf(dom *index.Domain, s Selves) domainText {
	d := domainText{name: dom.Name, description: dom.Description, title: s.Titles[dom.Name]}
	if desc, upstream := s.Descriptions[dom.Name]; upstream {
		d.description = desc
	}
	for _, t := range dom.Tools {
		if !t.Disabled {
			d.tools = append(d.tools, toolText{name: t.Name, summary: t.Summary, deprecated: t.Deprecated != "", flagged: len(t.Warnings()) > 0})
		}
	}
	return d
}

// purposeOf says in one line what d is for ("" when nothing is known
// of it).
func purposeOf(d domainText) string {
	lead := firstSentence(d.description)
	phrase := ""
	if lead == "" {
		lead = ownTitle(d.name, d.title)
		phrase = sharedPhrase(d.tools)
	}
	if lead != "" {
		lead = cutAtWord(lead, maxPurposeLead)
	}
	names := exampleTools(d.tools, maxPurposeTools)
	var tools string
	switch {
	case len(names) > 0 && phrase != "":
		tools = "tools on " + phrase + " such as " + strings.Join(names, ", ")
	case len(names) > 0:
		tools = "tools such as " + strings.Join(names, ", ")
	case phrase != "":
		tools = "tools on " + phrase
	}
	switch {
	case lead != "" && tools != "":
		return lead + "; " + tools
	case lead != "":
		return lead
	}
	return tools
}

// firstSentence returns s's first sentence on one line, without its
// final stop.
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	for i, r := range s {
		if (r == '.' || r == '!' || r == '?') && (i+1 == len(s) || s[i+1] == ' ') {
			s = s[:i]
			break
		}
	}
	return strings.TrimSpace(s)
}

// ownTitle returns a server's title, on one line, when it says more
// than its domain's name: at least two words that the name does not
// hold ("Everything Reference Server" of everything, but not
// "memory-server" of memory). A title that matches a tool-poisoning
// pattern (index.ScanTool) is left out, as poisoned instructions are:
// it would reach every client first.
func ownTitle(domain, title string) string {
	title = strings.Join(strings.Fields(title), " ")
	if title == "" || len(index.ScanTool("", title)) > 0 {
		return ""
	}
	if !strings.Contains(title, " ") {
		title = txt.NameWords(title)
	}
	own := map[string]bool{}
	for _, w := range txt.SplitIdentifier(domain) {
		own[strings.ToLower(w)] = true
	}
	more := 0
	for _, w := range strings.Fields(title) {
		if !own[strings.ToLower(w)] {
			more++
		}
	}
	if more < 2 {
		return ""
	}
	return title
}

// sharedPhrase returns the phrase of two to four words (from one word
// that is not a stopword, or "the", to one that is not) that the most
// of tools' summaries hold, weighed by its length, when at least two
// and a third of them do: "the knowledge graph" of server-memory's
// tools, "files and directories" of server-filesystem's. Ties go to the
// longer, then alphabetically; "" when none.
func sharedPhrase(tools []toolText) string {
	// Each initialize writes the instructions: a domain's first
	// maxPhraseTools tools stand for it.
	tools = tools[:min(len(tools), maxPhraseTools)]
	count := map[string]int{}
	for _, t := range tools {
		words := strings.FieldsFunc(strings.ToLower(t.summary), func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r)
		})
		seen := map[string]bool{}
		for i := range words {
			if !phraseEnd(words[i]) && words[i] != "the" {
				continue
			}
			for n := 2; n <= 4 && i+n <= len(words); n++ {
				if !phraseEnd(words[i+n-1]) {
					continue
				}
				p := strings.Join(words[i:i+n], " ")
				if !seen[p] {
					seen[p] = true
					count[p]++
				}
			}
		}
	}
	best, bestScore := "", 0
	for p, c := range count {
		if c < 2 || 3*c < len(tools) {
			continue
		}
		score := c * len(strings.Fields(p))
		if score > bestScore || score == bestScore && (len(p) > len(best) || len(p) == len(best) && p < best) {
			best, bestScore = p, score
		}
	}
	return best
}

// phraseEnd reports whether w may start or end a shared phrase: a word
// of at least three characters, starting with a letter, not a stopword.
func phraseEnd(w string) bool {
	return len(w) >= 3 && unicode.IsLetter([]rune(w)[0]) && !txt.Stopword(w)
}

// exampleTools returns up to n of tools' names, in listing order, one
// per leading word ("create_entities", then "add_observations", not
// "create_relations"), deprecated and flagged tools left out.
func exampleTools(tools []toolText, n int) []string {
	var out, verbs []string
	for _, t := range tools {
		if len(out) == n {
			break
		}
		if t.deprecated || t.flagged {
			continue
		}
		verb := ""
		if ws := txt.SplitIdentifier(t.name); len(ws) > 0 {
			verb = strings.ToLower(ws[0])
		}
		if slices.Contains(verbs, verb) {
			continue
		}
		verbs = append(verbs, verb)
		out = append(out, t.name)
	}
	return out
}

// KnownDomains returns the domains named, in their order, with their
// number of enabled tools and what each is for (purposeOf), from what
// the command knows at start: cat, the catalog cached in the data dir
// (nil without one), what the config says of its servers (s), and
// specs, the catalog files and the upstream servers' tools as they
// listed them last (a domain not known yet has no tools and no
// purpose beyond its configured description). Options.Domains takes
// them, so that a client initializing before the index has loaded gets
// the instructions of the clients after it as far as they are known.
func KnownDomains(names []string, cat *index.Catalog, s Selves, specs ...[]index.DomainSpec) []DomainSize {
	texts := map[string]*domainText{}
	count := map[string]int{}
	get := func(name, desc string) *domainText {
		d := texts[name]
		if d == nil {
			d = &domainText{name: name, description: desc, title: s.Titles[name]}
			if conf, upstream := s.Descriptions[name]; upstream {
				d.description = conf
			}
			texts[name] = d
		}
		return d
	}
	// Purposes are written for up to maxNamedDomains domains; past that
	// the tools are only counted: their texts (a tool's warnings are
	// decoded from catalog.bin when asked) were 5% of a 100k-tool
	// serve's CPU before it answered, for nothing.
	named := len(names) <= maxNamedDomains
	if cat != nil {
		for _, dom := range cat.Domains() {
			if !named {
				for _, t := range dom.Tools {
					if !t.Disabled {
						count[dom.Name]++
					}
				}
				continue
			}
			d := textOf(dom, s)
			texts[dom.Name] = &d
			count[dom.Name] += len(d.tools)
		}
	}
	for _, ss := range specs {
		for _, ds := range ss {
			if !named {
				for _, t := range ds.Tools {
					if t.Enabled == nil || *t.Enabled {
						count[ds.Name]++
					}
				}
				continue
			}
			d := get(ds.Name, ds.Description)
			for _, t := range ds.Tools {
				if t.Enabled == nil || *t.Enabled {
					d.tools = append(d.tools, toolText{name: t.Name, summary: index.Summarize(t.Description), deprecated: t.Deprecated != "",
						flagged: len(index.ScanTool(t.Title, t.Description)) > 0})
					count[ds.Name]++
				}
			}
		}
	}
	out := make([]DomainSize, len(names))
	for i, name := range names {
		out[i] = DomainSize{Name: name, Tools: count[name]}
		if named { // more are named without
			out[i].Purpose = purposeOf(*get(name, ""))
		}
	}
	return out
}

var _ upstreamSelves = (*gateway.Directory)(nil)
