package vector

import (
	"context"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/indextest"
)

// rowCentroids returns s's domain centroids computed from its rows, as
// before the files held the domains' sums: s without them.
func rowCentroids(s *snapshot) map[string][]float32 {
	c := &snapshot{dims: s.dims, ids: s.ids, hash: s.hash, domain: s.domain, group: s.group, mat: s.mat, half: s.half,
		dead: s.dead, ndead: s.ndead, top: s.top}
	return c.domainCentroids()
}

// TestCentroidsFromFileSums: a collection read from its file takes its
// domains' centroids from the sums the file holds, bit for bit the ones
// its rows give; with a delta (a layer on top, rows of the base dead)
// the domains the delta touched are added up from their rows, the others
// taken from the sums, and all are still bit for bit the rows'; a file
// of the format before the sums (TSSNAP07) gives the same domain
// similarities as the current one.
func TestCentroidsFromFileSums(t *testing.T) {
	ctx := context.Background()
	a, b := deltaCatalogs(t)
	dir := t.TempDir()
	w, _ := Open(dir)
	if _, err := w.Sync(ctx, testCol, a, &indextest.CountingEmbedder{}, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	vs, _ := Open(dir)
	s, err := vs.snapshot(ctx, testCol)
	if err != nil || s == nil {
		t.Fatalf("snapshot: read %v, %v", s != nil, err)
	}
	if len(s.domain.Names) < 2 || len(s.sums) != len(s.domain.Names)*s.dims || s.top != nil {
		t.Fatalf("read %d sums' values for %d domains of %d dimensions; want them all, one layer", len(s.sums), len(s.domain.Names), s.dims)
	}
	if got, want := s.domainCentroids(), rowCentroids(s); !reflect.DeepEqual(got, want) {
		t.Errorf("centroids from the file's sums differ from the rows':\n got %v\nwant %v", got, want)
	}
	queries := [][]float32{indextest.HashVec("send a message"), indextest.HashVec(index.DocumentText(a.Tools()[0]))}
	sims := func(vs *Store) []map[string]float32 {
		var out []map[string]float32
		for _, q := range queries {
			m, err := vs.DomainSimilarity(ctx, testCol, q)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
		return out
	}
	want := sims(vs)

	// The format before the sums: the same similarities, bit for bit.
	path := vs.fileOf(testCol.Name())
	data, _ := os.ReadFile(path)
	os.WriteFile(path, toOld(t, data, snapV7), 0o644)
	old := OpenReadOnly(dir)
	if got := sims(old); !reflect.DeepEqual(got, want) {
		t.Errorf("domain similarities from a TSSNAP07 file = %v, want %v", got, want)
	}

	// A delta: from the rows, the delta's included.
	ddir, _, _ := syncedDelta(t, a, b)
	dvs, _ := Open(ddir)
	ds, err := dvs.snapshot(ctx, testCol)
	if err != nil || ds == nil || ds.top == nil {
		t.Fatalf("snapshot with a delta: read %v, a layer on top %v, err %v; want one with a layer on top", ds != nil, ds != nil && ds.top != nil, err)
	}
	if got, rows := ds.domainCentroids(), rowCentroids(ds); !reflect.DeepEqual(got, rows) {
		t.Errorf("centroids of a collection with a delta differ from its rows':\n got %v\nwant %v", got, rows)
	}
	// Only the domains the delta touched are added up from their rows:
	// the others' rows zeroed in a copy, their centroids stay the file's.
	touched := map[string]bool{}
	for i, dead := range ds.dead {
		if dead {
			touched[ds.domain.At(i)] = true
		}
	}
	for _, d := range ds.top.domain.Names {
		touched[d] = true
	}
	if len(touched) == 0 || len(touched) == len(ds.domain.Names) {
		t.Fatalf("the delta touches domains %v of %v: want some, not all", touched, ds.domain.Names)
	}
	zeroed := slices.Clone(ds.half)
	for i := range ds.ids {
		if !touched[ds.domain.At(i)] {
			clear(zeroed[i*ds.dims : (i+1)*ds.dims])
		}
	}
	cp := &snapshot{dims: ds.dims, ids: ds.ids, hash: ds.hash, domain: ds.domain, group: ds.group, half: zeroed, sums: ds.sums,
		dead: ds.dead, ndead: ds.ndead, top: ds.top}
	if got := cp.domainCentroids(); !reflect.DeepEqual(got, ds.domainCentroids()) {
		t.Errorf("with the untouched domains' rows zeroed, the centroids changed: they were added up from the rows, not taken from the file's sums")
	}
}
