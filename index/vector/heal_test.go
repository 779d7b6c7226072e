package vector

import (
	"context"
	"crypto/sha256"
	"fmt"
	"github.com/philippgille/chromem-go"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/indextest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
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
	entries, _ := os.ReadDir(filepath.Join(dir, "vectors"))
	if len(entries) != 2 || entries[0].IsDir() || nameOf(entries[0].Name()) != testCol.Name() || filepath.Ext(entries[1].Name()) != snapExt {
		t.Errorf("vectors/ after migration holds %v, want the collection file and its snapshot", entries)
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
	if h := st.Healed(); len(h) != 1 || !strings.Contains(h[0], "removed 2 damaged files") {
		t.Errorf("Healed = %q, want the two files named", h)
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

// TestUnchangedStartReadsTheSnapshot: reopening an unchanged index reads
// the snapshot file only. A snapshot that no longer matches its
// collection file, or is damaged, is ignored: the export is read and the
// snapshot file written again, with a warning for damage (a byte of the
// matrix flipped, its time kept, once changed rankings silently).
func TestUnchangedStartReadsTheSnapshot(t *testing.T) {
	ctx := context.Background()
	cat := indextest.MustCatalog(t, indextest.SmallCatalog)
	for _, damage := range []string{"none", "stale", "garbage", "missing", "flipped"} {
		t.Run(damage, func(t *testing.T) {
			dir := syncedVectors(t)
			gob, _ := filepath.Glob(filepath.Join(dir, "vectors", "*"+collectionExt))
			snap := snapPathOf(gob[0])
			switch damage {
			case "stale":
				later := time.Now().Add(time.Hour)
				os.Chtimes(gob[0], later, later)
			case "garbage":
				os.WriteFile(snap, []byte("TSSNAP01 and then nothing useful"), 0o644)
			case "missing":
				os.Remove(snap)
			case "flipped":
				fi, _ := os.Stat(snap)
				data, _ := os.ReadFile(snap)
				data[len(data)-checksum.FooterLen(data)-2] ^= 0xff // the last float's exponent
				os.WriteFile(snap, data, 0o644)
				os.Chtimes(snap, fi.ModTime(), fi.ModTime())
			}
			st, err := Open(filepath.Join(dir, "vectors"))
			if err != nil {
				t.Fatal(err)
			}
			emb := &indextest.CountingEmbedder{}
			stats, err := st.Sync(ctx, testCol, cat, emb, SyncOptions{})
			if err != nil || stats.Unchanged != 6 || emb.Texts != 0 {
				t.Fatalf("sync = %+v (%d embedded), %v; want all 6 unchanged", stats, emb.Texts, err)
			}
			if imported := st.imported[testCol.Name()]; imported != (damage != "none") {
				t.Errorf("export imported = %v, want %v", imported, damage != "none")
			}
			warned := damage == "garbage" || damage == "flipped"
			if h := st.Healed(); len(h) != map[bool]int{true: 1}[warned] || warned && !strings.Contains(h[0], "vector snapshot") {
				t.Errorf("Healed = %q, want one line about the snapshot: %v", h, warned)
			}
			if damage != "none" {
				// The snapshot file was written again: the next start reads it.
				vs, _ := Open(filepath.Join(dir, "vectors"))
				if vs.Count(testCol) != 6 || vs.imported[testCol.Name()] {
					t.Errorf("after healing: %d vectors, export imported again %v", vs.Count(testCol), vs.imported[testCol.Name()])
				}
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
	gob, _ := filepath.Glob(filepath.Join(dir, "vectors", "*"+collectionExt))
	s, _, _, err := readSnap(gob[0])
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
