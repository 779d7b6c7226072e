package vector

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"github.com/philippgille/chromem-go"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/indextest"
	"github.com/toolscout/toolscout/internal/racetest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// legacyStore writes smallCatalog's vectors in chromem-go's own
// file-per-document layout, as toolscout 0.2 did.
func legacyStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db, err := chromem.NewPersistentDB(filepath.Join(dir, "vectors"), false)
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.GetOrCreateCollection(testCol.Name(), nil, noEmbed)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range indextest.MustCatalog(t, indextest.SmallCatalog).Tools() {
		doc := chromem.Document{ID: tool.QualifiedName, Embedding: indextest.HashVec(index.DocumentText(tool)),
			Metadata: map[string]string{"hash": tool.Hash, "domain": tool.Domain, "group": tool.Group}}
		if err := c.AddDocument(context.Background(), doc); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestOpenMigratesTheLegacyLayout(t *testing.T) {
	dir := legacyStore(t)
	st, err := Open(filepath.Join(dir, "vectors"))
	if err != nil {
		t.Fatal(err)
	}
	emb := &indextest.CountingEmbedder{}
	stats, err := st.Sync(context.Background(), testCol, indextest.MustCatalog(t, indextest.SmallCatalog), emb, SyncOptions{})
	if err != nil || stats.Unchanged != 6 || emb.Texts != 0 {
		t.Fatalf("sync after migration = %+v (%d embedded), %v; want every vector kept", stats, emb.Texts, err)
	}
	if h := st.Healed(); len(h) != 1 || !strings.HasPrefix(h[0], "vectors: migrating "+testCol.Name()) {
		t.Errorf("Healed = %q, want one line saying the collection is migrated", h)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "vectors"))
	if len(entries) != 1 || entries[0].IsDir() || nameOf(entries[0].Name(), collectionExt) != testCol.Name() {
		t.Errorf("vectors/ after migration holds %v, want the collection's snapshot file alone", entries)
	}
	again, _ := Open(filepath.Join(dir, "vectors"))
	if _, err := again.Sync(context.Background(), testCol, indextest.MustCatalog(t, indextest.SmallCatalog), emb, SyncOptions{}); err != nil || emb.Texts != 0 || len(again.Healed()) != 0 {
		t.Errorf("the open after the migration: %v, %d embedded, healed %q; want nothing to do", err, emb.Texts, again.Healed())
	}
}

func TestLegacyLayoutWithDamagedFilesHeals(t *testing.T) {
	dir := legacyStore(t)
	docs, _ := filepath.Glob(filepath.Join(dir, "vectors", "*", "*.gob"))
	var damaged []string
	for _, d := range docs {
		if filepath.Base(d) != chromemMetaFile {
			damaged = append(damaged, d)
		}
	}
	os.WriteFile(damaged[0], nil, 0o644) // a kill right after create
	data, _ := os.ReadFile(damaged[1])
	os.WriteFile(damaged[1], data[:len(data)/2], 0o644) // a kill mid-write
	st, err := Open(filepath.Join(dir, "vectors"))
	if err != nil {
		t.Fatalf("Open with an empty and a cut legacy file: %v", err)
	}
	if h := st.Healed(); len(h) != 2 || !strings.Contains(h[0], "removed 2 damaged files") || !strings.HasPrefix(h[1], "vectors: migrating") {
		t.Errorf("Healed = %q, want the two files named, then the migration", h)
	}
	emb := &indextest.CountingEmbedder{}
	stats, err := st.Sync(context.Background(), testCol, indextest.MustCatalog(t, indextest.SmallCatalog), emb, SyncOptions{})
	if err != nil || stats.Added != 2 || stats.Unchanged != 4 || emb.Texts != 2 {
		t.Errorf("sync after healing = %+v (%d texts embedded), %v; want exactly the 2 lost tools embedded again", stats, emb.Texts, err)
	}
}

// TestNoTwoToolsShareAVectorFile: chromem-go's own layout names a
// document's file after 32 bits of a SHA-256 of its ID, so two IDs can
// share a file. Two such IDs are found here and both must survive a
// reopen.
func TestNoTwoToolsShareAVectorFile(t *testing.T) {
	seen := map[[4]byte]string{}
	var a, b string
	for i := 0; a == "" && i < 2_000_000; i++ {
		id := fmt.Sprintf("t%d", i)
		sum := sha256.Sum256([]byte("d__" + id))
		key := [4]byte(sum[:4])
		if other, ok := seen[key]; ok {
			a, b = other, id
		}
		seen[key] = id
	}
	if a == "" {
		t.Fatal("no two IDs with the same 32-bit hash in 2M tries")
	}
	cat := indextest.MustCatalog(t, fmt.Sprintf(`{"domains":[{"name":"d","description":"x","tools":[
 {"name":%q,"description":"First tool.","inputSchema":{"type":"object"}},
 {"name":%q,"description":"Second tool.","inputSchema":{"type":"object"}}]}]}`, a, b))
	dir := t.TempDir()
	for round := 0; round < 2; round++ {
		vs, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		emb := &indextest.CountingEmbedder{}
		st, err := vs.Sync(context.Background(), testCol, cat, emb, SyncOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if round == 1 && (st.Unchanged != 2 || emb.Texts != 0) {
			t.Errorf("d__%s and d__%s share chromem's short hash; after a reopen: %v, %d embedded; want both kept", a, b, st, emb.Texts)
		}
	}
}

// TestDamagedSnapshotHeals: the snapshot file is the collection's store
// of record. Reopening an unchanged index reads it and embeds nothing; a
// file that is damaged (a byte of the matrix flipped, its time kept),
// cut, or of an earlier format without its .gob is removed with one
// warning and its tools embedded again; a missing one is embedded again
// without a warning. Read-only, a damaged file is refused: Sync says so.
func TestDamagedSnapshotHeals(t *testing.T) {
	ctx := context.Background()
	cat := indextest.MustCatalog(t, indextest.SmallCatalog)
	for _, damage := range []string{"none", "garbage", "missing", "flipped", "cut", "earlier format"} {
		t.Run(damage, func(t *testing.T) {
			dir := syncedVectors(t)
			path := (&Store{dir: filepath.Join(dir, "vectors")}).fileOf(testCol.Name())
			data, _ := os.ReadFile(path)
			fi, _ := os.Stat(path)
			switch damage {
			case "garbage":
				os.WriteFile(path, []byte("TSSNAP05 and then nothing useful"), 0o644)
			case "missing":
				os.Remove(path)
			case "flipped":
				data[len(data)-checksum.FooterLen(data)-2] ^= 0xff // the last float's exponent
				os.WriteFile(path, data, 0o644)
			case "cut":
				os.WriteFile(path, data[:len(data)/2], 0o644)
			case "earlier format":
				os.WriteFile(path, append([]byte("TSSNAP04"), data[8:]...), 0o644)
			}
			os.Chtimes(path, fi.ModTime(), fi.ModTime())
			damaged := damage != "none" && damage != "missing"
			if damaged {
				ro := OpenReadOnly(filepath.Join(dir, "vectors"))
				_, err := ro.Sync(ctx, testCol, cat, &indextest.CountingEmbedder{}, SyncOptions{})
				if !errors.Is(err, index.ErrReadOnly) || !strings.Contains(err.Error(), "could not be read") {
					t.Errorf("read-only sync over a damaged file = %v; want ErrReadOnly saying it could not be read", err)
				}
			}
			st, err := Open(filepath.Join(dir, "vectors"))
			if err != nil {
				t.Fatal(err)
			}
			emb := &indextest.CountingEmbedder{}
			stats, err := st.Sync(ctx, testCol, cat, emb, SyncOptions{})
			want := map[bool]int{true: 6}[damage != "none"]
			if err != nil || emb.Texts != want {
				t.Fatalf("sync = %+v (%d embedded), %v; want %d embedded", stats, emb.Texts, err, want)
			}
			if h := st.Healed(); len(h) != map[bool]int{true: 1}[damaged] || damaged && !strings.Contains(h[0], "vector collection") {
				t.Errorf("Healed = %q, want one line about the collection: %v", h, damaged)
			}
			// Healed for good: the next start reads the file, embeds nothing.
			vs, _ := Open(filepath.Join(dir, "vectors"))
			emb = &indextest.CountingEmbedder{}
			if _, err := vs.Sync(ctx, testCol, cat, emb, SyncOptions{}); err != nil || emb.Texts != 0 || len(vs.Healed()) != 0 {
				t.Errorf("after healing: %v, %d embedded, healed %q", err, emb.Texts, vs.Healed())
			}
			q := indextest.HashVec(index.DocumentText(cat.Tool("slack__post_message")))
			hits, err := st.Query(ctx, testCol, q, 1, "", "")
			if err != nil || len(hits) != 1 || hits[0].ID != "slack__post_message" {
				t.Errorf("query = %v, %v", hits, err)
			}
		})
	}
	// A change patches the snapshot, and the file written matches it.
	dir := syncedVectors(t)
	st, _ := Open(filepath.Join(dir, "vectors"))
	changed := indextest.MustCatalog(t, strings.Replace(indextest.SmallCatalog, "Send a message to a channel.", "Post a chat note to a room.", 1))
	if _, err := st.Sync(ctx, testCol, changed, &indextest.CountingEmbedder{}, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	s, _, _, err := readSnap(st.fileOf(testCol.Name()))
	if err != nil || len(s.ids) != 6 {
		t.Fatalf("snapshot after a change: %v, %v", s, err)
	}
	i := slices.Index(s.ids, "slack__post_message")
	if s.hash[i] != changed.Tool("slack__post_message").Hash {
		t.Error("the snapshot kept the old hash of the changed tool")
	}
}

// syncedVectors writes SmallCatalog's vectors under a fresh data dir's
// vectors/, as a finished `toolscout index` leaves them, and returns the
// data dir.
func syncedVectors(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	vs, err := Open(filepath.Join(dir, "vectors"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vs.Sync(context.Background(), testCol, indextest.MustCatalog(t, indextest.SmallCatalog), &indextest.CountingEmbedder{}, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDamagedMatrixSalvaged: at scale a snapshot file spans several MiB
// of checksums. A byte changed in its matrix costs only the rows of that
// MiB: the file is written again without them, with one warning, and
// the other rows keep their vectors; a byte changed in the strings (the
// first MiB here) costs the whole collection.
func TestDamagedMatrixSalvaged(t *testing.T) {
	racetest.Plain(t)
	col := Collection{Provider: "test", Model: "big", Dims: 128}
	want := snapFixture(5000, col.Dims) // 2.5 MiB of matrix
	for _, tc := range []struct {
		name string
		at   int // the byte flipped
		kept bool
	}{
		{"matrix", checksum.ChunkSize + 100, true},
		{"last chunk", -20, true}, // in the domain sums, a chunk that holds rows too
		{"strings", 1000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := (&Store{dir: dir}).fileOf(col.Name())
			if err := writeSnap(path, want, nil, newFileID(), 0); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(path)
			at := tc.at
			if at < 0 {
				at += len(data) - checksum.FooterLen(data)
			}
			data[at] ^= 0x40
			os.WriteFile(path, data, 0o644)
			vs, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			// Read as a sync reads it, healing: a query would leave it.
			vs.mu.Lock()
			vs.readLocked(col.Name(), true)
			vs.mu.Unlock()
			n := vs.Count(col)
			h := vs.Healed()
			if !tc.kept {
				if n != 0 || len(h) != 1 || !strings.Contains(h[0], "removed, its tools are embedded again") {
					t.Fatalf("%d vectors kept, healed %q; want none and one line", n, h)
				}
				return
			}
			lost := len(want.ids) - n
			rowsPerChunk := checksum.ChunkSize / (2 * col.Dims)
			if lost < 1 || lost > rowsPerChunk+1 || len(h) != 1 || !strings.Contains(h[0], fmt.Sprintf("only the vectors of %d tools", lost)) {
				t.Fatalf("%d of %d vectors kept, healed %q; want at most %d lost and one line", n, len(want.ids), h, rowsPerChunk+1)
			}
			s, _, _, err := readSnap(path)
			if err != nil || len(s.ids) != n {
				t.Fatalf("the file written again: %v rows, %v", len(s.ids), err)
			}
			for i, id := range s.ids {
				j, _ := slices.BinarySearch(want.ids, id)
				if !slices.Equal(s.row(i), want.row(j)) || s.hash[i] != want.hash[j] {
					t.Fatalf("%s kept with another vector or hash", id)
				}
			}
			if s.sums == nil || !reflect.DeepEqual(s.domainCentroids(), rowCentroids(s)) {
				t.Fatalf("the file written again holds domain sums %v that are not its rows'", s.sums != nil)
			}
			again, _ := Open(dir)
			if again.Count(col) != n || len(again.Healed()) != 0 {
				t.Errorf("the next open: %d vectors, healed %q", again.Count(col), again.Healed())
			}
		})
	}
}
