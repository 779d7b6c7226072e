package search

import (
	"context"
	"slices"
	"testing"
)

// TestPseudoFeedbackReorders: Rocchio's feedback (pseudo_feedback) and
// its domain-level form (domain_feedback) re-order the semantic list
// within its depth: off they leave it as it was, on they keep the same
// tools, keep each tool's own similarity as its evidence (the first
// result's similarity never moves) and, at a large weight, change the
// order of at least one request.
func TestPseudoFeedbackReorders(t *testing.T) {
	e := describedEngine(t, "")
	queries := []string{
		"show me what's in notes.txt",
		"what do you remember about me?",
		"what files are in the projects folder?",
		"link the Apollo project to the team that owns it",
		"when was budget.xlsx created?",
		"add 3 and 4",
	}
	search := func(q string, p *Params) []Result {
		t.Helper()
		resp, err := e.Search(context.Background(), Request{Query: q, Mode: Semantic, Limit: 50, Params: p})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Results
	}
	for _, c := range []struct {
		name   string
		on, no Params
	}{
		{"pseudo_feedback", Params{PseudoFeedback: 2}, Params{PseudoFeedback: 0}},
		{"domain_feedback", Params{DomainFeedback: 2}, Params{DomainFeedback: 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			moved := 0
			for _, q := range queries {
				base, off, on := search(q, nil), search(q, &c.no), search(q, &c.on)
				if !slices.Equal(names(off), names(base)) {
					t.Errorf("Search(%q, %s 0) = %v; want the default order %v", q, c.name, names(off), names(base))
				}
				a, b := slices.Sorted(slices.Values(names(on))), slices.Sorted(slices.Values(names(base)))
				if !slices.Equal(a, b) {
					t.Errorf("Search(%q, %s) holds %v; want the same tools as without it, %v", q, c.name, a, b)
				}
				sim := map[string]float64{}
				for _, r := range base {
					sim[r.Tool.QualifiedName] = r.similarity
				}
				for _, r := range on {
					if r.similarity != sim[r.Tool.QualifiedName] {
						t.Errorf("Search(%q, %s): %s's similarity evidence %g; want its own, %g", q, c.name, r.Tool.QualifiedName, r.similarity, sim[r.Tool.QualifiedName])
					}
				}
				if !slices.Equal(names(on), names(base)) {
					moved++
				}
			}
			if moved == 0 {
				t.Errorf("%s at 2 changed the order of none of %d requests; want it to move some", c.name, len(queries))
			}
		})
	}
}
