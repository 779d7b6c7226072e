package index

import (
	"bytes"
	"slices"
	"strings"
)

// What a re-index takes over from the previous build. A tool whose spec
// is, in value, the spec of the previous build's tool of the same domain
// and name (Tool.spec, with its domain's description) is that tool,
// shared: not checked, canonicalised, scanned or hashed again. A spec
// taken from the previous tool when its bytes were read again
// (CatalogSource.SpecsFromLast) shares that tool's strings and bytes, so
// the comparison costs a few pointer compares. A spec equal in value
// from anywhere else gets the same tool.
//
// What the value of a spec does not say is which bytes it was read
// from: the raw digest each tool keeps (Tool.rawDigest, saved in catalog.bin)
// so that the next read of the files finds it without decoding it.
// SpecsFromLast records the digest of every tool it decoded in the
// Last's reuse table, keyed by the tool's domain and name, with the
// spec and domain description it decoded to; a build gives a tool that
// digest only when its spec is still that one.

// Last is a previous build read back from the data dir and never
// served, and the reuse table of the files read against it: the next
// build of the same files may take it over (NewCatalogFromLast patches
// its lookups in place instead of copying them), after which it is
// spent. It is not a Catalog, so that a build that is still to change
// can be neither served nor searched: a Catalog, once built, is never
// changed.
type Last struct {
	c    *Catalog
	read readTable
}

// NewLast makes c, a catalog that nothing else holds (read back from the
// data dir for this), a previous build for NewCatalogFromLast to take
// over; nil for nil.
func NewLast(c *Catalog) *Last {
	if c == nil {
		return nil
	}
	return &Last{c: c}
}

// Catalog returns the previous build, to read (its tools, its hash) and
// not to serve, until NewCatalogFromLast spends it; nil after, or when
// there was none.
func (l *Last) Catalog() *Catalog {
	if l == nil {
		return nil
	}
	return l.c
}

// readTable holds, by domain and name, the tools a read of catalog
// files decoded (those it took from the previous build keep that
// tool's digest): the digest of the bytes of each, and what they
// decoded to.
type readTable map[toolKey]readTool

type readTool struct {
	raw  string   // rawDigest of the tool's bytes
	desc string   // its domain's description, as decoded
	spec ToolSpec // the tool, as decoded
}

// rawOf returns the raw digest of the bytes ts of ds was decoded from,
// if it was read and is still what they decoded to.
func (r readTable) rawOf(ds DomainSpec, ts ToolSpec) (string, bool) {
	if len(r) == 0 {
		return "", false
	}
	e, ok := r[toolKey{ds.Name, ts.Name}]
	if !ok || e.desc != ds.Description || !specEqual(e.spec, ts) {
		return "", false
	}
	return e.raw, true
}

// specEqual reports whether a and b are equal in value (a nil list of
// tags and an empty one are not: the content hash tells them apart).
// Specs that share their strings and bytes compare at the cost of a
// pointer compare per field.
func specEqual(a, b ToolSpec) bool {
	return a.Name == b.Name && a.Title == b.Title && a.Description == b.Description &&
		bytes.Equal(a.InputSchema, b.InputSchema) && bytes.Equal(a.OutputSchema, b.OutputSchema) &&
		bytes.Equal(a.Annotations, b.Annotations) && a.Group == b.Group &&
		(a.Tags == nil) == (b.Tags == nil) && slices.Equal(a.Tags, b.Tags) &&
		(a.Enabled == nil) == (b.Enabled == nil) && (a.Enabled == nil || *a.Enabled == *b.Enabled) &&
		a.Deprecated == b.Deprecated
}

// isSpecOf reports whether ts, of a domain whose description is
// desc (as given), builds exactly t, of a domain described as t's
// catalog has it (trimmed, descOf): its spec as Tool.spec returns it.
func isSpecOf(ts ToolSpec, desc string, t *Tool, descOf string) bool {
	return strings.TrimSpace(desc) == descOf && specEqual(ts, t.spec())
}
