package vector

import (
	"context"
	"runtime"
	"slices"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/indextest"
	"github.com/toolscout/toolscout/internal/synth"
)

// mapChanges is changes as Sync computed it before: a map of the
// snapshot's live IDs to their hashes, each catalog tool looked up in it,
// each of its IDs looked up in the catalog.
func mapChanges(old *snapshot, cat *index.Catalog) (st index.SyncStats, todo []*index.Tool, removed []string) {
	existing := map[string]string{}
	if old != nil {
		old.each(func(l *snapshot, i int) { existing[l.ids[i]] = l.hash[i] })
	}
	for _, t := range cat.Tools() {
		h, ok := existing[t.QualifiedName]
		switch {
		case !ok:
			st.Added++
			todo = append(todo, t)
		case h != t.Hash:
			st.Changed++
			todo = append(todo, t)
		default:
			st.Unchanged++
		}
	}
	for id := range existing {
		if cat.Tool(id) == nil {
			removed = append(removed, id)
		}
	}
	slices.Sort(removed)
	return st, todo, removed
}

// TestChanges: what a sync embeds and removes is what a map of the
// snapshot's IDs gave, for a collection of one layer and one with a
// delta on top (base rows dead, rows on top), against catalogs with
// tools changed, added and removed, and none.
func TestChanges(t *testing.T) {
	ctx := context.Background()
	a, b := deltaCatalogs(t)
	c := indextest.DeltaCatalog(t, []string{"new2"}, func(d, i int, tool map[string]any) bool { return !(d == 1 && i == 1 || d == 3 && i > 15) })
	one, _ := Open("")
	if _, err := one.Sync(ctx, testCol, a, &indextest.CountingEmbedder{}, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	ddir, _, _ := syncedDelta(t, a, b)
	withDelta, _ := Open(ddir)
	for name, vs := range map[string]*Store{"one layer": one, "with a delta": withDelta, "empty": nil} {
		var old *snapshot
		if vs != nil {
			var err error
			if old, err = vs.snapshot(ctx, testCol); err != nil || old == nil {
				t.Fatalf("%s: snapshot %v, %v", name, old != nil, err)
			}
			if name == "with a delta" && (old.top == nil || old.dead == nil) {
				t.Fatalf("%s: no layer on top or no dead row", name)
			}
		}
		for cname, cat := range map[string]*index.Catalog{"a": a, "b": b, "c": c} {
			var st index.SyncStats
			todo, removed := changes(old, cat, &st)
			slices.Sort(removed)
			wst, wtodo, wremoved := mapChanges(old, cat)
			if st != wst || !slices.Equal(todo, wtodo) || !slices.Equal(removed, wremoved) {
				t.Errorf("%s, catalog %s: changes = %+v, %d to embed, removed %q; want %+v, %d, %q", name, cname, st, len(todo), removed, wst, len(wtodo), wremoved)
			}
		}
	}
}

// TestUnchangedSyncAllocatesLittle: a sync that finds every tool as it
// is (a server's start) allocates no table of the collection's IDs: a
// few KB at 5,000 tools, where a map of them took 650 KB.
func TestUnchangedSyncAllocatesLittle(t *testing.T) {
	ctx := context.Background()
	cat, err := index.NewCatalog(synth.Specs(5000, 100, 1))
	if err != nil {
		t.Fatal(err)
	}
	vs, _ := Open("")
	emb := &indextest.CountingEmbedder{}
	if _, err := vs.Sync(ctx, testCol, cat, emb, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	st, err := vs.Sync(ctx, testCol, cat, emb, SyncOptions{})
	runtime.ReadMemStats(&after)
	if err != nil || st.Unchanged != 5000 {
		t.Fatalf("second sync: %+v, %v", st, err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Errorf("an unchanged sync of 5,000 tools allocated %d bytes; want at most 64 KiB", n)
	}
}
