package surface

import (
	"fmt"
	"log/slog"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/toolscout/toolscout/server/gateway"
)

// A state is one snapshot of every upstream's prompts, resources and
// templates as toolscout lists them, with the ways back to the
// upstream's own names. It is built whole on each change and never
// modified after: readers hold it without a lock.
type state struct {
	prompts   map[string]*promptEntry   // listed name → entry
	resources map[string]*resourceEntry // listed URI → entry
	templates map[string]*templateEntry // listed URI template → entry
	// byOrigin finds entries by the upstream's own prompt name or URI
	// (several upstreams may have the same).
	promptsByOrigin   map[string][]*promptEntry
	resourcesByOrigin map[string][]*resourceEntry
	domains           map[string]bool // every upstream's
	// What initialize and server/discover advertise (advertise).
	prompts_, resources_, subscribe, completions bool
}

type promptEntry struct {
	domain, origin string
	up             *mcp.Prompt // the upstream's, to tell a change
	listed         *mcp.Prompt
}

type resourceEntry struct {
	domain, origin string
	up             *mcp.Resource
	listed         *mcp.Resource
}

type templateEntry struct {
	domain, origin string
	up             *mcp.ResourceTemplate
	listed         *mcp.ResourceTemplate
	match          *uritemplate.Template // the upstream's template
}

// advertise says what the capabilities of initialize and server/discover
// declare: prompts (resources, subscriptions, completions) when an upstream declared
// them, or when an upstream has not connected yet and may. The
// capabilities are fixed for a session at its initialize, often before
// every upstream is up, and the specification lets a server that
// declares them answer empty lists, which fill in later with
// list_changed: so toolscout leaves them out only when it knows that no
// upstream has them.
func advertise(surfaces []gateway.Surface) (prompts, resources, subscribe, completions bool) {
	for _, s := range surfaces {
		prompts = prompts || !s.Listed || s.Prompts
		resources = resources || !s.Listed || s.Resources
		subscribe = subscribe || !s.Listed || s.Subscribe
		completions = completions || !s.Listed || s.Completions
	}
	return prompts, resources, subscribe && resources, completions && (prompts || resources)
}

// build makes the state of surfaces; entries equal to prev's are prev's
// (the same pointers), so that a view's registrations change only where
// the lists did. Items an MCP server could not list (a URI that does not
// parse, a template that is not RFC 6570) are left out and logged, as are
// duplicates within one upstream (the first is kept). With own, a prompt
// is listed under its upstream's own name where that is unique
// (promptNamer).
func build(prev *state, surfaces []gateway.Surface, own bool, log *slog.Logger) *state {
	st := &state{
		prompts: map[string]*promptEntry{}, resources: map[string]*resourceEntry{}, templates: map[string]*templateEntry{},
		promptsByOrigin: map[string][]*promptEntry{}, resourcesByOrigin: map[string][]*resourceEntry{}, domains: map[string]bool{},
	}
	st.prompts_, st.resources_, st.subscribe, st.completions = advertise(surfaces)
	if prev == nil {
		prev = &state{}
	}
	promptName := promptNamer(surfaces, own)
	for _, s := range surfaces {
		d := s.Domain
		st.domains[d] = true
		for _, p := range s.PromptList {
			if p == nil || p.Name == "" {
				continue
			}
			name := promptName(d, p.Name)
			if st.prompts[name] != nil {
				log.Warn("upstream lists a prompt twice; the first is kept", "domain", d, "prompt", p.Name)
				continue
			}
			e := prev.prompts[name]
			if e == nil || e.domain != d || !reflect.DeepEqual(e.up, p) {
				l := *p
				l.Name = name
				e = &promptEntry{domain: d, origin: p.Name, up: p, listed: &l}
			}
			st.prompts[name] = e
			st.promptsByOrigin[p.Name] = append(st.promptsByOrigin[p.Name], e)
		}
		for _, r := range s.ResourceList {
			if r == nil || r.URI == "" {
				continue
			}
			uri := WrapURI(d, r.URI)
			if _, err := url.Parse(uri); err != nil {
				log.Warn("upstream resource left out: its URI does not parse", "domain", d, "uri", clip(r.URI), "err", err)
				continue
			}
			if st.resources[uri] != nil {
				log.Warn("upstream lists a resource twice; the first is kept", "domain", d, "uri", clip(r.URI))
				continue
			}
			e := prev.resources[uri]
			if e == nil || e.domain != d || !reflect.DeepEqual(e.up, r) {
				l := *r
				l.URI, l.Name = uri, qualify(d, r.Name)
				e = &resourceEntry{domain: d, origin: r.URI, up: r, listed: &l}
			}
			st.resources[uri] = e
			st.resourcesByOrigin[r.URI] = append(st.resourcesByOrigin[r.URI], e)
		}
		for _, t := range s.TemplateList {
			if t == nil || t.URITemplate == "" {
				continue
			}
			uri := WrapURI(d, t.URITemplate)
			if st.templates[uri] != nil {
				log.Warn("upstream lists a resource template twice; the first is kept", "domain", d, "template", clip(t.URITemplate))
				continue
			}
			e := prev.templates[uri]
			if e == nil || e.domain != d || !reflect.DeepEqual(e.up, t) {
				match, err := compileTemplate(t.URITemplate)
				if err == nil {
					_, err = uritemplate.New(uri)
				}
				if err != nil {
					log.Warn("upstream resource template left out: it is not an RFC 6570 template", "domain", d, "template", clip(t.URITemplate), "err", err)
					continue
				}
				l := *t
				l.URITemplate, l.Name = uri, qualify(d, t.Name)
				e = &templateEntry{domain: d, origin: t.URITemplate, up: t, listed: &l, match: match}
			}
			st.templates[uri] = e
		}
	}
	return st
}

// compileTemplate parses an upstream's template and compiles the
// regexp that matches its URIs; a template whose regexp does not compile
// (regexp.MustCompile panics inside the library) is an error.
func compileTemplate(t string) (tpl *uritemplate.Template, err error) {
	if len(t) > maxTemplateLen {
		return nil, fmt.Errorf("%d bytes, over the %d a template may have here", len(t), maxTemplateLen)
	}
	tpl, err = uritemplate.New(t)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			tpl, err = nil, fmt.Errorf("its regexp: %v", r)
		}
	}()
	tpl.Regexp()
	return tpl, nil
}

// maxTemplateLen bounds an upstream's URI template.
const maxTemplateLen = 4096

// clip shortens an upstream's text for a log line.
func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// resolveResource returns the domain and upstream URI a client's URI
// names, or the candidates when it is an upstream URI several upstreams
// have. A listed URI, or one under toolscout://DOMAIN/ of a known
// domain (a template expanded), names its upstream; an upstream's own
// URI names the one upstream that lists it, else the one whose template
// matches it.
func (st *state) resolveResource(uri string) (domain, origin string, candidates []string) {
	if e := st.resources[uri]; e != nil {
		return e.domain, e.origin, nil
	}
	if d, o, ok := UnwrapURI(uri); ok && st.domains[d] {
		return d, o, nil
	}
	if es := st.resourcesByOrigin[uri]; len(es) == 1 {
		return es[0].domain, es[0].origin, nil
	} else if len(es) > 1 {
		for _, e := range es {
			candidates = append(candidates, e.listed.URI)
		}
		return "", "", candidates
	}
	seen := map[string]bool{}
	for _, e := range st.templates {
		if !seen[e.domain] && e.match.Regexp().MatchString(uri) {
			seen[e.domain] = true
			domain = e.domain
			candidates = append(candidates, WrapURI(e.domain, uri))
		}
	}
	if len(candidates) == 1 {
		return domain, uri, nil
	}
	slices.Sort(candidates)
	return "", "", candidates
}

// resolvePrompt returns the entry of a client's prompt name: a listed
// name, or an upstream's own name that one upstream has; else the
// candidates.
func (st *state) resolvePrompt(name string) (*promptEntry, []string) {
	if e := st.prompts[name]; e != nil {
		return e, nil
	}
	es := st.promptsByOrigin[name]
	if len(es) == 1 {
		return es[0], nil
	}
	var out []string
	for _, e := range es {
		out = append(out, e.listed.Name)
	}
	if len(out) == 0 {
		// The same name with a domain that differs only in case, or a
		// prompt of the same name under another domain.
		if _, rest, ok := strings.Cut(name, Separator); ok {
			for _, e := range st.promptsByOrigin[rest] {
				out = append(out, e.listed.Name)
			}
		}
	}
	slices.Sort(out)
	return nil, out
}

// promptNamer returns what a prompt of an upstream is listed as: D__N,
// or with own its upstream's own name N when no other upstream lists a
// prompt N and no upstream's prompt is listed as N by its D__N, so that
// the rule depends on the lists alone, not on which upstream connected
// first, and an upstream added later changes only the names it shares.
func promptNamer(surfaces []gateway.Surface, own bool) func(domain, name string) string {
	if !own {
		return qualify
	}
	domains := map[string]map[string]bool{} // own name → the upstreams that list it
	qualified := map[string]bool{}
	for _, s := range surfaces {
		for _, p := range s.PromptList {
			if p == nil || p.Name == "" {
				continue
			}
			if domains[p.Name] == nil {
				domains[p.Name] = map[string]bool{}
			}
			domains[p.Name][s.Domain] = true
			qualified[qualify(s.Domain, p.Name)] = true
		}
	}
	return func(domain, name string) string {
		if len(domains[name]) == 1 && !qualified[name] {
			return name
		}
		return qualify(domain, name)
	}
}
