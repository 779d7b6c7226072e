package index

import "testing"

// TestDomainAboutKept: a domain's About (what an upstream says of
// itself beside a configured description) goes from its spec to the
// domain, back to Specs, through Subset, and a patch that changes only
// it makes a new domain.
func TestDomainAboutKept(t *testing.T) {
	spec := func(about string) []DomainSpec {
		return []DomainSpec{{Name: "notes", Description: "Notes", About: about, Tools: []ToolSpec{
			{Name: "read_note", Description: "Read a note.", InputSchema: []byte(`{"type":"object"}`)}}}}
	}
	cat, err := NewCatalog(spec("Notes Server. Keeps notes."))
	if err != nil {
		t.Fatal(err)
	}
	if a := cat.Domain("notes").About; a != "Notes Server. Keeps notes." {
		t.Errorf("Domain.About = %q", a)
	}
	if a := cat.Specs()[0].About; a != "Notes Server. Keeps notes." {
		t.Errorf("Specs()[0].About = %q", a)
	}
	if a := cat.Subset(func(*Tool) bool { return true }).Domain("notes").About; a != "Notes Server. Keeps notes." {
		t.Errorf("Subset: About = %q", a)
	}
	next, err := NewCatalogFrom(spec("Notes Server v2. Keeps notes and lists."), cat)
	if err != nil {
		t.Fatal(err)
	}
	if a := next.Domain("notes").About; a != "Notes Server v2. Keeps notes and lists." {
		t.Errorf("after a patch that changes only About: %q", a)
	}
}
