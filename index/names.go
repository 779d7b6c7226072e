package index

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// nameLookups are a catalog's tools by bare name (Resolve) and by the
// words of their names (ToolsNamed). At 100k tools, building them with
// every catalog cost a re-index 0.1-0.15 s and 25-30 MB of peak RSS
// (BENCHMARKS.md, round 5), and a re-index, the only work of the index
// command, never asks them; a server builds them once loaded
// (PrepareLookups), a one-shot search on its first query.
//
// They are arrays sorted by a hash of the key and searched by halving,
// not maps: a map of a slice per key held 15 MB at 100k tools (a slice
// header and a small allocation per name and per form), these hold 4 MB,
// all the server's heap for as long as it runs, and sort by integers
// (docs/benchmarks/2026-12-06-serve-memory.md). A lookup answers a
// subslice: no allocation, unless two keys share a hash (then a copy of
// the tools of the asked key).
type nameLookups struct {
	once  sync.Once
	built atomic.Bool // once has run to its end
	seed  maphash.Seed
	// byName holds every tool sorted by the hash of its Name (nameHash),
	// tools of the same name in catalog order.
	nameHash []uint64
	byName   []*Tool
	// wordTools holds each tool once per distinct name form, sorted by
	// the form's hash (wordHash), tools of the same form in catalog
	// order.
	wordHash  []uint64
	wordTools []*Tool
}

// lookups returns c's name lookups, building them on first use (safe
// for concurrent use).
func (c *Catalog) lookups() *nameLookups {
	l := c.names
	l.once.Do(func() {
		l.build(c.tools)
		l.built.Store(true)
	})
	return l
}

// keyed is a tool's place in the catalog with the hash of one of its keys.
type keyed struct {
	h  uint64
	at int32
}

// sortKeyed sorts ks by hash, then by place in the catalog, and returns
// the hashes and the tools in that order. ks must come in catalog order:
// a stable sort by hash alone keeps it among keys of one hash.
func sortKeyed(ks []keyed, tools []*Tool) ([]uint64, []*Tool) {
	radixSortKeyed(ks)
	hs, ts := make([]uint64, len(ks)), make([]*Tool, len(ks))
	for i, k := range ks {
		hs[i], ts[i] = k.h, tools[k.at]
	}
	return hs, ts
}

// radixSortKeyed sorts ks by hash, stably: a least significant digit
// radix sort, a byte of the hash a pass, the passes' counts taken in one
// read. At 100k tools a comparison sort of the 400k keys was 80% of the
// lookups' build, on a start's way to its first answer.
func radixSortKeyed(ks []keyed) {
	if len(ks) < 64 {
		slices.SortStableFunc(ks, func(a, b keyed) int { return cmp.Compare(a.h, b.h) })
		return
	}
	var counts [8][256]int
	for _, k := range ks {
		for d := range counts {
			counts[d][byte(k.h>>(8*d))]++
		}
	}
	src, dst := ks, make([]keyed, len(ks))
	for d := range counts {
		c := &counts[d]
		if c[byte(src[0].h>>(8*d))] == len(src) {
			continue // every key has this byte: the order stands
		}
		at := 0
		for b, n := range c {
			c[b] = at
			at += n
		}
		for _, k := range src {
			b := byte(k.h >> (8 * d))
			dst[c[b]] = k
			c[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &ks[0] {
		copy(ks, src)
	}
}

// build fills l from tools.
func (l *nameLookups) build(tools []*Tool) {
	l.seed = maphash.MakeSeed()
	ks := make([]keyed, len(tools), 2*len(tools))
	for i, t := range tools {
		ks[i] = keyed{maphash.String(l.seed, t.Name), int32(i)}
	}
	l.nameHash, l.byName = sortKeyed(ks, tools)
	ks = ks[:0]
	for i, t := range tools {
		forms := nameForms(t)
		for k, form := range forms {
			// A plain qualified name splits into the same words as
			// "domain name": each list has a tool once.
			if k > 0 && form == forms[0] || k == 2 && form == forms[1] {
				continue
			}
			ks = append(ks, keyed{maphash.String(l.seed, form), int32(i)})
		}
	}
	l.wordHash, l.wordTools = sortKeyed(ks, tools)
}

// find returns the tools of hs's run of key's hash that has(t, key): a
// capped subslice of ts (an append cannot overwrite its neighbours) when
// every tool of the run has it, as is all but certain, else a copy of
// those that do; nil when none.
func (l *nameLookups) find(hs []uint64, ts []*Tool, key string, has func(*Tool, string) bool) []*Tool {
	h := maphash.String(l.seed, key)
	lo, found := slices.BinarySearch(hs, h)
	if !found {
		return nil
	}
	hi := lo + 1
	for hi < len(hs) && hs[hi] == h {
		hi++
	}
	run := ts[lo:hi:hi]
	for i, t := range run {
		if !has(t, key) {
			// Another key of the same hash: keep the tools of this one.
			out := slices.Clone(run[:i])
			for _, t := range run[i+1:] {
				if has(t, key) {
					out = append(out, t)
				}
			}
			if len(out) == 0 {
				return nil
			}
			return out
		}
	}
	return run
}

// named returns the tools whose Name is name, or nil.
func (l *nameLookups) named(name string) []*Tool {
	return l.find(l.nameHash, l.byName, name, func(t *Tool, n string) bool { return t.Name == n })
}

// withWords returns the tools with the name form words, or nil.
func (l *nameLookups) withWords(words string) []*Tool {
	return l.find(l.wordHash, l.wordTools, words, func(t *Tool, w string) bool {
		forms := nameForms(t)
		return forms[0] == w || forms[1] == w || forms[2] == w
	})
}

// PrepareLookups builds the lookups by name that Resolve and ToolsNamed
// build on first use, so that no query waits for them.
func (c *Catalog) PrepareLookups() { c.lookups() }

// LookupsPrepared reports whether the lookups by name are built, so that
// a query asking them does not wait: a server's start builds them before
// it answers.
func (c *Catalog) LookupsPrepared() bool { return c.names.built.Load() }

// nameForms returns the spellings ToolsNamed finds t by: its name, its
// domain and name, and its qualified name, each split into words; those
// kept on t when they are for its qualified name (setForms).
func nameForms(t *Tool) [3]string {
	if t.formsOf != "" && t.formsOf == t.QualifiedName {
		switch {
		case t.built != nil:
			return t.built.forms
		case t.psrc != nil:
			return t.fileForms()
		}
	}
	return [3]string{NameWords(t.Name), NameWords(t.Domain + " " + t.Name), NameWords(t.QualifiedName)}
}

// setForms keeps t's nameForms on it; only while t is being built. The
// tool's built part may be shared with the tool it was copied from: a
// new one is made.
func (t *Tool) setForms(forms [3]string) {
	t.edit().forms = forms
	t.formsOf = t.QualifiedName
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
