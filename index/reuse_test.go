package index

import (
	"bytes"
	"strings"
	"testing"
)

// reindex builds doc as toolscout index does after a build saved in s:
// the previous build read back from it, the files read against it
// (SpecsFromLast), the catalog built taking it over (NewCatalogFromLast)
// and saved. It returns the catalog, the previous build's tools by key
// (as they were before the build took it over), the number of tools the
// read decoded, and whether the build could patch the previous catalog.
func reindex(t *testing.T, s *memCache, doc string) (cat *Catalog, prev map[string]*Tool, decoded int, patched bool) {
	t.Helper()
	src := &CatalogSource{names: []string{"test"}, data: [][]byte{[]byte(doc)}}
	prev = map[string]*Tool{}
	specs, last, err := src.SpecsFromLast(func() *Last {
		c := s.LastCatalog()
		for _, tl := range c.Tools() {
			prev[tl.Domain+"/"+tl.Name] = tl
		}
		return NewLast(c)
	})
	if err != nil {
		t.Fatal(err)
	}
	decoded = len(last.read)
	_, patched = patchCatalog(specs, last.c, last.read, false)
	cat, err = NewCatalogFromLast(specs, last)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveCatalog(src.Key(), cat); err != nil {
		t.Fatal(err)
	}
	return cat, prev, decoded, patched
}

// savedBuild returns a cache holding the first build of doc, and that
// build.
func savedBuild(t *testing.T, doc string) (*memCache, *Catalog) {
	t.Helper()
	first, err := buildFrom(doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &memCache{}
	if err := s.SaveCatalog(strings.Repeat("ab", 32), first); err != nil {
		t.Fatal(err)
	}
	return s, first
}

// TestReindexReusesUnchangedTools: a re-index through the product's path
// takes every unchanged tool over from the previous build (the very
// tool, not a copy or a rebuild), builds the changed and new ones, and
// records the bytes of those it built, so that the next re-index of the
// same files decodes nothing. It fails if reuse silently stops.
func TestReindexReusesUnchangedTools(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(string) string
		changed []string // the tools built anew, by key
		patched bool     // the previous catalog patched (same shape), not rebuilt
	}{
		{"a description edited in place", func(d string) string {
			return strings.Replace(d, "List drafts.", "List the drafts.", 1)
		}, []string{"zeta/list-drafts"}, true},
		{"a tool inserted", func(d string) string {
			return strings.Replace(d, `{"name":"list-drafts"`, `{"name":"inserted","description":"New.","inputSchema":{"type":"object"}},{"name":"list-drafts"`, 1)
		}, []string{"zeta/inserted"}, false},
		{"a domain description edited", func(d string) string {
			return strings.Replace(d, "Last by name, first in the file.", "Last by name.", 1)
		}, []string{"zeta/send.mail", "zeta/send_mail", "zeta/list-drafts"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := savedBuild(t, richCatalog)
			doc := tc.edit(richCatalog)
			if doc == richCatalog {
				t.Fatal("test edit changed nothing")
			}
			got, prev, decoded, patched := reindex(t, s, doc)
			if patched != tc.patched {
				t.Errorf("the previous catalog patched: %v, want %v", patched, tc.patched)
			}
			if want, _ := buildWhole(doc); !sameValue(got, nil, want, nil) {
				t.Fatal("the re-index differs from a build from scratch")
			}
			changed := map[string]bool{}
			for _, k := range tc.changed {
				changed[k] = true
			}
			for _, tl := range got.Tools() {
				key := tl.Domain + "/" + tl.Name
				switch old := prev[key]; {
				case changed[key] && old == tl:
					t.Errorf("%s changed, but is the previous build's tool", key)
				case !changed[key] && old != tl:
					t.Errorf("%s is unchanged, but was built again (previous %p, now %p)", key, old, tl)
				}
			}
			if n, ok := got.Changes(); !ok || n != len(tc.changed) {
				t.Errorf("Changes() = %d, %v; want %d", n, ok, len(tc.changed))
			}
			// The next re-index of the same files reads every tool by the
			// digest of its bytes, the ones built this time included.
			again, prev, decoded2, _ := reindex(t, s, doc)
			if decoded2 != 0 {
				t.Errorf("the second re-index of unchanged files decoded %d tools (the first %d); want 0", decoded2, decoded)
			}
			for _, tl := range again.Tools() {
				if prev[tl.Domain+"/"+tl.Name] != tl {
					t.Errorf("second re-index: %s/%s was built again", tl.Domain, tl.Name)
				}
			}
		})
	}
}

// sameValue is sameBuild, but for what a tool was built from (src: a
// digest of the spec as given, schemas canonical or not) as well as the
// bytes it was read from: only what the tools are.
func sameValue(a *Catalog, aErr error, b *Catalog, bErr error) bool {
	if aErr != nil || bErr != nil {
		return sameBuild(a, aErr, b, bErr)
	}
	strip := func(c *Catalog) *Catalog {
		cp := newEmptyCatalog(c.Len())
		for _, d := range c.Domains() {
			nd := *d
			nd.Tools = nil
			for _, t := range d.Tools {
				x := *t
				x.edit().src = ""
				nd.Tools = append(nd.Tools, &x)
				cp.add(&x)
			}
			cp.domains = append(cp.domains, &nd)
		}
		cp.hash = c.hash
		return cp
	}
	return sameBuild(strip(a), nil, strip(b), nil)
}

// cloneSpecs returns a deep copy of specs, sharing no string or byte with
// them.
func cloneSpecs(specs []DomainSpec) []DomainSpec {
	out := make([]DomainSpec, len(specs))
	for i, ds := range specs {
		out[i] = DomainSpec{Name: strings.Clone(ds.Name), Description: strings.Clone(ds.Description), Source: ds.Source}
		if ds.Tools == nil {
			continue
		}
		out[i].Tools = make([]ToolSpec, len(ds.Tools))
		for j, ts := range ds.Tools {
			c := ToolSpec{Name: strings.Clone(ts.Name), Title: strings.Clone(ts.Title), Description: strings.Clone(ts.Description),
				InputSchema: bytes.Clone(ts.InputSchema), OutputSchema: bytes.Clone(ts.OutputSchema), Annotations: bytes.Clone(ts.Annotations),
				Group: strings.Clone(ts.Group), Deprecated: Deprecation(strings.Clone(string(ts.Deprecated)))}
			if ts.Tags != nil {
				c.Tags = make([]string, len(ts.Tags))
				for k, tag := range ts.Tags {
					c.Tags[k] = strings.Clone(tag)
				}
			}
			if ts.Enabled != nil {
				c.Enabled = new(bool)
				*c.Enabled = *ts.Enabled
			}
			out[i].Tools[j] = c
		}
	}
	return out
}

// TestEqualSpecsBuildEqualCatalogs: a spec is plain data. Specs equal in
// value build the same catalog, and take the same tools over from the
// previous build, whether they were read against that build (sharing its
// tools' bytes) or are copies; and a spec read against the previous
// build and then changed builds what its new value says, as a build from
// scratch of that value does.
func TestEqualSpecsBuildEqualCatalogs(t *testing.T) {
	s, first := savedBuild(t, richCatalog)
	read, _, err := readFrom(richCatalog, s.LastCatalog())
	if err != nil {
		t.Fatal(err)
	}
	edited := cloneSpecs(read)
	edited[0].Tools[2].Description = "List the drafts."
	editedRead, _, err := readFrom(richCatalog, s.LastCatalog())
	if err != nil {
		t.Fatal(err)
	}
	editedRead[0].Tools[2].Description = "List the drafts."
	editedDoc := strings.Replace(richCatalog, "List drafts.", "List the drafts.", 1)
	if editedRead[0].Tools[2].Name != "list-drafts" || editedDoc == richCatalog {
		t.Fatal("test catalog: zeta's third tool is not list-drafts")
	}
	want, werr := buildWhole(richCatalog)
	wantEdited, eerr := buildWhole(editedDoc)
	for _, tc := range []struct {
		name   string
		specs  []DomainSpec
		want   *Catalog
		wErr   error
		shared int // tools taken over from the previous build
	}{
		{"read against the previous build", read, want, werr, first.Len()},
		{"a copy of those", cloneSpecs(read), want, werr, first.Len()},
		{"a copy, one tool then changed", edited, wantEdited, eerr, first.Len() - 1},
		{"read against the previous build, one tool then changed", editedRead, wantEdited, eerr, first.Len() - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prev := s.LastCatalog()
			old := map[*Tool]bool{}
			for _, tl := range prev.Tools() {
				old[tl] = true
			}
			for _, build := range []struct {
				name string
				f    func() (*Catalog, error)
			}{
				{"NewCatalogFrom", func() (*Catalog, error) { return NewCatalogFrom(tc.specs, prev) }},
				{"NewCatalogFromLast", func() (*Catalog, error) { return NewCatalogFromLast(tc.specs, NewLast(s.LastCatalog())) }},
			} {
				got, err := build.f()
				if !sameValue(got, err, tc.want, tc.wErr) {
					t.Fatalf("%s: the catalog differs from a build from scratch of the same value (%v)", build.name, err)
				}
				if d := got.ToolByKey("zeta/list-drafts").Description; d != tc.specs[0].Tools[2].Description {
					t.Errorf("%s: zeta/list-drafts is described %q, its spec %q", build.name, d, tc.specs[0].Tools[2].Description)
				}
				if build.name != "NewCatalogFrom" {
					continue
				}
				shared := 0
				for _, tl := range got.Tools() {
					if old[tl] {
						shared++
					}
				}
				if shared != tc.shared {
					t.Errorf("%s: %d tools taken over from the previous build, want %d", build.name, shared, tc.shared)
				}
			}
		})
	}
}
