package server

import (
	"testing"

	"github.com/toolscout/toolscout/index"
)

// TestKnownDomainsManyCounted: past maxNamedDomains domains, KnownDomains
// only counts each domain's enabled tools (no purpose is written), from a
// cached catalog and from specs alike, disabled tools left out: the
// counts the loaded catalog gives.
func TestKnownDomainsManyCounted(t *testing.T) {
	t.Parallel()
	specs, err := index.BuiltinSpecs()
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) <= maxNamedDomains {
		t.Fatalf("the built-in catalog has %d domains, want more than %d", len(specs), maxNamedDomains)
	}
	cat := catalogFirstToolOff(t, specs)
	var names []string
	want := map[string]int{}
	for _, d := range domainSizes(cat, nil) {
		names = append(names, d.Name)
		want[d.Name] = d.Tools
	}
	if want[specs[0].Name] != len(specs[0].Tools)-1 {
		t.Fatalf("the catalog counts %d tools in %s, want %d (one disabled)", want[specs[0].Name], specs[0].Name, len(specs[0].Tools)-1)
	}
	for _, c := range []struct {
		name string
		got  []DomainSize
	}{
		{"cached catalog", KnownDomains(names, cat, Selves{})},
		{"specs", KnownDomains(names, nil, Selves{}, specs)},
		{"specs and known", KnownDomains(names, nil, Selves{}, specs[:3], specs[3:])},
	} {
		if len(c.got) != len(names) {
			t.Fatalf("%s: %d domains, want %d", c.name, len(c.got), len(names))
		}
		for i, d := range c.got {
			if d.Name != names[i] || d.Tools != want[d.Name] || d.Purpose != "" {
				t.Errorf("%s: domain %d is %s with %d tools, purpose %q; want %s with %d, no purpose", c.name, i, d.Name, d.Tools, d.Purpose, names[i], want[names[i]])
			}
		}
	}
}

// catalogFirstToolOff returns the catalog of specs with the first
// domain's first tool disabled (in specs too): counts leave it out.
func catalogFirstToolOff(t *testing.T, specs []index.DomainSpec) *index.Catalog {
	t.Helper()
	off := false
	specs[0].Tools[0].Enabled = &off
	cat, err := index.NewCatalog(specs)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}
