package index

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
)

// ErrToolNotFound is returned when a tool name matches no tool.
var ErrToolNotFound = errors.New("tool not found")

// CatalogError describes bad catalog input: the file, the JSON path inside it
// and the reason.
type CatalogError struct {
	File   string // file name, or a label such as "builtin"
	Path   string // JSON path, e.g. domains[2].tools[5].inputSchema
	Reason string
}

// Error reads "file: path: reason".
func (e *CatalogError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// DomainSpec is a domain as a catalog file or an upstream server describes it.
type DomainSpec struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Tools       []ToolSpec `json:"tools"`
	// Source names where the domain came from (a file, a server) for errors.
	Source string `json:"-"`
}

// ToolSpec is one tool as tools/list returns it, plus group and tags.
type ToolSpec struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	Group        string          `json:"group,omitempty"`
	Tags         []string        `json:"tags,omitempty"`
	// Enabled false keeps the tool in the catalog (and the index) but
	// out of listings, of discovery unless asked for, and of execution;
	// nil and true mean enabled.
	Enabled *bool `json:"enabled,omitempty"`
	// Deprecated marks a tool to move away from: true, or a string saying
	// why or what to use instead.
	Deprecated Deprecation `json:"deprecated,omitempty"`

	raw  string // rawDigest of the bytes it was read from, if read from a file
	from *Tool  // the previous build's tool read from the same bytes (SpecsFrom)
}

// Catalog is a validated set of domains and their tools. It is immutable
// once built and safe for concurrent use.
type Catalog struct {
	domains []*Domain
	tools   []*Tool
	byQName map[string]*Tool
	// renamed holds the tools whose qualified name is not
	// QualifiedName(domain, name) (renamed after a clash): with byQName,
	// all ToolByKey needs.
	renamed map[toolKey]*Tool
	// clashes are the tools of this build renamed after a clash.
	clashes []Clash
	// names are the lookups by bare name and by name words, built on
	// first use: a re-index never asks them.
	names *nameLookups
	hash  string
	// base is the catalog.bin the catalog's tools were read from, or
	// that of the catalog they were reused from (nil: none).
	base *catBase
	// changes counts the tools added, changed or removed since the
	// catalog this one was built from, when fromPrev.
	changes  int
	fromPrev bool
}

// Changes returns how many tools were added, changed or removed since
// the catalog this one was built from (NewCatalogFrom's prev), and false
// for a catalog not built from one (read from the cache, or built from
// nothing): then only the indexes can tell.
func (c *Catalog) Changes() (int, bool) { return c.changes, c.fromPrev }

// ParseCatalog parses one catalog.json document into its domains (the
// tools are checked when a catalog is built from them: NewCatalog). file
// labels errors.
func ParseCatalog(file string, data []byte) ([]DomainSpec, error) {
	// One decoding pass when the document is well formed; the pass below,
	// domain by domain and tool by tool, only runs to locate an error.
	var fast struct {
		Domains []struct {
			Name        string     `json:"name"`
			Description string     `json:"description"`
			Tools       []ToolSpec `json:"tools"`
		} `json:"domains"`
	}
	if err := json.Unmarshal(data, &fast); err == nil && fast.Domains != nil {
		specs := make([]DomainSpec, len(fast.Domains))
		for i, d := range fast.Domains {
			specs[i] = DomainSpec{Name: d.Name, Description: d.Description, Source: file, Tools: d.Tools}
		}
		return specs, nil
	}
	var top struct {
		Domains []json.RawMessage `json:"domains"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, jsonError(file, "", data, err)
	}
	if top.Domains == nil {
		return nil, &CatalogError{File: file, Path: "domains", Reason: `missing: a catalog is {"domains": [...]}`}
	}
	specs := make([]DomainSpec, 0, len(top.Domains))
	for i, raw := range top.Domains {
		path := fmt.Sprintf("domains[%d]", i)
		var d struct {
			Name        string            `json:"name"`
			Description string            `json:"description"`
			Tools       []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, jsonError(file, path, raw, err)
		}
		spec := DomainSpec{Name: d.Name, Description: d.Description, Source: file}
		for j, rawTool := range d.Tools {
			var ts ToolSpec
			if err := json.Unmarshal(rawTool, &ts); err != nil {
				return nil, jsonError(file, fmt.Sprintf("%s.tools[%d]", path, j), rawTool, err)
			}
			spec.Tools = append(spec.Tools, ts)
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

func jsonError(file, path string, data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := lineCol(data, syn.Offset)
		reason := fmt.Sprintf("invalid JSON at line %d, column %d: %v", line, col, syn)
		return &CatalogError{File: file, Path: path, Reason: reason}
	case errors.As(err, &typ):
		p := path
		if typ.Field != "" {
			if p != "" {
				p += "."
			}
			p += typ.Field
		}
		return &CatalogError{File: file, Path: p, Reason: fmt.Sprintf("expected %s, found JSON %s", typ.Type, typ.Value)}
	default:
		return &CatalogError{File: file, Path: path, Reason: err.Error()}
	}
}

func lineCol(data []byte, offset int64) (int, int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// LoadCatalogFiles reads, parses and validates catalog files. Either every
// file loads or an error names the first problem; nothing is half-loaded.
func LoadCatalogFiles(paths []string) (*Catalog, error) {
	specs, err := ReadCatalogSpecs(paths)
	if err != nil {
		return nil, err
	}
	return NewCatalog(specs)
}

// ReadCatalogSpecs reads and parses catalog files without checking the
// tools (NewCatalog does, naming the file of each error): for callers that
// build the catalog next, so that it is validated once.
func ReadCatalogSpecs(paths []string) ([]DomainSpec, error) {
	src, err := ReadCatalogSource(paths)
	if err != nil {
		return nil, err
	}
	return src.Specs()
}

// LoadCatalogSpecs reads and parses catalog files, and checks that together
// they make a valid catalog, returning their domains to merge with others.
func LoadCatalogSpecs(paths []string) ([]DomainSpec, error) {
	all, err := ReadCatalogSpecs(paths)
	if err != nil {
		return nil, err
	}
	if _, err := NewCatalog(all); err != nil {
		return nil, err
	}
	return all, nil
}

// NewCatalog validates domain specs and builds a catalog. Errors are
// *CatalogError values naming the source, the JSON path and the reason.
func NewCatalog(specs []DomainSpec) (*Catalog, error) { return NewCatalogFrom(specs, nil) }

// NewCatalogFrom is NewCatalog reusing what prev (nil: nothing) built
// from the same source: a tool whose spec and domain description are
// byte for byte what they were is not checked, canonicalised, scanned or
// hashed again. The result is the catalog NewCatalog would build; only
// the checks across tools (names, domains) run for every tool.
func NewCatalogFrom(specs []DomainSpec, prev *Catalog) (*Catalog, error) {
	return newCatalogFrom(specs, prev, false)
}

// NewCatalogFromLast is NewCatalogFrom for a previous build that is not
// used after (a re-index of files, which reads its previous build only
// for this): its lookups may be taken over instead of copied.
func NewCatalogFromLast(specs []DomainSpec, last *Catalog) (*Catalog, error) {
	return newCatalogFrom(specs, last, true)
}

// NewCatalogSkipping is NewCatalogFrom over strict and then lenient
// domains, where a lenient domain that cannot be built (an upstream
// server's, which the user cannot fix) is left out and its error returned
// in skipped, while a strict one (from a file) fails the whole build.
func NewCatalogSkipping(strict, lenient []DomainSpec, prev *Catalog) (cat *Catalog, skipped []error, err error) {
	all := append(append(make([]DomainSpec, 0, len(strict)+len(lenient)), strict...), lenient...)
	if cat, err = NewCatalogFrom(all, prev); err == nil || len(lenient) == 0 {
		return cat, nil, err
	}
	keep := append(make([]DomainSpec, 0, len(all)), strict...)
	if _, err := NewCatalogFrom(strict, prev); err != nil {
		return nil, nil, err
	}
	for _, d := range lenient {
		if _, derr := NewCatalogFrom([]DomainSpec{d}, prev); derr != nil {
			skipped = append(skipped, derr)
			continue
		}
		keep = append(keep, d)
	}
	cat, err = NewCatalogFrom(keep, prev)
	return cat, skipped, err
}

func newCatalogFrom(specs []DomainSpec, prev *Catalog, own bool) (*Catalog, error) {
	if c, ok := patchCatalog(specs, prev, own); ok {
		return c, nil
	}
	n := 0
	for _, ds := range specs {
		n += len(ds.Tools)
	}
	c := newEmptyCatalog(n)
	if prev != nil {
		c.base = prev.base
	}
	built := buildTools(specs, prev)
	kept := 0 // prev's own tools in c
	seenDomain := make(map[string]string)
	for i, ds := range specs {
		path := fmt.Sprintf("domains[%d]", i)
		if ds.Source != "" {
			// Report paths relative to the domain's own file where we can.
			path = fmt.Sprintf("domains[%d]", indexInSource(specs, i))
		}
		if !ValidDomainName(ds.Name) {
			return nil, &CatalogError{File: ds.Source, Path: path + ".name",
				Reason: fmt.Sprintf("invalid domain name %q: use 1-32 characters from a-z, 0-9, '_' and '-'", ds.Name)}
		}
		if prev, ok := seenDomain[ds.Name]; ok {
			return nil, &CatalogError{File: ds.Source, Path: path + ".name",
				Reason: fmt.Sprintf("duplicate domain %q (also defined in %s): merge the two or rename one", ds.Name, prev)}
		}
		src := ds.Source
		if src == "" {
			src = path
		}
		seenDomain[ds.Name] = src
		d := &Domain{Name: ds.Name, Description: strings.TrimSpace(ds.Description), words: SplitIdentifier(ds.Name)}
		groups := make(map[string]bool)
		for j, ts := range ds.Tools {
			tpath := func() string { return fmt.Sprintf("%s.tools[%d]", path, j) }
			b := built[i][j]
			t, err := b.t, b.err
			if err != nil {
				var ce *CatalogError
				if errors.As(err, &ce) {
					ce.File = ds.Source
					ce.Path = tpath() + ce.Path
					return nil, ce
				}
				return nil, err
			}
			if c.toolIn(ds.Name, ts.Name) != nil {
				k := slices.IndexFunc(ds.Tools, func(o ToolSpec) bool { return o.Name == ts.Name })
				return nil, &CatalogError{File: ds.Source, Path: tpath() + ".name",
					Reason: fmt.Sprintf("duplicate tool %q in domain %q (first at tools[%d])", ts.Name, ds.Name, k)}
			}
			if first, clash := c.byQName[t.QualifiedName]; clash {
				if b.shared {
					cp := *t
					t = &cp
				}
				t.QualifiedName = QualifiedName(ds.Name, ts.Name+"#"+fmt.Sprint(j))
				c.clashes = append(c.clashes, Clash{Domain: ds.Name, Name: ts.Name, QualifiedName: t.QualifiedName, With: first.QualifiedName})
				t.Hash = ""
				c.setRenamed(t)
			} else if b.shared {
				kept++
			}
			if t.Hash == "" { // kept when reused under the same name
				t.Hash = t.computeHash(d.Description)
			}
			d.Tools = append(d.Tools, t)
			if t.formsOf != t.QualifiedName {
				t.setForms(nameForms(t)) // a shared tool has them already
			}
			c.add(t)
			if t.Group != "" {
				groups[t.Group] = true
			}
		}
		for g := range groups {
			d.Groups = append(d.Groups, g)
		}
		sort.Strings(d.Groups)
		c.domains = append(c.domains, d)
	}
	sort.Slice(c.domains, func(i, j int) bool { return c.domains[i].Name < c.domains[j].Name })
	c.hash = catalogHash(c.tools)
	if prev != nil {
		c.changes, c.fromPrev = len(c.tools)-kept+len(prev.tools)-kept, true
	}
	return c, nil
}

// catalogHash is the catalog's Hash: a SHA-256 of the lines "qualified
// name=content hash" of its tools, sorted, one per line. The lines are
// slices of one string, and written to the hash rather than joined: two
// allocations instead of 100k at 100k tools.
func catalogHash(tools []*Tool) string {
	size := 0
	for _, t := range tools {
		size += len(t.QualifiedName) + 1 + len(t.Hash)
	}
	var b strings.Builder
	b.Grow(size)
	ends := make([]int, len(tools))
	for i, t := range tools {
		b.WriteString(t.QualifiedName)
		b.WriteByte('=')
		b.WriteString(t.Hash)
		ends[i] = b.Len()
	}
	all := b.String()
	lines := make([]string, len(tools))
	start := 0
	for i, end := range ends {
		lines[i], start = all[start:end], end
	}
	sort.Strings(lines)
	h := sha256.New()
	w := bufio.NewWriterSize(h, 64<<10)
	for i, line := range lines {
		if i > 0 {
			w.WriteByte('\n')
		}
		w.WriteString(line)
	}
	w.Flush()
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// patchCatalog builds the catalog of specs from prev when specs have
// prev's shape: the same domains, each with the same tool names in the
// same order, as after an edit of a catalog file that changed tools in
// place. Only the tools that changed are built; prev's other tools, its
// domains whose tools all stayed, and its lookups (copied, then patched)
// are reused. ok is false, and NewCatalogFrom builds everything, when
// specs have another shape or a tool cannot be taken over as it would be
// built (an error, a tool prev had renamed after a clash). The catalog
// is the one NewCatalog(specs) builds. With own, prev's lookups become
// the catalog's (patched in place): prev must not be used after.
func patchCatalog(specs []DomainSpec, prev *Catalog, own bool) (c *Catalog, ok bool) {
	if prev == nil || prev.byQName == nil || len(specs) != len(prev.domains) {
		return nil, false
	}
	prevDomain := make(map[string]*Domain, len(prev.domains))
	for _, d := range prev.domains {
		prevDomain[d.Name] = d
	}
	k := 0
	pds := make([]*Domain, len(specs)) // prev's domain of each spec
	for i, ds := range specs {
		pd := prevDomain[ds.Name]
		if pd == nil || len(pd.Tools) != len(ds.Tools) || k+len(ds.Tools) > len(prev.tools) {
			return nil, false
		}
		delete(prevDomain, ds.Name) // a domain twice is another shape
		pds[i] = pd
		for _, ts := range ds.Tools {
			if p := prev.tools[k]; p.Domain != ds.Name || p.Name != ts.Name {
				return nil, false
			}
			k++
		}
	}
	if k != len(prev.tools) {
		return nil, false
	}
	// The tools read from the same bytes as prev's at their place are
	// prev's (buildTool would share them); the others are built.
	type job struct{ i, j, k int }
	var jobs []job
	k = 0
	for i, ds := range specs {
		for j, ts := range ds.Tools {
			if p := prev.tools[k]; ts.from != p || !hasOwnQName(p) {
				jobs = append(jobs, job{i, j, k})
			}
			k++
		}
	}
	built := make([]builtTool, len(jobs)) // built[x] is jobs[x]'s
	inParallel(len(jobs), func(lo, hi int) {
		for x := lo; x < hi; x++ {
			built[x] = buildTool(specs[jobs[x].i], specs[jobs[x].i].Tools[jobs[x].j], prev)
		}
	})
	next := 0 // the next job, in the order of the tools
	c = &Catalog{tools: make([]*Tool, 0, k), names: &nameLookups{}, base: prev.base, renamed: prev.renamed}
	if !own {
		c.renamed = maps.Clone(prev.renamed)
	}
	byName := make(map[string]*Domain) // the domains that are not prev's
	var replaced []*Tool
	for i, ds := range specs {
		desc := strings.TrimSpace(ds.Description)
		start := len(c.tools)
		same := true
		for j := range ds.Tools {
			p := prev.tools[start+j]
			t := p
			if next < len(jobs) && jobs[next].k == start+j {
				b := built[next]
				next++
				if b.err != nil || b.t.QualifiedName != p.QualifiedName {
					return nil, false
				}
				t = b.t
			}
			if t != p {
				if t.Hash == "" {
					t.Hash = t.computeHash(desc)
				}
				if t.formsOf != t.QualifiedName {
					t.setForms(nameForms(t))
				}
				replaced = append(replaced, t)
				same = false
			}
			c.tools = append(c.tools, t)
		}
		if same && desc == pds[i].Description {
			continue
		}
		d := &Domain{Name: ds.Name, Description: desc, words: SplitIdentifier(ds.Name), Tools: slices.Clip(c.tools[start:])}
		groups := make(map[string]bool)
		for _, t := range d.Tools {
			if t.Group != "" {
				groups[t.Group] = true
			}
		}
		for g := range groups {
			d.Groups = append(d.Groups, g)
		}
		sort.Strings(d.Groups)
		byName[d.Name] = d
	}
	c.domains = make([]*Domain, len(prev.domains))
	for i, pd := range prev.domains {
		if d := byName[pd.Name]; d != nil {
			pd = d
		}
		c.domains[i] = pd
	}
	if c.byQName = prev.byQName; !own {
		c.byQName = maps.Clone(prev.byQName)
	}
	for _, t := range replaced {
		c.byQName[t.QualifiedName] = t
	}
	c.hash = catalogHash(c.tools)
	c.changes, c.fromPrev = len(replaced), true
	return c, true
}

// newEmptyCatalog returns a catalog with its lookups made for n tools.
func newEmptyCatalog(n int) *Catalog {
	return &Catalog{
		byQName: make(map[string]*Tool, n),
		names:   &nameLookups{},
		tools:   make([]*Tool, 0, n),
	}
}

// nameLookups are a catalog's tools by bare name (Resolve) and by the
// words of their names (ToolsNamed). At 100k tools, building them with
// every catalog cost a re-index 0.1-0.15 s and 25-30 MB of peak RSS
// (BENCHMARKS.md, round 5), and a re-index, the only work of the index
// command, never asks them; a server builds them once loaded
// (PrepareLookups), a one-shot search on its first query.
type nameLookups struct {
	once    sync.Once
	byName  map[string][]*Tool
	byWords map[string][]*Tool
}

// lookups returns c's name lookups, building them on first use (safe
// for concurrent use).
func (c *Catalog) lookups() *nameLookups {
	l := c.names
	l.once.Do(func() {
		l.byName = make(map[string][]*Tool, len(c.tools))
		l.byWords = make(map[string][]*Tool, 2*len(c.tools))
		for _, t := range c.tools {
			l.byName[t.Name] = append(l.byName[t.Name], t)
			forms := nameForms(t)
			for k, form := range forms {
				// A plain qualified name splits into the same words as
				// "domain name": each list has a tool once.
				if k > 0 && form == forms[0] || k == 2 && form == forms[1] {
					continue
				}
				l.byWords[form] = append(l.byWords[form], t)
			}
		}
	})
	return l
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

// add appends t to the catalog's tools and byQName.
func (c *Catalog) add(t *Tool) {
	c.tools = append(c.tools, t)
	c.byQName[t.QualifiedName] = t
}

type builtTool struct {
	t      *Tool
	shared bool // t is the previous build's: copy it before changing it
	err    error
}

// isPlainQName reports whether q is domain+"__"+tool, without building
// that string. A tool's qualified name that is, is QualifiedName(domain,
// tool): a renamed or sanitised one never is.
func isPlainQName(q, domain, tool string) bool {
	return len(q) == len(domain)+2+len(tool) && q[:len(domain)] == domain &&
		q[len(domain):len(domain)+2] == "__" && q[len(domain)+2:] == tool
}

// hasOwnQName reports whether t's qualified name is QualifiedName(its
// domain, its name): not renamed after a clash. It builds that name only
// when it is not plain (sanitised, too long, or renamed).
func hasOwnQName(t *Tool) bool {
	return isPlainQName(t.QualifiedName, t.Domain, t.Name) || t.QualifiedName == QualifiedName(t.Domain, t.Name)
}

// buildTools runs newTool on every tool of specs, in parallel (schemas are
// decoded and re-encoded, texts scanned: the bulk of loading a catalog),
// or copies prev's tool when its source is unchanged. NewCatalog then
// goes through the results in order, so errors are the same as one pass
// would give.
func buildTools(specs []DomainSpec, prev *Catalog) [][]builtTool {
	out := make([][]builtTool, len(specs))
	type job struct{ i, j int }
	var jobs []job
	for i, ds := range specs {
		out[i] = make([]builtTool, len(ds.Tools))
		for j := range ds.Tools {
			jobs = append(jobs, job{i, j})
		}
	}
	inParallel(len(jobs), func(lo, hi int) {
		for _, jb := range jobs[lo:hi] {
			out[jb.i][jb.j] = buildTool(specs[jb.i], specs[jb.i].Tools[jb.j], prev)
		}
	})
	return out
}

// buildTool builds ts of ds, or takes prev's tool over when its source
// is unchanged: shared when it is exactly prev's, copied when only its
// raw digest or qualified name is new.
func buildTool(ds DomainSpec, ts ToolSpec, prev *Catalog) builtTool {
	src := ""
	old := ts.from
	if old == nil && prev != nil {
		old = prev.toolIn(ds.Name, ts.Name)
	}
	if old != nil && old.Domain == ds.Name && old.Name == ts.Name {
		// Read from the same bytes, or else built from the same spec.
		sameRaw := ts.raw != "" && ts.raw == old.raw
		same := sameRaw
		if !same {
			src = specDigest(ds, ts)
			same = src == old.src
		}
		if same && (sameRaw || ts.raw == "") && hasOwnQName(old) {
			// Exactly the tool prev has: shared, not copied (tools are
			// immutable; NewCatalogFrom copies one before it changes it).
			return builtTool{t: old, shared: true}
		}
		if same {
			t := *old
			if ts.raw != "" {
				t.raw = ts.raw
			}
			if t.QualifiedName = QualifiedName(ds.Name, ts.Name); t.QualifiedName != old.QualifiedName {
				t.Hash = "" // the name is hashed: NewCatalog hashes it again
			}
			return builtTool{t: &t}
		}
	}
	if src == "" {
		src = specDigest(ds, ts)
	}
	t, err := newTool(&Domain{Name: ds.Name}, ts)
	if t != nil {
		t.src, t.raw = src, ts.raw
	}
	return builtTool{t: t, err: err}
}

// inParallel calls f on consecutive ranges [lo, hi) of n items, one range
// per core (a single call below 512 items), and waits for them.
func inParallel(n int, f func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), max(1, n/256))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(w*n/workers, (w+1)*n/workers)
		}()
	}
	wg.Wait()
}

// specDigest identifies everything a tool is built from: its spec as
// given, its domain's name and description (part of its content hash).
func specDigest(ds DomainSpec, ts ToolSpec) string {
	h := sha256.New()
	var n [8]byte
	field := func(b []byte) {
		binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	for _, f := range []string{ds.Name, ds.Description, ts.Name, ts.Title, ts.Description, ts.Group, toolState(ts), string(ts.Deprecated)} {
		field([]byte(f))
	}
	// No tags and an empty list are two sources: the content hash tells
	// them apart (null and []).
	tags := uint64(0)
	if ts.Tags != nil {
		tags = uint64(len(ts.Tags)) + 1
	}
	binary.LittleEndian.PutUint64(n[:], tags)
	h.Write(n[:])
	for _, tag := range ts.Tags {
		field([]byte(tag))
	}
	field(ts.InputSchema)
	field(ts.OutputSchema)
	field(ts.Annotations)
	return string(h.Sum(nil)[:16])
}

// indexInSource returns the position of specs[i] among the specs that came
// from the same source, so error paths match the file the user edits.
func indexInSource(specs []DomainSpec, i int) int {
	n := 0
	for k := 0; k < i; k++ {
		if specs[k].Source == specs[i].Source {
			n++
		}
	}
	return n
}

func newTool(d *Domain, ts ToolSpec) (*Tool, error) {
	name := ts.Name
	if strings.TrimSpace(name) == "" {
		return nil, &CatalogError{Path: ".name", Reason: "missing tool name"}
	}
	if err := CheckToolName(name); err != nil {
		return nil, &CatalogError{Path: ".name", Reason: err.Error()}
	}
	schema, params, inDecoded, err := checkObjectSchema(ts.InputSchema)
	if err != nil {
		return nil, &CatalogError{Path: ".inputSchema", Reason: err.Error()}
	}
	var out json.RawMessage
	var outDecoded any
	if len(ts.OutputSchema) > 0 && string(ts.OutputSchema) != "null" {
		o, _, dec, err := checkObjectSchema(ts.OutputSchema)
		if err != nil {
			return nil, &CatalogError{Path: ".outputSchema", Reason: err.Error()}
		}
		out, outDecoded = o, dec
	}
	if ts.Group != "" && (len(ts.Group) > 64 || strings.TrimSpace(ts.Group) != ts.Group) {
		return nil, &CatalogError{Path: ".group", Reason: fmt.Sprintf("invalid group %q: at most 64 characters, no surrounding space", ts.Group)}
	}
	if len(ts.Deprecated) > MaxDeprecatedBytes {
		return nil, &CatalogError{Path: ".deprecated", Reason: fmt.Sprintf("%d bytes: say in at most %d what to use instead", len(ts.Deprecated), MaxDeprecatedBytes)}
	}
	var ann json.RawMessage
	if len(ts.Annotations) > 0 && string(ts.Annotations) != "null" {
		if !json.Valid(ts.Annotations) || bytes.TrimSpace(ts.Annotations)[0] != '{' {
			return nil, &CatalogError{Path: ".annotations", Reason: "annotations must be a JSON object"}
		}
		ann = compactJSON(ts.Annotations)
	}
	t := &Tool{
		Domain:        d.Name,
		Name:          name,
		QualifiedName: QualifiedName(d.Name, name),
		Title:         strings.TrimSpace(ts.Title),
		Description:   strings.TrimSpace(ts.Description),
		Group:         ts.Group,
		Tags:          slices.Clone(ts.Tags),
		InputSchema:   schema,
		OutputSchema:  out,
		Annotations:   ann,
		Disabled:      ts.Enabled != nil && !*ts.Enabled,
		Deprecated:    strings.TrimSpace(string(ts.Deprecated)),
		params:        params,
	}
	t.Summary = Summarize(t.Description)
	if t.Summary == "" {
		t.Summary = Summarize(t.Title)
	}
	t.Warnings = scanTool(t.Title, t.Description, inDecoded, outDecoded)
	return t, nil
}

// MaxToolNameBytes is the longest tool name a catalog or an upstream
// server may use.
const MaxToolNameBytes = 128

// CheckToolName checks the one rule for tool names, from catalog files
// and upstream servers alike: at most MaxToolNameBytes, no white space.
func CheckToolName(name string) error {
	if len(name) > MaxToolNameBytes || strings.ContainsAny(name, " \t\r\n") {
		return fmt.Errorf("invalid tool name %q: at most %d characters, no white space", name, MaxToolNameBytes)
	}
	return nil
}

// NormalizeObjectSchema makes an upstream server's schema a catalog
// schema: a missing one becomes {"type": "object"}, one with no type gets
// "type": "object"; any other type is an error. The result then passes
// the catalog's own check.
func NormalizeObjectSchema(raw json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, errors.New("is not a JSON object")
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	out := mustMarshal(m)
	if _, _, _, err := checkObjectSchema(out); err != nil {
		return nil, err
	}
	return out, nil
}

// checkObjectSchema checks that raw is a JSON object schema ("type":
// "object") and returns it re-encoded canonically (sorted keys, compact)
// together with its top-level parameters and its decoded value.
func checkObjectSchema(raw json.RawMessage) (json.RawMessage, []Param, any, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		return nil, nil, nil, errors.New(`missing: every tool needs an object schema such as {"type": "object"}`)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, nil, fmt.Errorf("not a JSON object schema: %v", err)
	}
	typ, ok := m["type"]
	if !ok {
		return nil, nil, nil, errors.New(`not an object schema: "type" is missing (want "object")`)
	}
	if typ != "object" {
		return nil, nil, nil, fmt.Errorf(`not an object schema: "type" is %s (want "object")`, compactJSON(mustMarshal(typ)))
	}
	var params []Param
	if props, ok := m["properties"]; ok {
		pm, ok := props.(map[string]any)
		if !ok {
			return nil, nil, nil, errors.New(`"properties" must be an object`)
		}
		required := map[string]bool{}
		if req, ok := m["required"].([]any); ok {
			for _, r := range req {
				if s, ok := r.(string); ok {
					required[s] = true
				}
			}
		}
		for name, p := range pm {
			desc := ""
			if ps, ok := p.(map[string]any); ok {
				desc, _ = ps["description"].(string)
			}
			params = append(params, Param{Name: name, Description: desc, Required: required[name]})
		}
		sort.Slice(params, func(i, j int) bool { return params[i].Name < params[j].Name })
	}
	return mustMarshal(m), params, m, nil
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // values decoded from JSON always encode again
	}
	return b
}

func compactJSON(raw []byte) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return buf.Bytes()
}

// Domains returns the catalog's domains sorted by name.
func (c *Catalog) Domains() []*Domain { return c.domains }

// Domain returns the named domain, or nil.
func (c *Catalog) Domain(name string) *Domain {
	i, ok := slices.BinarySearchFunc(c.domains, name, func(d *Domain, n string) int { return strings.Compare(d.Name, n) })
	if !ok {
		return nil
	}
	return c.domains[i]
}

// Tools returns every tool, in catalog order.
func (c *Catalog) Tools() []*Tool { return c.tools }

// Len returns the number of tools.
func (c *Catalog) Len() int { return len(c.tools) }

// Hash returns a fingerprint of the whole catalog's content (128 bits of
// a SHA-256 over every tool's qualified name and content hash): equal
// hashes mean equal indexes.
func (c *Catalog) Hash() string { return c.hash }

// Specs returns domain specs that build the same catalog (the same tools
// and hash): rebuilt from the tools, so a catalog does not keep a second
// copy of every schema.
func (c *Catalog) Specs() []DomainSpec {
	out := make([]DomainSpec, 0, len(c.domains))
	for _, d := range c.domains {
		ds := DomainSpec{Name: d.Name, Description: d.Description, Tools: make([]ToolSpec, 0, len(d.Tools))}
		for _, t := range d.Tools {
			ds.Tools = append(ds.Tools, t.spec())
		}
		out = append(out, ds)
	}
	return out
}

// Tool returns the tool with the given qualified name, or nil.
func (c *Catalog) Tool(qualifiedName string) *Tool { return c.byQName[qualifiedName] }

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
	return c.lookups().byWords[NameWords(q)]
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
	switch ts := c.lookups().byName[name]; len(ts) {
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
