package vector

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/indextest"
)

// liveRows returns a store's vectors by tool ID.
func liveRows(t *testing.T, vs *Store) map[string]snapRow {
	t.Helper()
	s, err := vs.snapshot(context.Background(), testCol)
	if err != nil || s == nil {
		t.Fatalf("snapshot: %v, %v", s, err)
	}
	out := map[string]snapRow{}
	s.each(func(l *snapshot, i int) { out[l.ids[i]] = l.rowOf(i) })
	if len(out) != s.count() {
		t.Fatalf("each saw %d rows, count says %d", len(out), s.count())
	}
	return out
}

// sameVectors fails unless vs holds what a store built whole from cat
// holds, and answers queries the same.
func sameVectors(t *testing.T, step string, vs *Store, cat *index.Catalog) {
	t.Helper()
	ctx := context.Background()
	ref, _ := Open("")
	if _, err := ref.Sync(ctx, testCol, cat, &indextest.CountingEmbedder{}, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	got, want := liveRows(t, vs), liveRows(t, ref)
	if len(got) != len(want) {
		t.Fatalf("%s: %d vectors, want %d", step, len(got), len(want))
	}
	for id, w := range want {
		g, ok := got[id]
		if !ok || g.hash != w.hash || g.domain != w.domain || g.group != w.group {
			t.Fatalf("%s: %s is %+v, want %+v", step, id, g, w)
		}
		for j := range w.vec {
			if math.Abs(float64(g.vec[j]-w.vec[j])) > 1e-6 {
				t.Fatalf("%s: %s's vector differs", step, id)
			}
		}
	}
	for _, q := range []string{"alpha bravo", "Added later", "echo golf hotel", "kilo"} {
		for _, domain := range []string{"", "dom0"} {
			g, err1 := vs.Query(ctx, testCol, indextest.HashVec(q), 7, domain, "")
			w, err2 := ref.Query(ctx, testCol, indextest.HashVec(q), 7, domain, "")
			if err1 != nil || err2 != nil || !sameHits(g, w, want, q) {
				t.Fatalf("%s: query %q in %q = %v, %v; want %v", step, q, domain, g, err1, w)
			}
		}
	}
	id := cat.Tools()[3].QualifiedName
	g, _ := vs.Neighbors(ctx, testCol, id, 4, "")
	w, _ := ref.Neighbors(ctx, testCol, id, 4, "")
	if !sameHits(g, w, want, "") || len(w) != 4 {
		t.Fatalf("%s: neighbours of %s = %v, want %v", step, id, g, w)
	}
}

// sameHits: g ranks like w, as far as float sums allow. Dot products of
// the same vectors can differ in the last bit with their place in memory
// (SIMD), which reorders ties: so each rank's similarity must match w's,
// and each ID of g must have that similarity to the query (q; "" for a
// neighbours list, where only the similarities are checked).
func sameHits(g, w []Hit, rows map[string]snapRow, q string) bool {
	if len(g) != len(w) {
		return false
	}
	qv := normalized(indextest.HashVec(q))
	for i := range g {
		if math.Abs(float64(g[i].Similarity-w[i].Similarity)) > 1e-5 {
			return false
		}
		if q != "" && math.Abs(float64(dot(qv, rows[g[i].ID].vec)-g[i].Similarity)) > 1e-5 {
			return false
		}
	}
	return true
}

func fileState(t *testing.T, path string) (time.Time, bool) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}, false
	}
	return fi.ModTime(), true
}

// TestSmallChangesGoToADelta: a change of a few tools writes the delta
// files, not the collection; reopening reads base and delta without
// embedding; a large change writes the collection
// whole and removes the delta. At every step the store holds, and answers
// with, what a store built whole from the same catalog does.
func TestSmallChangesGoToADelta(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sync := func(cat *index.Catalog) (index.SyncStats, int, *Store) {
		t.Helper()
		vs, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		emb := &indextest.CountingEmbedder{}
		st, err := vs.Sync(ctx, testCol, cat, emb, SyncOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return st, emb.Texts, vs
	}
	base := filepath.Join(dir, filepath.Base((&Store{dir: dir}).fileOf(testCol.Name())))
	delta := deltaFileOf(base)

	a := indextest.DeltaCatalog(t, nil, nil)
	if st, n, _ := sync(a); st.Added != 100 || n != 100 {
		t.Fatalf("first sync: %+v, %d embedded", st, n)
	}
	baseTime, _ := fileState(t, base)

	// 3 changed, 2 removed, 2 added: 7 of 100, under a tenth.
	b := indextest.DeltaCatalog(t, []string{"new1", "new2"}, func(d, i int, tool map[string]any) bool {
		if d == 1 && i < 3 {
			tool["description"] = fmt.Sprintf("Changed tool %d.", i)
		}
		return !(d == 2 && i < 2)
	})
	st, n, vs := sync(b)
	if st.Changed != 3 || st.Added != 2 || st.Removed != 2 || n != 5 {
		t.Fatalf("small change: %+v, %d embedded; want 3 changed, 2 added, 2 removed, 5 embedded", st, n)
	}
	if bt, _ := fileState(t, base); !bt.Equal(baseTime) {
		t.Error("a small change rewrote the collection file")
	}
	if _, ok := fileState(t, delta); !ok {
		t.Fatal("no delta file after a small change")
	}
	sameVectors(t, "after the delta", vs, b)

	st, n, vs = sync(b)
	if st.Unchanged != 100 || n != 0 {
		t.Fatalf("reopen: %+v, %d embedded", st, n)
	}
	sameVectors(t, "reopened with the delta", vs, b)

	// A second small change: a delta tool changed again, an added one
	// removed, a base tool changed.
	c := indextest.DeltaCatalog(t, []string{"new2"}, func(d, i int, tool map[string]any) bool {
		if d == 1 && i < 3 {
			tool["description"] = fmt.Sprintf("Changed tool %d.", i)
		}
		if d == 1 && i == 0 || d == 3 && i == 5 {
			tool["description"] = "Changed twice."
		}
		return !(d == 2 && i < 2)
	})
	st, n, vs = sync(c)
	if st.Changed != 2 || st.Removed != 1 || n != 2 {
		t.Fatalf("second small change: %+v, %d embedded", st, n)
	}
	if bt, _ := fileState(t, base); !bt.Equal(baseTime) {
		t.Error("the second small change rewrote the collection file")
	}
	sameVectors(t, "after the second delta", vs, c)
	_, _, vs = sync(c)
	sameVectors(t, "reopened with the second delta", vs, c)

	// 20 changed: over a tenth, so the collection is written whole.
	d := indextest.DeltaCatalog(t, []string{"new2"}, func(d, i int, tool map[string]any) bool {
		if d == 4 {
			tool["description"] = fmt.Sprintf("Rewritten %d.", i)
		}
		return !(d == 2 && i < 2)
	})
	st, n, vs = sync(d)
	if n != 20+4 {
		t.Fatalf("large change: %+v, %d embedded; want 24 (20 new, 4 back to their first version)", st, n)
	}
	if bt, _ := fileState(t, base); bt.Equal(baseTime) {
		t.Error("a large change did not rewrite the collection file")
	}
	if _, ok := fileState(t, delta); ok {
		t.Error("the delta is still there after a full write")
	}
	sameVectors(t, "after the full write", vs, d)
	st, n, vs = sync(d)
	if n != 0 {
		t.Fatalf("reopen after the full write: %+v, %d embedded", st, n)
	}
	sameVectors(t, "reopened after the full write", vs, d)
}

// deltaCatalogs returns two catalogs: b is a with 3 tools changed, one
// added and one removed, few enough for a delta.
func deltaCatalogs(t *testing.T) (a, b *index.Catalog) {
	t.Helper()
	a = indextest.DeltaCatalog(t, nil, nil)
	b = indextest.DeltaCatalog(t, []string{"new1"}, func(d, i int, tool map[string]any) bool {
		if d == 1 && i < 3 {
			tool["description"] = fmt.Sprintf("Changed tool %d.", i)
		}
		return !(d == 2 && i == 0)
	})
	return a, b
}

// syncedDelta syncs a, then b, into a fresh vector store and returns its
// dir, collection file and delta file.
func syncedDelta(t *testing.T, a, b *index.Catalog) (dir, base, delta string) {
	t.Helper()
	dir = t.TempDir()
	for _, cat := range []*index.Catalog{a, b} {
		vs, _ := Open(dir)
		if _, err := vs.Sync(context.Background(), testCol, cat, &indextest.CountingEmbedder{}, SyncOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	base = (&Store{dir: dir}).fileOf(testCol.Name())
	return dir, base, deltaFileOf(base)
}

// TestDeltaHeals: a delta whose bytes changed is removed, its tools
// embedded again, with a warning; one written for another version of the
// base (a kill after a full write, before the delta's removal) is
// removed without one, its tools embedded again.
func TestDeltaHeals(t *testing.T) {
	ctx := context.Background()
	a, b := deltaCatalogs(t)
	for _, damage := range []string{"garbage", "flipped", "earlier format", "other base"} {
		t.Run(damage, func(t *testing.T) {
			dir, base, delta := syncedDelta(t, a, b)
			switch damage {
			case "garbage":
				os.WriteFile(delta, []byte("TSSNAP05 garbage"), 0o644)
			case "flipped":
				data, _ := os.ReadFile(delta)
				data[len(data)/2] ^= 0x40
				os.WriteFile(delta, data, 0o644)
			case "earlier format":
				data, _ := os.ReadFile(delta)
				os.WriteFile(delta, append([]byte("TSSNAP04"), data[8:]...), 0o644)
			case "other base":
				// As if a full write had replaced the collection file and
				// a kill came before the delta's removal.
				s, _, _, err := readSnap(base)
				if err != nil {
					t.Fatal(err)
				}
				if err := writeSnap(base, s, nil, newFileID(), 0); err != nil {
					t.Fatal(err)
				}
			}
			vs, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			emb := &indextest.CountingEmbedder{}
			st, err := vs.Sync(ctx, testCol, b, emb, SyncOptions{})
			if err != nil || emb.Texts != 4 { // 3 changed, 1 added since the base
				t.Fatalf("sync = %+v, %v, %d embedded; want 4", st, err, emb.Texts)
			}
			warned := damage != "other base"
			if h := vs.Healed(); len(h) != map[bool]int{true: 1}[warned] || warned && !strings.Contains(h[0], "vector delta") {
				t.Errorf("Healed = %q, want one line about the delta: %v", h, warned)
			}
			sameVectors(t, damage, vs, b)
			// Healed for good: the next open reads the files as they are.
			vs, _ = Open(dir)
			emb = &indextest.CountingEmbedder{}
			if _, err := vs.Sync(ctx, testCol, b, emb, SyncOptions{}); err != nil || emb.Texts != 0 || len(vs.Healed()) != 0 {
				t.Fatalf("second open: %v, %d embedded, healed %q", err, emb.Texts, vs.Healed())
			}
			sameVectors(t, damage+", reopened", vs, b)
		})
	}
}

// TestColdSyncRowsInIDOrder: a cold sync's snapshot is the matrix its
// vectors were embedded into, rows in ID order even where the catalog's
// order is not ("a__y" comes after "a1__x").
func TestColdSyncRowsInIDOrder(t *testing.T) {
	ctx := context.Background()
	cat := indextest.MustCatalog(t, `{"domains":[
 {"name":"a","description":"A","tools":[
  {"name":"y","description":"Yank the rope.","inputSchema":{"type":"object"}},
  {"name":"z","description":"Zip the files.","inputSchema":{"type":"object"}}]},
 {"name":"a1","description":"A1","tools":[
  {"name":"x","description":"Xray the bag.","inputSchema":{"type":"object"}}]}]}`)
	for _, dir := range []string{"", t.TempDir()} {
		vs, _ := Open(dir)
		if _, err := vs.Sync(ctx, testCol, cat, &indextest.CountingEmbedder{}, SyncOptions{}); err != nil {
			t.Fatal(err)
		}
		s, _ := vs.snapshot(ctx, testCol)
		if !slices.IsSorted(s.ids) {
			t.Fatalf("snapshot rows %v are not in ID order", s.ids)
		}
		for _, tool := range cat.Tools() {
			hits, err := vs.Query(ctx, testCol, indextest.HashVec(index.DocumentText(tool)), 1, "", "")
			if err != nil || len(hits) != 1 || hits[0].ID != tool.QualifiedName || hits[0].Similarity < 0.999 {
				t.Errorf("dir %q: query by %s's own vector = %v, %v", dir, tool.QualifiedName, hits, err)
			}
			if n, err := vs.Neighbors(ctx, testCol, tool.QualifiedName, 2, ""); err != nil || len(n) != 2 {
				t.Errorf("dir %q: neighbours of %s = %v, %v", dir, tool.QualifiedName, n, err)
			}
		}
	}
}
