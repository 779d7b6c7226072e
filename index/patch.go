package index

import (
	"maps"
	"slices"
	"sort"
	"strings"
)

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
func patchCatalog(specs []DomainSpec, prev *Catalog, read readTable, own bool) (c *Catalog, ok bool) {
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
	// The tools whose specs are, in value, those of prev's at their
	// place, and not read from other bytes, are prev's (buildTool would
	// share them); the others are built.
	type job struct{ i, j, k int }
	var jobs []job
	k = 0
	for i, ds := range specs {
		sameDesc := strings.TrimSpace(ds.Description) == pds[i].Description
		for j, ts := range ds.Tools {
			p := prev.tools[k]
			if !sameDesc || !specEqual(ts, p.spec()) || !hasOwnQName(p) {
				jobs = append(jobs, job{i, j, k})
			} else if raw, isRead := read.rawOf(ds, ts); isRead && raw != p.rawDigest() {
				jobs = append(jobs, job{i, j, k})
			}
			k++
		}
	}
	built := make([]builtTool, len(jobs)) // built[x] is jobs[x]'s
	inParallel(len(jobs), func(lo, hi int) {
		for x := lo; x < hi; x++ {
			ds := specs[jobs[x].i]
			built[x] = buildTool(ds, ds.Tools[jobs[x].j], prev.tools[jobs[x].k], pds[jobs[x].i].Description, read)
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
		about := strings.TrimSpace(ds.About)
		if same && desc == pds[i].Description && about == pds[i].About {
			continue
		}
		d := &Domain{Name: ds.Name, Description: desc, About: about, words: SplitIdentifier(ds.Name), Tools: slices.Clip(c.tools[start:])}
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
