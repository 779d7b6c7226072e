package index

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
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
	// About is what an upstream server says about itself (its title and
	// the first sentence of its instructions) when a configured
	// description stands in for the one derived from them: never shown,
	// ranked with the domain's text (search). Not part of a catalog file.
	About string `json:"-"`
	// Source names where the domain came from (a file, a server) for errors.
	Source string `json:"-"`
}

// ToolSpec is one tool as tools/list returns it, plus group and tags. It
// is plain data: two equal specs build the same tool, whatever they were
// read from (what a re-index reuses of the previous build is carried by
// [Last]).
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
		ds := DomainSpec{Name: d.Name, Description: d.Description, About: d.About, Tools: make([]ToolSpec, 0, len(d.Tools))}
		for _, t := range d.Tools {
			ds.Tools = append(ds.Tools, t.spec())
		}
		out = append(out, ds)
	}
	return out
}

// Tool returns the tool with the given qualified name, or nil.
func (c *Catalog) Tool(qualifiedName string) *Tool { return c.byQName[qualifiedName] }
