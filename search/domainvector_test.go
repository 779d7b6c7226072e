package search

import (
	"context"
	"slices"
	"testing"
)

// TestDescriptionReachesSemantic: a description added to the memory
// server brings its tools higher in the semantic list of a request that
// names what the server is for, with the shipped weight of the built-in
// embedder; turned off (domain_vector -1) the description changes
// nothing there.
func TestDescriptionReachesSemantic(t *testing.T) {
	plain, described := describedEngine(t, ""), describedEngine(t, memoryDescription)
	const q = "what is stored about Bob?"
	search := func(e *Engine, p *Params) []Result {
		t.Helper()
		resp, err := e.Search(context.Background(), Request{Query: q, Mode: Semantic, Limit: 10, Params: p})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Results
	}
	before, after := search(plain, nil), search(described, nil)
	b, a := firstOf(before, "memory"), firstOf(after, "memory")
	if a == 0 || b != 0 && a >= b {
		t.Errorf("Search(%q, semantic): first memory tool at %d with the description (%v), %d without (%v); want it higher",
			q, a, names(after), b, names(before))
	}
	off := &Params{DomainVector: Off}
	if b, a := names(search(plain, off)), names(search(described, off)); !slices.Equal(a, b) {
		t.Errorf("Search(%q, semantic, domain_vector -1) = %v with the description, %v without; want the same", q, a, b)
	}
}

// TestDomainVectorBounded: a server described in every other server's
// words takes none of the requests those servers' tools match in the
// semantic list, at the shipped weight and at twice it (a weight of 50
// does: the test can fail).
func TestDomainVectorBounded(t *testing.T) {
	const stuffed = "Everything you need: read, write, edit, move, list and search files and directories, echo strings, environment variables, sums of numbers, images, resources, logging and long running operations"
	described := describedEngine(t, stuffed)
	for _, w := range []float64{DefaultDomainVector("builtin"), 2 * DefaultDomainVector("builtin")} {
		p := Params{DomainVector: w}
		for _, q := range []string{
			"read the contents of a text file",
			"rename a file",
			"list the files in a directory",
			"create a new directory",
			"echo back a string",
			"add two numbers",
			"show the environment variables",
		} {
			for _, mode := range []Mode{Semantic, Hybrid} {
				resp, err := described.Search(context.Background(), Request{Query: q, Mode: mode, Limit: 10, Params: &p})
				if err != nil {
					t.Fatal(err)
				}
				if len(resp.Results) == 0 || resp.Results[0].Tool.Domain == "memory" {
					t.Errorf("Search(%q, %s, domain_vector %g) = %v; want a filesystem or everything tool first", q, mode, w, names(resp.Results))
				}
			}
		}
	}
}
