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
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
)

// NewCatalog validates domain specs and builds a catalog. Errors are
// *CatalogError values naming the source, the JSON path and the reason.
func NewCatalog(specs []DomainSpec) (*Catalog, error) { return NewCatalogFrom(specs, nil) }

// NewCatalogFrom is NewCatalog reusing what prev (nil: nothing) built
// from the same source: a tool whose spec is prev's tool's spec in
// value (Tool's fields as given back by Catalog.Specs), or byte for
// byte the spec it was built from, with its domain's description
// unchanged, is prev's tool, not checked, canonicalised, scanned or
// hashed again. The result is the catalog NewCatalog would build; only
// the checks across tools (names, domains) run for every tool.
func NewCatalogFrom(specs []DomainSpec, prev *Catalog) (*Catalog, error) {
	return newCatalogFrom(specs, prev, nil, false)
}

// NewCatalogFromLast is NewCatalogFrom reusing last (nil: nothing), which
// it takes over and spends: last.Catalog() is nil after, and a second
// build from it reuses nothing. The tools last's reuse table says were
// read from files (CatalogSource.SpecsFromLast) keep the digest of their
// bytes, for the next read of those files to find them.
func NewCatalogFromLast(specs []DomainSpec, last *Last) (*Catalog, error) {
	var (
		prev *Catalog
		read readTable
	)
	if last != nil {
		prev, read = last.c, last.read
		last.c, last.read = nil, nil
	}
	return newCatalogFrom(specs, prev, read, prev != nil)
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

func newCatalogFrom(specs []DomainSpec, prev *Catalog, read readTable, own bool) (*Catalog, error) {
	if c, ok := patchCatalog(specs, prev, read, own); ok {
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
	built := buildTools(specs, prev, read)
	kept := 0 // prev's own tools in c
	seenDomain := make(map[string]string)
	for i, ds := range specs {
		path := fmt.Sprintf("domains[%d]", i)
		if ds.Source != "" {
			// Report paths relative to the domain's own file where we can.
			path = fmt.Sprintf("domains[%d]", indexInSource(specs, i))
		}
		if err := checkDomain(ds, path, seenDomain); err != nil {
			return nil, err
		}
		d := &Domain{Name: ds.Name, Description: strings.TrimSpace(ds.Description), About: strings.TrimSpace(ds.About), words: SplitIdentifier(ds.Name)}
		groups := make(map[string]bool)
		for j, ts := range ds.Tools {
			tpath := func() string { return fmt.Sprintf("%s.tools[%d]", path, j) }
			b := built[i][j]
			t, err := b.t, b.err
			if err != nil {
				return nil, toolError(err, ds.Source, tpath())
			}
			if c.toolIn(ds.Name, ts.Name) != nil {
				k := slices.IndexFunc(ds.Tools, func(o ToolSpec) bool { return o.Name == ts.Name })
				return nil, duplicateTool(ds, tpath(), ts.Name, k)
			}
			if first, clash := c.byQName[t.QualifiedName]; clash {
				if b.shared {
					cp := *t
					t = &cp
				}
				t.QualifiedName = clashName(ds.Name, ts.Name, j)
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

// checkDomain checks ds, at path in its file, against the rules for a
// domain and the domains seen before it (by name: where each was
// defined), and adds it to them.
func checkDomain(ds DomainSpec, path string, seen map[string]string) error {
	if !ValidDomainName(ds.Name) {
		return &CatalogError{File: ds.Source, Path: path + ".name",
			Reason: fmt.Sprintf("invalid domain name %q: use 1-32 characters from a-z, 0-9, '_' and '-'", ds.Name)}
	}
	if prev, ok := seen[ds.Name]; ok {
		return &CatalogError{File: ds.Source, Path: path + ".name",
			Reason: fmt.Sprintf("duplicate domain %q (also defined in %s): merge the two or rename one", ds.Name, prev)}
	}
	src := ds.Source
	if src == "" {
		src = path
	}
	seen[ds.Name] = src
	return nil
}

// clashName is the qualified name of the j-th tool of domain, named
// name, when its own is another tool's.
func clashName(domain, name string, j int) string {
	return QualifiedName(domain, name+"#"+fmt.Sprint(j))
}

// toolError places newTool's error for the tool at tpath of file.
func toolError(err error, file, tpath string) error {
	var ce *CatalogError
	if errors.As(err, &ce) {
		ce.File = file
		ce.Path = tpath + ce.Path
		return ce
	}
	return err
}

// duplicateTool says that the tool at tpath of ds is named name, as its
// tools[first] is.
func duplicateTool(ds DomainSpec, tpath, name string, first int) error {
	return &CatalogError{File: ds.Source, Path: tpath + ".name",
		Reason: fmt.Sprintf("duplicate tool %q in domain %q (first at tools[%d])", name, ds.Name, first)}
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
	return hashLines(b.String(), ends)
}

// hashLines is catalogHash of the lines all[ends[i-1]:ends[i]].
func hashLines(all string, ends []int) string {
	lines := make([]string, len(ends))
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

// newEmptyCatalog returns a catalog with its lookups made for n tools.
func newEmptyCatalog(n int) *Catalog {
	return &Catalog{
		byQName: make(map[string]*Tool, n),
		names:   &nameLookups{},
		tools:   make([]*Tool, 0, n),
	}
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
// or takes prev's tool over when its source is unchanged. NewCatalog
// then goes through the results in order, so errors are the same as one
// pass would give.
func buildTools(specs []DomainSpec, prev *Catalog, read readTable) [][]builtTool {
	out := make([][]builtTool, len(specs))
	prevDesc := make([]string, len(specs)) // the description prev gives each domain
	type job struct{ i, j int }
	var jobs []job
	for i, ds := range specs {
		out[i] = make([]builtTool, len(ds.Tools))
		if prev != nil {
			if d := prev.Domain(ds.Name); d != nil {
				prevDesc[i] = d.Description
			}
		}
		for j := range ds.Tools {
			jobs = append(jobs, job{i, j})
		}
	}
	inParallel(len(jobs), func(lo, hi int) {
		for _, jb := range jobs[lo:hi] {
			ds := specs[jb.i]
			var old *Tool
			if prev != nil {
				old = prev.toolIn(ds.Name, ds.Tools[jb.j].Name)
			}
			out[jb.i][jb.j] = buildTool(ds, ds.Tools[jb.j], old, prevDesc[jb.i], read)
		}
	})
	return out
}

// buildTool builds ts of ds, or takes old (the previous build's tool of
// the same domain and name, nil for none; its domain described as
// oldDesc) over when ts builds the same tool: shared when it is exactly
// old, copied when only its raw digest or qualified name is new. A tool
// read (the reuse table read says so) keeps the digest of its bytes.
func buildTool(ds DomainSpec, ts ToolSpec, old *Tool, oldDesc string, read readTable) builtTool {
	src := ""
	raw, isRead := read.rawOf(ds, ts)
	if old != nil && old.Domain == ds.Name && old.Name == ts.Name {
		// The previous tool's spec in value, or else built from the
		// same spec.
		same := isSpecOf(ts, ds.Description, old, oldDesc)
		if !same {
			src = specDigest(ds, ts)
			same = src == old.srcDigest()
		}
		if same && (!isRead || raw == old.rawDigest()) && hasOwnQName(old) {
			// Exactly the tool prev has: shared, not copied (tools are
			// immutable; NewCatalogFrom copies one before it changes it).
			return builtTool{t: old, shared: true}
		}
		if same {
			t := *old
			if isRead {
				t.edit().raw = raw
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
		t.built.src, t.built.raw = src, raw // newTool's own
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
		Disabled:      ts.Enabled != nil && !*ts.Enabled,
		Deprecated:    strings.TrimSpace(string(ts.Deprecated)),
		built:         &toolBuilt{params: params, extras: toolExtras{tags: slices.Clone(ts.Tags), input: schema, output: out, annotations: ann}},
	}
	t.Summary = Summarize(t.Description)
	if t.Summary == "" {
		t.Summary = Summarize(t.Title)
	}
	t.built.extras.warnings = scanTool(t.Title, t.Description, inDecoded, outDecoded)
	return t, nil
}
