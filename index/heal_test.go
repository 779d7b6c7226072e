package index

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	chromem "github.com/philippgille/chromem-go"
	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/fileio"
)

// syncedStore writes both indexes of smallCatalog under a fresh data dir
// and closes them, as a finished `toolscout index` leaves them.
func syncedStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Sync(context.Background(), mustCatalog(t, smallCatalog), &countingEmbedder{}, testCol, VectorSyncOptions{}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	return dir
}

func TestOpenStoreHealsAGarbageSegment(t *testing.T) {
	dir := syncedStore(t)
	segs, _ := filepath.Glob(filepath.Join(dir, "keyword.bleve", "store", "*.zap"))
	if len(segs) == 0 {
		t.Fatal("no .zap segment written")
	}
	rng := rand.New(rand.NewSource(1))
	for _, seg := range segs {
		info, _ := os.Stat(seg)
		junk := make([]byte, info.Size())
		rng.Read(junk)
		os.WriteFile(seg, junk, 0o644)
	}
	st, err := OpenStore(dir) // panicked inside zapx before
	if err != nil {
		t.Fatalf("OpenStore on a garbage segment: %v", err)
	}
	defer st.Close()
	if h := st.Healed(); len(h) != 1 || !strings.Contains(h[0], "keyword index") {
		t.Errorf("Healed = %q, want one line about the keyword index", h)
	}
	stats, err := st.Sync(context.Background(), mustCatalog(t, smallCatalog), &countingEmbedder{}, testCol, VectorSyncOptions{})
	if err != nil || stats.Keyword.Added != 6 || stats.Vectors.Unchanged != 6 {
		t.Fatalf("sync after healing = %+v, %v; want the keyword index rebuilt and the vectors kept", stats, err)
	}
	hits, err := st.Keyword.Search(context.Background(), KeywordQuery{Text: "post message"})
	if err != nil || len(hits) == 0 || hits[0].ID != "slack__post_message" {
		t.Errorf("search after healing = %v, %v", hits, err)
	}
}

func TestOpenStoreHealsACutCollectionFile(t *testing.T) {
	for _, cut := range []string{"empty", "half"} {
		t.Run(cut, func(t *testing.T) {
			dir := syncedStore(t)
			files, _ := filepath.Glob(filepath.Join(dir, "vectors", "*"+collectionExt))
			if len(files) != 1 {
				t.Fatalf("vector files = %v, want one file for the one collection", files)
			}
			data, _ := os.ReadFile(files[0])
			if cut == "empty" {
				data = nil
			} else {
				data = data[:len(data)/2]
			}
			os.WriteFile(files[0], data, 0o644)
			st, err := OpenStore(dir)
			if err != nil {
				t.Fatalf("OpenStore with a %s collection file: %v", cut, err)
			}
			defer st.Close()
			emb := &countingEmbedder{}
			stats, err := st.Sync(context.Background(), mustCatalog(t, smallCatalog), emb, testCol, VectorSyncOptions{})
			if err != nil || stats.Vectors.Added != 6 || emb.texts != 6 {
				t.Errorf("sync after healing = %+v (%d texts embedded), %v; want the collection embedded again", stats.Vectors, emb.texts, err)
			}
			if h := st.Healed(); len(h) != 1 || !strings.Contains(h[0], "could not be read") {
				t.Errorf("Healed = %q, want one line naming the collection file", h)
			}
		})
	}
}

// TestKillMidWriteKeepsThePreviousFile: a kill while a collection file is
// written leaves a temporary file; the previous version is whole.
func TestKillMidWriteKeepsThePreviousFile(t *testing.T) {
	dir := syncedStore(t)
	files, _ := filepath.Glob(filepath.Join(dir, "vectors", "*"+collectionExt))
	tmp := files[0] + fileio.TmpSuffix + "123"
	os.WriteFile(tmp, []byte("half a collection"), 0o644)
	st := openWithLeftovers(t, dir, tmp)
	emb := &countingEmbedder{}
	stats, err := st.Sync(context.Background(), mustCatalog(t, smallCatalog), emb, testCol, VectorSyncOptions{})
	if err != nil || stats.Vectors.Unchanged != 6 || emb.texts != 0 || len(st.Healed()) != 0 {
		t.Errorf("sync = %+v (%d embedded, healed %q), %v; want the previous file used as is", stats.Vectors, emb.texts, st.Healed(), err)
	}
	if _, err := os.Stat(tmp); err == nil {
		t.Error("the leftover temporary file is still there")
	}
}

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
	for _, tool := range mustCatalog(t, smallCatalog).Tools() {
		doc := chromem.Document{ID: tool.QualifiedName, Embedding: hashVec(DocumentText(tool)),
			Metadata: map[string]string{"hash": tool.Hash, "domain": tool.Domain, "group": tool.Group}}
		if err := c.AddDocument(context.Background(), doc); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestOpenStoreMigratesTheLegacyLayout(t *testing.T) {
	dir := legacyStore(t)
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	emb := &countingEmbedder{}
	stats, err := st.Sync(context.Background(), mustCatalog(t, smallCatalog), emb, testCol, VectorSyncOptions{})
	st.Close()
	if err != nil || stats.Vectors.Unchanged != 6 || emb.texts != 0 {
		t.Fatalf("sync after migration = %+v (%d embedded), %v; want every vector kept", stats.Vectors, emb.texts, err)
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
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatalf("OpenStore with an empty and a cut legacy file: %v", err)
	}
	defer st.Close()
	if h := st.Healed(); len(h) != 1 || !strings.Contains(h[0], "removed 2 damaged files") {
		t.Errorf("Healed = %q, want the two files named", h)
	}
	emb := &countingEmbedder{}
	stats, err := st.Sync(context.Background(), mustCatalog(t, smallCatalog), emb, testCol, VectorSyncOptions{})
	if err != nil || stats.Vectors.Added != 2 || stats.Vectors.Unchanged != 4 || emb.texts != 2 {
		t.Errorf("sync after healing = %+v (%d texts embedded), %v; want exactly the 2 lost tools embedded again", stats.Vectors, emb.texts, err)
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
	cat := mustCatalog(t, fmt.Sprintf(`{"domains":[{"name":"d","description":"x","tools":[
 {"name":%q,"description":"First tool.","inputSchema":{"type":"object"}},
 {"name":%q,"description":"Second tool.","inputSchema":{"type":"object"}}]}]}`, a, b))
	dir := t.TempDir()
	for round := 0; round < 2; round++ {
		vs, err := OpenVectors(dir)
		if err != nil {
			t.Fatal(err)
		}
		emb := &countingEmbedder{}
		st, err := vs.Sync(context.Background(), testCol, cat, emb, VectorSyncOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if round == 1 && (st.Unchanged != 2 || emb.texts != 0) {
			t.Errorf("d__%s and d__%s share chromem's short hash; after a reopen: %v, %d embedded; want both kept", a, b, st, emb.texts)
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
	cat := mustCatalog(t, smallCatalog)
	for _, damage := range []string{"none", "stale", "garbage", "missing", "flipped"} {
		t.Run(damage, func(t *testing.T) {
			dir := syncedStore(t)
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
			st, err := OpenStore(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			emb := &countingEmbedder{}
			stats, err := st.Sync(ctx, cat, emb, testCol, VectorSyncOptions{})
			if err != nil || stats.Vectors.Unchanged != 6 || emb.texts != 0 {
				t.Fatalf("sync = %+v (%d embedded), %v; want all 6 unchanged", stats.Vectors, emb.texts, err)
			}
			if imported := st.Vectors.imported[testCol.Name()]; imported != (damage != "none") {
				t.Errorf("export imported = %v, want %v", imported, damage != "none")
			}
			warned := damage == "garbage" || damage == "flipped"
			if h := st.Healed(); len(h) != map[bool]int{true: 1}[warned] || warned && !strings.Contains(h[0], "vector snapshot") {
				t.Errorf("Healed = %q, want one line about the snapshot: %v", h, warned)
			}
			if damage != "none" {
				// The snapshot file was written again: the next start reads it.
				vs, _ := OpenVectors(filepath.Join(dir, "vectors"))
				if vs.Count(testCol) != 6 || vs.imported[testCol.Name()] {
					t.Errorf("after healing: %d vectors, export imported again %v", vs.Count(testCol), vs.imported[testCol.Name()])
				}
			}
			q := hashVec(DocumentText(cat.Tool("slack__post_message")))
			hits, err := st.Vectors.Query(ctx, testCol, q, 1, "", "")
			if err != nil || len(hits) != 1 || hits[0].ID != "slack__post_message" {
				t.Errorf("query = %v, %v", hits, err)
			}
		})
	}
	// A change patches the snapshot, and the file written matches it.
	dir := syncedStore(t)
	st, _ := OpenStore(dir)
	changed := mustCatalog(t, strings.Replace(smallCatalog, "Send a message to a channel.", "Post a chat note to a room.", 1))
	if _, err := st.Sync(ctx, changed, &countingEmbedder{}, testCol, VectorSyncOptions{}); err != nil {
		t.Fatal(err)
	}
	st.Close()
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
