package index

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// nameLookups are a catalog's tools by bare name (Resolve) and by the
// words of their names (ToolsNamed). At 100k tools, building them with
// every catalog cost a re-index 0.1-0.15 s and 25-30 MB of peak RSS
// (BENCHMARKS.md, round 5), and a re-index, the only work of the index
// command, never asks them; a server builds them once loaded
// (PrepareLookups), a one-shot search on its first query.
//
// They are sorted arrays searched by halving, not maps: a map of a
// slice per key held 15 MB at 100k tools (a slice header and a small
// allocation per name and per form), these hold 5.6 MB, all the server's
// heap for as long as it runs (docs/benchmarks/2026-12-06-serve-memory.md).
// A lookup answers a subslice: no allocation.
type nameLookups struct {
	once sync.Once
	// byName holds every tool sorted by Name, tools of the same name in
	// catalog order.
	byName []*Tool
	// wordKeys are the tools' name forms, sorted, each with its tool at
	// the same index of wordTools (tools of the same form in catalog
	// order).
	wordKeys  []string
	wordTools []*Tool
}

// lookups returns c's name lookups, building them on first use (safe
// for concurrent use).
func (c *Catalog) lookups() *nameLookups {
	l := c.names
	l.once.Do(func() { l.build(c.tools) })
	return l
}

// build fills l from tools.
func (l *nameLookups) build(tools []*Tool) {
	// Sorted by index, not moved, so that ties keep catalog order with
	// an unstable (faster) sort.
	order := make([]int32, len(tools))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Or(strings.Compare(tools[a].Name, tools[b].Name), cmp.Compare(a, b))
	})
	l.byName = make([]*Tool, len(tools))
	for i, k := range order {
		l.byName[i] = tools[k]
	}
	type entry struct {
		form string
		at   int32
	}
	entries := make([]entry, 0, 2*len(tools))
	for i, t := range tools {
		forms := nameForms(t)
		for k, form := range forms {
			// A plain qualified name splits into the same words as
			// "domain name": each list has a tool once.
			if k > 0 && form == forms[0] || k == 2 && form == forms[1] {
				continue
			}
			entries = append(entries, entry{form, int32(i)})
		}
	}
	slices.SortFunc(entries, func(a, b entry) int {
		return cmp.Or(strings.Compare(a.form, b.form), cmp.Compare(a.at, b.at))
	})
	l.wordKeys, l.wordTools = make([]string, len(entries)), make([]*Tool, len(entries))
	for i, e := range entries {
		l.wordKeys[i], l.wordTools[i] = e.form, tools[e.at]
	}
}

// named returns the tools whose Name is name (a subslice of byName,
// capped so that an append cannot overwrite its neighbours), or nil.
func (l *nameLookups) named(name string) []*Tool {
	lo, found := slices.BinarySearchFunc(l.byName, name, func(t *Tool, n string) int { return strings.Compare(t.Name, n) })
	if !found {
		return nil
	}
	hi := lo + 1
	for hi < len(l.byName) && l.byName[hi].Name == name {
		hi++
	}
	return l.byName[lo:hi:hi]
}

// withWords returns the tools with the name form words (a capped
// subslice of wordTools), or nil.
func (l *nameLookups) withWords(words string) []*Tool {
	lo, found := slices.BinarySearch(l.wordKeys, words)
	if !found {
		return nil
	}
	hi := lo + 1
	for hi < len(l.wordKeys) && l.wordKeys[hi] == words {
		hi++
	}
	return l.wordTools[lo:hi:hi]
}

// PrepareLookups builds the lookups by name that Resolve and ToolsNamed
// build on first use, so that no query waits for them.
func (c *Catalog) PrepareLookups() { c.lookups() }

// nameForms returns the spellings ToolsNamed finds t by: its name, its
// domain and name, and its qualified name, each split into words; those
// kept on t when they are for its qualified name (setForms).
func nameForms(t *Tool) [3]string {
	if t.formsOf != "" && t.formsOf == t.QualifiedName {
		return t.forms
	}
	return [3]string{NameWords(t.Name), NameWords(t.Domain + " " + t.Name), NameWords(t.QualifiedName)}
}

// setForms keeps t's nameForms on it; only while t is being built.
func (t *Tool) setForms(forms [3]string) {
	t.forms, t.formsOf = forms, t.QualifiedName
}

// ToolByKey returns the tool named "domain/tool" (the dataset form), or nil.
func (c *Catalog) ToolByKey(key string) *Tool {
	d, name, ok := strings.Cut(key, "/") // domain names have no '/'
	if !ok {
		return nil
	}
	return c.toolIn(d, name)
}

// toolIn returns the tool named name in domain, or nil. It asks byQName
// for the qualified name the tool has unless renamed (built on the stack
// when plain: no allocation), then the few renamed tools.
func (c *Catalog) toolIn(domain, name string) *Tool {
	if t := c.renamed[toolKey{domain, name}]; t != nil {
		return t
	}
	var t *Tool
	if len(domain)+2+len(name) <= maxQualifiedName && plainName(name) {
		var buf [maxQualifiedName]byte
		t = c.byQName[string(append(append(append(buf[:0], domain...), "__"...), name...))]
	} else {
		t = c.byQName[QualifiedName(domain, name)]
	}
	if t != nil && t.Domain == domain && t.Name == name {
		return t
	}
	return nil
}

// plainName reports whether QualifiedName keeps every byte of name.
func plainName(name string) bool {
	for i := 0; i < len(name); i++ {
		switch b := name[i]; {
		case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9', b == '_', b == '-':
		default:
			return false
		}
	}
	return true
}

// toolKey is a tool's domain and name.
type toolKey struct{ domain, name string }

// Clash is a tool whose qualified name another tool of the catalog had
// first: it is listed under another one.
type Clash struct {
	Domain, Name string
	// QualifiedName is the name it is listed under; With the tool that
	// has the name it would have had.
	QualifiedName, With string
}

// Clashes returns the tools renamed after a clash when the catalog was
// built, in catalog order.
func (c *Catalog) Clashes() []Clash { return c.clashes }

// setRenamed records t, whose qualified name is not QualifiedName(its
// domain, its name), for toolIn.
func (c *Catalog) setRenamed(t *Tool) {
	if c.renamed == nil {
		c.renamed = make(map[toolKey]*Tool)
	}
	c.renamed[toolKey{t.Domain, t.Name}] = t
}

// indexNames fills byQName and renamed from c.tools (read back from a
// cache, where who was renamed is not written down).
func (c *Catalog) indexNames() {
	for _, t := range c.tools {
		c.byQName[t.QualifiedName] = t
		if !hasOwnQName(t) {
			c.setRenamed(t)
		}
	}
}

// ToolsNamed returns the tools that q names exactly: their name, "domain
// name" or qualified name, compared word by word so that "list issues",
// "listIssues" and "github__list_issues" all match.
func (c *Catalog) ToolsNamed(q string) []*Tool {
	return c.lookups().withWords(NameWords(q))
}

// ToolsWithName returns the tools whose own name (the name their
// upstream gives them, without the domain) is name, disabled ones
// included, in catalog order. The slice is shared: do not modify it.
func (c *Catalog) ToolsWithName(name string) []*Tool {
	return c.lookups().named(name)
}

// Resolve finds a tool by qualified name, by "domain/tool", or by bare tool
// name when exactly one domain has it. When the bare name is ambiguous it
// returns the candidates and an *AmbiguousError; when nothing matches it
// returns an error wrapping ErrToolNotFound.
func (c *Catalog) Resolve(name string) (*Tool, error) {
	if t := c.byQName[name]; t != nil {
		return t, nil
	}
	if t := c.ToolByKey(name); t != nil {
		return t, nil
	}
	switch ts := c.lookups().named(name); len(ts) {
	case 0:
		return nil, fmt.Errorf("%w: %q", ErrToolNotFound, name)
	case 1:
		return ts[0], nil
	default:
		return nil, &AmbiguousError{Name: name, Candidates: slices.Clone(ts)}
	}
}

// AmbiguousError says that a bare tool name exists in several domains.
type AmbiguousError struct {
	Name       string
	Candidates []*Tool
}

// Error lists the qualified names to choose from.
func (e *AmbiguousError) Error() string {
	names := make([]string, len(e.Candidates))
	for i, t := range e.Candidates {
		names[i] = t.QualifiedName
	}
	return fmt.Sprintf("tool name %q is ambiguous: use one of %s", e.Name, strings.Join(names, ", "))
}
