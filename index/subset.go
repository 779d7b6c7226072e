package index

// Subset returns a catalog of the tools of c that keep accepts, sharing
// c's tools (and so their qualified names): a caller's view of the
// catalog (server/callers), in which a tool left out is exactly one that
// does not exist. Resolve, Domain, ToolsNamed and the lookups answer
// from the kept tools only; a domain without kept tools is left out,
// and a domain's groups are those of its kept tools. The subset is
// never written to the cache (it has no base) and has its own Hash.
func (c *Catalog) Subset(keep func(*Tool) bool) *Catalog {
	out := newEmptyCatalog(0)
	for _, d := range c.domains {
		var nd *Domain
		groups := map[string]bool{}
		for _, t := range d.Tools {
			if !keep(t) {
				continue
			}
			if nd == nil {
				nd = &Domain{Name: d.Name, Description: d.Description, About: d.About, words: d.words}
			}
			nd.Tools = append(nd.Tools, t)
			if t.Group != "" {
				groups[t.Group] = true
			}
		}
		if nd == nil {
			continue
		}
		for _, g := range d.Groups { // sorted already
			if groups[g] {
				nd.Groups = append(nd.Groups, g)
			}
		}
		out.domains = append(out.domains, nd)
	}
	// Catalog order, as c has it.
	for _, t := range c.tools {
		if out.Domain(t.Domain) != nil && keep(t) {
			out.add(t)
			if !hasOwnQName(t) {
				out.setRenamed(t)
			}
		}
	}
	for _, cl := range c.clashes {
		if t := out.byQName[cl.QualifiedName]; t != nil && out.byQName[cl.With] != nil {
			out.clashes = append(out.clashes, cl)
		}
	}
	out.hash = catalogHash(out.tools)
	return out
}
