package vector

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	chromem "github.com/philippgille/chromem-go"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/fileio"
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
// loading chromem-go or embedding; a large change writes the collection
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
	if vs.imported[testCol.Name()] {
		t.Error("reopening with a delta imported the export")
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
	if _, ok := fileState(t, snapPathOf(delta)); ok {
		t.Error("the delta's snapshot is still there after a full write")
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

// TestDeltaHeals: a delta whose snapshot is missing or stale (a kill
// between its two writes) is read from its .gob, nothing embedded; one
// written for another version of the collection file (a kill during a
// full write) or unreadable is removed, and its tools embedded again.
func TestDeltaHeals(t *testing.T) {
	ctx := context.Background()
	a, b := deltaCatalogs(t)
	for _, damage := range []string{"snap missing", "snap stale", "snap garbage", "other base", "gob garbage"} {
		t.Run(damage, func(t *testing.T) {
			dir, base, delta := syncedDelta(t, a, b)
			later := time.Now().Add(time.Hour)
			wantEmbedded := 0
			switch damage {
			case "snap missing":
				os.Remove(snapPathOf(delta))
			case "snap stale":
				os.Chtimes(delta, later, later)
			case "snap garbage":
				os.WriteFile(snapPathOf(delta), []byte("TSSNAP02 garbage"), 0o644)
			case "other base":
				// As if a full write had replaced the collection file and
				// a kill came before the delta's removal.
				os.Chtimes(base, later, later)
				wantEmbedded = 4 // 3 changed, 1 added since the base
			case "gob garbage":
				os.WriteFile(delta, []byte("not a gob"), 0o644)
				wantEmbedded = 4
			}
			vs, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			emb := &indextest.CountingEmbedder{}
			st, err := vs.Sync(ctx, testCol, b, emb, SyncOptions{})
			if err != nil || emb.Texts != wantEmbedded {
				t.Fatalf("sync = %+v, %v, %d embedded; want %d", st, err, emb.Texts, wantEmbedded)
			}
			warned := damage == "gob garbage" || damage == "snap garbage"
			if h := vs.Healed(); len(h) != map[bool]int{true: 1}[warned] {
				t.Errorf("Healed = %q, want one line: %v", h, warned)
			}
			sameVectors(t, damage, vs, b)
			// Healed for good: the next open reads the snapshot files
			// alone.
			vs, _ = Open(dir)
			emb = &indextest.CountingEmbedder{}
			if _, err := vs.Sync(ctx, testCol, b, emb, SyncOptions{}); err != nil || emb.Texts != 0 || vs.imported[testCol.Name()] {
				t.Fatalf("second open: %v, %d embedded, export imported %v", err, emb.Texts, vs.imported[testCol.Name()])
			}
			sameVectors(t, damage+", reopened", vs, b)
		})
	}
}

// TestCollectionFileIsChromemExports: a collection file is chromem-go
// exports of exportRows documents each; chromem-go reads a one-part file
// itself, and readExport reads every part back.
func TestCollectionFileIsChromemExports(t *testing.T) {
	dir := t.TempDir()
	rows := make([]snapRow, exportRows+10)
	for i := range rows {
		rows[i] = snapRow{id: fmt.Sprintf("d__t%05d", i), hash: fmt.Sprint(i), domain: "d", vec: normalized(indextest.HashVec(fmt.Sprintf("word%d other%d", i, i%7)))}
	}
	for _, n := range []int{0, 3, len(rows)} {
		path := filepath.Join(dir, fmt.Sprintf("c%d.gob", n))
		if err := fileio.WriteAtomic(path, func(w *bufio.Writer) error {
			return writeExport(w, testCol.Name(), map[string]string{"k": "v"}, rows[:n])
		}); err != nil {
			t.Fatal(err)
		}
		docs, meta, sealed, err := readExport(path, testCol.Name())
		if err != nil || len(docs) != n || meta["k"] != "v" || !sealed {
			t.Fatalf("%d rows: read %d, meta %v, sealed %v, %v", n, len(docs), meta, sealed, err)
		}
		byID := map[string]chromem.Document{}
		for _, d := range docs {
			byID[d.ID] = d
		}
		for _, r := range rows[:n] {
			d := byID[r.id]
			if d.Metadata["hash"] != r.hash || !slices.Equal(d.Embedding, r.vec) {
				t.Fatalf("%d rows: %s read back as %+v", n, r.id, d)
			}
		}
		if n > exportRows {
			continue
		}
		db := chromem.NewDB()
		if err := db.ImportFromFile(path, "", testCol.Name()); err != nil {
			t.Fatalf("%d rows: chromem-go cannot read the file: %v", n, err)
		}
		if c := db.GetCollection(testCol.Name(), noEmbed); c == nil || c.Count() != n {
			t.Fatalf("%d rows: chromem-go read %v", n, c)
		}
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

// unseal rewrites the collection file at path the way toolscout wrote it
// before checksums: one chromem-go export, nothing after it; its
// metadata (a delta's base tag and removed list) kept, with base as the
// base tag when not zero. It returns the file's new tag.
func unseal(t *testing.T, path string, base fileTag) fileTag {
	t.Helper()
	docs, meta, sealed, err := readExport(path, testCol.Name())
	if err != nil || !sealed {
		t.Fatalf("readExport(%s) = sealed %v, %v", path, sealed, err)
	}
	if base != (fileTag{}) {
		meta[metaBase] = base.String()
	}
	s, err := snapshotOf(docs, testCol.Dims)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]snapRow, len(s.ids))
	for i := range rows {
		rows[i] = s.rowOf(i)
	}
	if err := fileio.WriteAtomic(path, func(w *bufio.Writer) error { return exportPart(w, testCol.Name(), meta, rows) }); err != nil {
		t.Fatal(err)
	}
	if _, _, sealed, err := readExport(path, testCol.Name()); err != nil || sealed {
		t.Fatalf("unsealed %s reads back sealed %v, %v", path, sealed, err)
	}
	tag, _ := tagOf(path)
	return tag
}

// TestEarlierFilesAreWrittenAgainOnce: a collection of a toolscout before
// checksums (exports without one, "TSSNAP03" snapshots, a delta) opens
// with one warning and nothing embedded, holds the same vectors, and is
// written again with checksums: the next open reads the snapshot alone,
// with no warning.
func TestEarlierFilesAreWrittenAgainOnce(t *testing.T) {
	ctx := context.Background()
	a, b := deltaCatalogs(t)
	dir, base, delta := syncedDelta(t, a, b)
	bt := unseal(t, base, fileTag{})
	unseal(t, delta, bt)
	vs, _ := Open(dir)
	top, removed, _, _, err := readDeltaGob(delta, testCol.Name())
	if err != nil {
		t.Fatal(err)
	}
	docs, _, _, err := readExport(base, testCol.Name())
	if err != nil {
		t.Fatal(err)
	}
	baseSnap, err := snapshotOf(docs, testCol.Dims)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeSnap(base, baseSnap, nil, fileTag{}); err != nil {
		t.Fatal(err)
	}
	if err := writeSnap(delta, top, removed, bt); err != nil {
		t.Fatal(err)
	}
	writeSnapV3(t, base)
	writeSnapV3(t, delta)

	emb := &indextest.CountingEmbedder{}
	if _, err := vs.Sync(ctx, testCol, b, emb, SyncOptions{}); err != nil || emb.Texts != 0 {
		t.Fatalf("sync over the earlier files: %v, %d embedded; want none", err, emb.Texts)
	}
	if h := vs.Healed(); len(h) != 1 || !strings.Contains(h[0], "earlier toolscout") {
		t.Errorf("Healed = %q, want one line saying the collection was written again", h)
	}
	sameVectors(t, "earlier files", vs, b)
	if _, _, sealed, err := readExport(base, testCol.Name()); err != nil || !sealed {
		t.Errorf("the collection file was not written again with its checksum: sealed %v, %v", sealed, err)
	}
	if _, err := os.Stat(delta); !os.IsNotExist(err) {
		t.Errorf("the earlier delta is still there (%v): it was merged into the collection file", err)
	}
	vs, _ = Open(dir)
	emb = &indextest.CountingEmbedder{}
	if _, err := vs.Sync(ctx, testCol, b, emb, SyncOptions{}); err != nil || emb.Texts != 0 || vs.imported[testCol.Name()] || len(vs.Healed()) != 0 {
		t.Fatalf("second open: %v, %d embedded, export imported %v, healed %q", err, emb.Texts, vs.imported[testCol.Name()], vs.Healed())
	}
	sameVectors(t, "earlier files, reopened", vs, b)
}
