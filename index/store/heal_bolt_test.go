package store

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/keyword"
	"github.com/toolscout/toolscout/index/vector"
	"github.com/toolscout/toolscout/internal/indextest"
	bbolt "go.etcd.io/bbolt"
)

// boltCatalog is a catalog large enough that Bleve's root.bolt spans
// several pages (200 tools: 22 pages of 4 KiB; 600: 30).
func boltCatalog(t *testing.T, n int) *index.Catalog {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"domains":[{"name":"d","description":"Many tools.","tools":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"name":"tool_%d","description":"Tool %d lists the invoices %d of customer %d.","inputSchema":{"type":"object","properties":{"id_%d":{"type":"string"}}}}`, i, i, i*7, i*13, i)
	}
	b.WriteString(`]}]}`)
	return indextest.MustCatalog(t, b.String())
}

// copyTree copies the files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(to)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// highWaterMark returns how many bytes of root.bolt its last commit
// uses, as bbolt's meta page says.
func highWaterMark(t *testing.T, root string) int64 {
	t.Helper()
	db, err := bbolt.Open(root, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var size int64
	db.View(func(tx *bbolt.Tx) error { size = tx.Size(); return nil })
	return size
}

// TestOpenStoreHealsACutRootBolt: a root.bolt cut short (a copy cut off,
// a full disk) made bbolt map pages past the end of the file, and Bleve
// read them: a fault that killed the process, garbage taken for the
// index (every tool "changed"), or a loop with no end. Every cut must be
// found before Bleve reads the file, within a bounded time, and the
// keyword index rebuilt with one warning.
func TestOpenStoreHealsACutRootBolt(t *testing.T) {
	ctx := context.Background()
	// 200 tools: a root.bolt of 22 pages, cut at 15 places; 600 tools
	// gave 30 pages, 20 cuts, and each cut's re-index three times the
	// work.
	cat := boltCatalog(t, 200)
	clean := t.TempDir()
	st, err := Open(clean)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Sync(ctx, cat, &indextest.CountingEmbedder{}, testCol, vector.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	root := filepath.Join(clean, "keyword.bleve", "store", "root.bolt")
	fi, err := os.Stat(root)
	if err != nil {
		t.Fatal(err)
	}
	hwm := highWaterMark(t, root)
	page := int64(os.Getpagesize())
	if hwm < 6*page {
		t.Fatalf("root.bolt uses %d bytes: too few pages to cut", hwm)
	}
	sizes := []int64{0, page, fi.Size() / 2, hwm / 2, hwm - page, hwm - 1, 2*page + 100}
	for s := 3 * page; s < hwm; s += 2 * page {
		sizes = append(sizes, s)
	}
	slices.Sort(sizes)
	for _, size := range slices.Compact(sizes) {
		if size >= hwm {
			continue
		}
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			dir := t.TempDir()
			copyTree(t, clean, dir)
			if err := os.Truncate(filepath.Join(dir, "keyword.bleve", "store", "root.bolt"), size); err != nil {
				t.Fatal(err)
			}
			type opened struct {
				st  *Store
				err error
			}
			done := make(chan opened, 1)
			go func() {
				st, err := Open(dir)
				done <- opened{st, err}
			}()
			var o opened
			select {
			case o = <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("Open with root.bolt cut to %d of %d bytes: no answer in 30 s", size, hwm)
			}
			if o.err != nil {
				t.Fatalf("Open with root.bolt cut to %d bytes: %v", size, o.err)
			}
			defer o.st.Close()
			if h := o.st.Healed(); len(h) != 1 || !strings.Contains(h[0], "keyword index") || !strings.Contains(h[0], "root.bolt") {
				t.Errorf("Healed = %q, want one line saying the keyword index's root.bolt was damaged", h)
			}
			stats, err := o.st.Sync(ctx, cat, &indextest.CountingEmbedder{}, testCol, vector.SyncOptions{})
			if err != nil || stats.Keyword.Added != cat.Len() || stats.Vectors.Unchanged != cat.Len() {
				t.Fatalf("sync after healing = %+v, %v; want the keyword index rebuilt, the vectors kept", stats, err)
			}
			hits, err := o.st.Keyword.Search(ctx, keyword.Query{Text: "tool 17 invoices"})
			if err != nil || len(hits) == 0 || hits[0].ID != "d__tool_17" {
				t.Errorf("search after healing = %v, %v", hits[:min(len(hits), 3)], err)
			}
		})
	}
}

// TestOpenStoreKeepsAWholeRootBoltWithSpareRoom: bbolt grows its file
// ahead of use; pages past the high-water mark are not damage, and an
// index whose file ends there is opened as is.
func TestOpenStoreKeepsAWholeRootBoltWithSpareRoom(t *testing.T) {
	dir := syncedStore(t)
	root := filepath.Join(dir, "keyword.bleve", "store", "root.bolt")
	if err := os.Truncate(root, highWaterMark(t, root)); err != nil {
		t.Fatal(err)
	}
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stats, err := st.Sync(context.Background(), indextest.MustCatalog(t, indextest.SmallCatalog), &indextest.CountingEmbedder{}, testCol, vector.SyncOptions{})
	if err != nil || stats.Keyword.Unchanged != 6 || len(st.Healed()) != 0 {
		t.Errorf("sync = %+v (healed %q), %v; want the index kept as is", stats.Keyword, st.Healed(), err)
	}
}
