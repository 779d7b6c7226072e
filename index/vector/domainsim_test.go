package vector

import (
	"context"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/indextest"
)

// TestDomainSimilaritiesInto: the similarities are DomainSimilarity's,
// one per domain, each found by its name (Of) and by its place (Name,
// At); a name the collection lacks has none; the slice given is written
// over (a value left from an earlier search is gone) and reused, so a
// search that gives back its buffer allocates nothing of the domains
// (only the request's normalised vector and the collection's name); the
// domains' order and index are made once per snapshot, not per search.
func TestDomainSimilaritiesInto(t *testing.T) {
	ctx := context.Background()
	vs, cat := syncedSmall(t)
	q := indextest.HashVec(index.DocumentText(cat.Tool("slack__post_message")))
	want, err := vs.DomainSimilarity(ctx, testCol, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(cat.Domains()) || len(want) < 2 {
		t.Fatalf("DomainSimilarity gave %d domains, want %d (two or more)", len(want), len(cat.Domains()))
	}
	buf := make([]float32, 0, 64)
	buf = append(buf, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9) // stale values
	d, err := vs.DomainSimilaritiesInto(ctx, testCol, q, buf)
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != len(want) {
		t.Fatalf("DomainSimilaritiesInto holds %d domains, want %d", d.Len(), len(want))
	}
	if &d.Buffer()[0] != &buf[:1][0] {
		t.Error("DomainSimilaritiesInto wrote into another slice than the one it was given, which had room")
	}
	seen := map[string]bool{}
	for i := range d.Len() {
		name := d.Name(i)
		if seen[name] {
			t.Errorf("domain %q twice", name)
		}
		seen[name] = true
		if w, ok := want[name]; !ok || d.At(i) != w {
			t.Errorf("domain %d %q: %v, DomainSimilarity's %v (%v)", i, name, d.At(i), w, ok)
		}
		if s, ok := d.Of(name); !ok || s != want[name] {
			t.Errorf("Of(%q) = %v, %v; want %v, true", name, s, ok, want[name])
		}
	}
	if s, ok := d.Of("no_such_domain"); ok {
		t.Errorf("Of(no_such_domain) = %v, true; want none", s)
	}
	if s, ok := (DomainSims{}).Of("slack"); ok || (DomainSims{}).Len() != 0 {
		t.Errorf("the zero DomainSims holds slack (%v)", s)
	}
	d2, err := vs.DomainSimilaritiesInto(ctx, testCol, indextest.HashVec("open an issue"), d.Buffer())
	if err != nil {
		t.Fatal(err)
	}
	if d2.t != d.t {
		t.Error("a second search made the domains' order again; want it made once per snapshot")
	}
	again := d2.Buffer()
	reused := testing.AllocsPerRun(50, func() { d2, _ = vs.DomainSimilaritiesInto(ctx, testCol, q, again) })
	if reused > 2 {
		t.Errorf("DomainSimilaritiesInto with its buffer given back: %v allocations a search; want at most 2 (the normalised request, the collection's name)", reused)
	}
	if _, err := vs.DomainSimilaritiesInto(ctx, testCol, make([]float32, 3), nil); err == nil {
		t.Error("DomainSimilaritiesInto with a 3-dimensional vector succeeded on a 16-dimensional collection")
	}
}
