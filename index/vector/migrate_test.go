package vector

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	chromem "github.com/philippgille/chromem-go"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/vector/snapfile"
	"github.com/toolscout/toolscout/internal/indextest"
)

// twoFileDir returns a vectors/ folder holding testdata/twofile: a
// collection in the two-file format, as the last toolscout that wrote it
// left it after deltaCatalogs' a, then b (X.gob, X.snap, X.delta.gob,
// X.delta.snap). The .gob gets the modification time its delta names.
func twoFileDir(t *testing.T) (dir, gob, deltaGob string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "vectors")
	os.MkdirAll(dir, 0o755)
	files, _ := filepath.Glob(filepath.Join("testdata", "twofile", "*"))
	if len(files) != 4 {
		t.Fatalf("testdata/twofile holds %v, want 4 files", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gob = twoFileOf((&Store{dir: dir}).fileOf(testCol.Name()))
	deltaGob = twoFileOf(deltaFileOf((&Store{dir: dir}).fileOf(testCol.Name())))
	_, meta, _, err := readExport(deltaGob, testCol.Name())
	if err != nil {
		t.Fatal(err)
	}
	_, bt, err := snapfile.DeltaMeta(meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(gob, time.Unix(0, bt.Mtime), time.Unix(0, bt.Mtime)); err != nil {
		t.Fatal(err)
	}
	return dir, gob, deltaGob
}

// unsealTwoFile rewrites a two-file collection the way toolscout wrote
// it before checksums: each file one chromem-go export, nothing after it,
// the delta naming the new .gob.
func unsealTwoFile(t *testing.T, gob, deltaGob string) {
	t.Helper()
	write := func(path string, read []snapfile.Doc, meta map[string]string) {
		docs := make([]chromem.Document, len(read))
		for i, d := range read {
			docs[i] = chromem.Document{ID: d.ID, Metadata: d.Metadata, Embedding: d.Embedding, Content: d.Content}
		}
		db := chromem.NewDB()
		c, err := db.CreateCollection(testCol.Name(), meta, noEmbed)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddDocuments(context.Background(), docs, 1); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := db.ExportToWriter(f, false, "", testCol.Name()); err != nil {
			t.Fatal(err)
		}
	}
	docs, meta, _, err := readExport(gob, testCol.Name())
	if err != nil {
		t.Fatal(err)
	}
	write(gob, docs, meta)
	fi, _ := os.Stat(gob)
	docs, meta, _, err = readExport(deltaGob, testCol.Name())
	if err != nil {
		t.Fatal(err)
	}
	meta[snapfile.MetaBase] = gobTagString(fi)
	write(deltaGob, docs, meta)
	for _, p := range []string{gob, deltaGob} {
		if _, _, sealed, err := readExport(p, testCol.Name()); err != nil || sealed {
			t.Fatalf("unsealed %s reads back sealed %v, %v", p, sealed, err)
		}
	}
}

// gobTagString is how a two-file delta named its .gob.
func gobTagString(fi os.FileInfo) string {
	return fmt.Sprintf("%d:%d", fi.Size(), fi.ModTime().UnixNano())
}

// TestTwoFileFormatMigrates: a collection of the two-file format is
// migrated when the store opens for writing, by one rebuild from its
// .gob and .delta.gob, with one line in Healed and nothing embedded; then
// vectors/ holds one snapshot file, and the next open has nothing to say.
// A .gob or delta that cannot be read costs the embedding of what it
// held, said in a line of its own; a delta for another version of the
// .gob (a kill before its removal) is left out silently, as before. A
// kill after the new file was written leaves only the removal to do.
// Read-only, nothing is migrated: Sync says to run toolscout index.
func TestTwoFileFormatMigrates(t *testing.T) {
	ctx := context.Background()
	_, b := deltaCatalogs(t)
	for _, tc := range []struct {
		name     string
		prepare  func(t *testing.T, dir, gob, deltaGob string)
		embedded int
		healed   []string // a word of each line after the migration's
		migrated bool     // the migration's line is said
	}{
		{name: "as left", migrated: true},
		{name: "without the snapshots", migrated: true, prepare: func(t *testing.T, dir, gob, deltaGob string) {
			os.Remove(strings.TrimSuffix(gob, twoFileExt) + collectionExt)
			os.Remove(strings.TrimSuffix(deltaGob, twoFileExt) + collectionExt)
		}},
		{name: "before checksums", migrated: true, prepare: func(t *testing.T, dir, gob, deltaGob string) { unsealTwoFile(t, gob, deltaGob) }},
		{name: "delta for another .gob", migrated: true, embedded: 4, prepare: func(t *testing.T, dir, gob, deltaGob string) {
			later := time.Now().Add(time.Hour)
			os.Chtimes(gob, later, later)
		}},
		{name: "damaged delta", migrated: true, embedded: 4, healed: []string{"vector delta"}, prepare: func(t *testing.T, dir, gob, deltaGob string) {
			flipAt(t, deltaGob)
		}},
		{name: "damaged .gob", migrated: true, embedded: 100, healed: []string{"could not be read"}, prepare: func(t *testing.T, dir, gob, deltaGob string) {
			flipAt(t, gob)
		}},
		{name: "killed after the new file", prepare: func(t *testing.T, dir, gob, deltaGob string) {
			// Migrate a copy, then put the new file beside the old ones.
			other, _, _ := twoFileDir(t)
			if _, err := Open(other); err != nil {
				t.Fatal(err)
			}
			name := filepath.Base((&Store{dir: dir}).fileOf(testCol.Name()))
			data, err := os.ReadFile(filepath.Join(other, name))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, name), data, 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, gob, deltaGob := twoFileDir(t)
			if tc.prepare != nil {
				tc.prepare(t, dir, gob, deltaGob)
			}
			// Read-only: refused, clearly, and nothing touched.
			before := listDir(t, dir)
			ro := OpenReadOnly(dir)
			if _, err := ro.Sync(ctx, testCol, b, &indextest.CountingEmbedder{}, SyncOptions{}); tc.migrated && (!errors.Is(err, index.ErrReadOnly) || !strings.Contains(err.Error(), "two-file format")) {
				t.Errorf("read-only sync = %v; want ErrReadOnly naming the two-file format", err)
			}
			if after := listDir(t, dir); !slices.Equal(after, before) {
				t.Errorf("read-only open changed vectors/: %v, was %v", after, before)
			}

			vs, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			h := vs.Healed()
			if tc.migrated {
				if len(h) == 0 || !strings.HasPrefix(h[0], "vectors: migrating "+testCol.Name()+" from the two-file format") {
					t.Fatalf("Healed = %q, want the migration's line first", h)
				}
				h = h[1:]
			}
			if len(h) != len(tc.healed) {
				t.Fatalf("Healed after the migration's line = %q, want %d lines", h, len(tc.healed))
			}
			for i, w := range tc.healed {
				if !strings.Contains(h[i], w) {
					t.Errorf("Healed line %q, want %q", h[i], w)
				}
			}
			want := []string{filepath.Base(vs.fileOf(testCol.Name()))}
			if tc.embedded == 100 {
				want = nil // nothing could be read: the Sync writes it
			}
			if got := listDir(t, dir); !slices.Equal(got, want) {
				t.Errorf("vectors/ after the migration holds %v, want %v", got, want)
			}
			emb := &indextest.CountingEmbedder{}
			if _, err := vs.Sync(ctx, testCol, b, emb, SyncOptions{}); err != nil || emb.Texts != tc.embedded {
				t.Fatalf("sync after the migration: %v, %d embedded; want %d", err, emb.Texts, tc.embedded)
			}
			sameVectors(t, "migrated", vs, b)
			again, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			emb = &indextest.CountingEmbedder{}
			if _, err := again.Sync(ctx, testCol, b, emb, SyncOptions{}); err != nil || emb.Texts != 0 || len(again.Healed()) != 0 {
				t.Fatalf("the open after: %v, %d embedded, healed %q; want nothing to do", err, emb.Texts, again.Healed())
			}
			sameVectors(t, "reopened", again, b)
		})
	}
}

// flipAt inverts a byte in the middle of the file at p.
func flipAt(t *testing.T, p string) {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	data[len(data)/2] ^= 0xff
	os.WriteFile(p, data, 0o644)
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
}

// listDir returns the names in dir, sorted.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestMigrationRacesAnotherProcess: two processes may open the same data
// dir at once. The one whose .gob vanished between listing the folder and
// reading it (the other migrated it) must neither warn nor remove the
// other's new file.
func TestMigrationRacesAnotherProcess(t *testing.T) {
	dir, gob, _ := twoFileDir(t)
	other, err := Open(dir) // migrates
	if err != nil {
		t.Fatal(err)
	}
	path := other.fileOf(testCol.Name())
	if _, err := os.Stat(gob); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the .gob is still there after the migration: %v", err)
	}
	// This process checked the snapshot while it was still the old one.
	old, err := os.ReadFile(filepath.Join("testdata", "twofile", filepath.Base(path)))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, old, 0o644)
	vs := &Store{dir: dir, snaps: map[string]*snapshot{}, read: map[string]bool{}}
	if err := vs.migrateCollection(testCol.Name()); err != nil || len(vs.Healed()) != 0 {
		t.Fatalf("migrateCollection with the .gob gone = %v, healed %q; want nothing done", err, vs.Healed())
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the collection file was removed: %v", err)
	}
}
