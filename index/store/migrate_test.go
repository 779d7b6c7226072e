package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/philippgille/chromem-go"
	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/keyword"
	"github.com/toolscout/toolscout/index/vector"
	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/indextest"
)

// releasedSet copies testdata/datadir-0.3.0 (a catalog set's folder as
// toolscout 0.3.0 wrote it, before the migration step: see its
// README.md) into a folder of its own, and returns that folder and the
// catalog it was indexed from.
func releasedSet(t *testing.T) (string, *index.Catalog) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "set")
	copyTree(t, filepath.Join("testdata", "datadir-0.3.0", "set"), dir)
	data, err := os.ReadFile(filepath.Join("testdata", "datadir-0.3.0", "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	return dir, indextest.MustCatalog(t, string(data))
}

// keywordSync syncs the keyword index of the store in dir to cat.
func keywordSync(t *testing.T, dir string, cat *index.Catalog) (index.SyncStats, []string) {
	t.Helper()
	st, err := OpenWith(dir, Options{})
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	defer st.Close()
	stats, err := st.Sync(context.Background(), cat, nil, vector.Collection{}, vector.SyncOptions{})
	if err != nil {
		t.Fatalf("sync %s: %v", dir, err)
	}
	return stats.Keyword, st.Healed()
}

// TestMigrateAReleasedDataDir: a folder toolscout 0.3.0 wrote is refused
// read-only, with the command that migrates it; opened for writing it
// is migrated (said in Healed, its format recorded) and its keyword
// index holds the catalog as it was: nothing indexed again. After that
// it opens read-only, and the next open migrates nothing.
func TestMigrateAReleasedDataDir(t *testing.T) {
	dir, cat := releasedSet(t)
	if _, err := OpenWith(dir, Options{ReadOnly: true}); !errors.Is(err, index.ErrNoIndex) || !strings.Contains(err.Error(), "toolscout index") {
		t.Errorf("read-only open before the migration = %v; want ErrNoIndex naming toolscout index", err)
	}
	if _, err := os.Stat(filepath.Join(dir, formatFile)); err == nil {
		t.Fatal("the read-only open wrote the format file")
	}
	stats, healed := keywordSync(t, dir, cat)
	if stats.Added+stats.Changed+stats.Removed != 0 || stats.Unchanged != cat.Len() {
		t.Errorf("keyword sync after the migration = %+v; want all %d tools unchanged", stats, cat.Len())
	}
	if len(healed) != 1 || !strings.Contains(healed[0], "migrated from format 3") {
		t.Errorf("Healed = %q; want the keyword index's migration said", healed)
	}
	if f, ok := readFormat(dir); !ok || f != dataFormat {
		t.Errorf("format file = %d, %v; want %d", f, ok, dataFormat)
	}
	if _, healed := keywordSync(t, dir, cat); len(healed) != 0 {
		t.Errorf("Healed of the next open = %q; want nothing migrated again", healed)
	}
	// A flipped byte of the format file never reads as another format:
	// taken for missing, the step runs again, changes nothing, and
	// writes it again.
	stamp := filepath.Join(dir, formatFile)
	raw, err := os.ReadFile(stamp)
	if err != nil {
		t.Fatal(err)
	}
	raw[0] ^= 0x03 // "1" becomes "2"
	os.WriteFile(stamp, raw, 0o644)
	if stats, healed := keywordSync(t, dir, cat); len(healed) != 0 || stats.Unchanged != cat.Len() {
		t.Errorf("open with a damaged format file: %+v, healed %q; want nothing done", stats, healed)
	}
	if f, ok := readFormat(dir); !ok || f != dataFormat {
		t.Errorf("format file after a damaged one = %d, %v; want %d written again", f, ok, dataFormat)
	}
	ro, err := OpenWith(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open after the migration: %v", err)
	}
	hits, err := ro.Keyword.Search(context.Background(), keyword.Query{Text: "read a file"})
	ro.Close()
	if err != nil || len(hits) == 0 || hits[0].ID != "github__getFileContents" {
		t.Errorf("search of the migrated index = %v, %v; want github__getFileContents first", hits, err)
	}
}

// TestMigrateRefusesANewerFormat: a folder of a format this toolscout
// does not know yet (a newer one wrote it) is an error naming what to
// do, for writing and read-only alike, and nothing in it changes.
func TestMigrateRefusesANewerFormat(t *testing.T) {
	dir, _ := releasedSet(t)
	if err := os.WriteFile(filepath.Join(dir, formatFile), checksum.Append([]byte("2\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	before := treeOf(t, dir)
	for _, ro := range []bool{false, true} {
		if _, err := OpenWith(dir, Options{ReadOnly: ro}); !errors.Is(err, ErrNewerFormat) || !strings.Contains(err.Error(), "--data-dir") {
			t.Errorf("open (read-only %v) of format 2 = %v; want ErrNewerFormat saying what to do", ro, err)
		}
	}
	sameTree(t, before, treeOf(t, dir))
}

// fitStore returns a store folder synced to cat with the built-in
// embedder (so holding its fit file), and the path and bytes of that
// file.
func fitStore(t *testing.T, cat *index.Catalog) (string, string, []byte) {
	t.Helper()
	dir := t.TempDir()
	if emb, err := syncFit(t, dir, cat); err != nil || emb.fits != 1 {
		t.Fatalf("first sync: %d fits, %v", emb.fits, err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "fit-*.bin"))
	if len(files) != 1 {
		t.Fatalf("fit files %q, want one", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return dir, files[0], data
}

// syncFit opens the store in dir and syncs it to cat with the built-in
// embedder, counting its fits.
func syncFit(t *testing.T, dir string, cat *index.Catalog) (*fitCounting, error) {
	t.Helper()
	st, err := OpenWith(dir, Options{})
	if err != nil {
		return &fitCounting{}, err
	}
	defer st.Close()
	emb := &fitCounting{Builtin: embed.NewBuiltin(embed.BuiltinOptions{})}
	info := emb.Info()
	col := vector.Collection{Provider: info.Provider, Model: info.Model + "@" + emb.Fingerprint(), Dims: info.Dims}
	_, err = st.SyncWith(context.Background(), cat, SyncOptions{Embedder: emb, Collection: col})
	return emb, err
}

// v2Fit returns a fit file of the format "TSFITV02" (no checksums)
// holding what the current file whole holds.
func v2Fit(whole []byte) []byte {
	return append([]byte(fitHeaderV2), whole[len(fitHeader):len(whole)-checksum.FooterLen(whole)]...)
}

// TestMigrateFits: a fit file of the format "TSFITV02" gets its
// checksums (the same bytes the current toolscout writes) and its
// statistics are restored, not fitted again; a "TSFITV01" file (outside
// the window) is removed with a note, and fitted again.
func TestMigrateFits(t *testing.T) {
	cat := indextest.MustCatalog(t, indextest.SmallCatalog)
	for _, tc := range []struct {
		name     string
		old      func(whole []byte) []byte
		note     string
		wantFits int
	}{
		{"TSFITV02", v2Fit, "migrated from TSFITV02", 0},
		{"TSFITV01", func([]byte) []byte { return []byte("TSFITV01\x00\x00\x00\x00weights") }, "fitted again", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, path, whole := fitStore(t, cat)
			if err := os.WriteFile(path, tc.old(whole), 0o600); err != nil {
				t.Fatal(err)
			}
			os.Remove(filepath.Join(dir, formatFile))
			st, err := OpenWith(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			healed := st.Healed()
			st.Close()
			if len(healed) != 1 || !strings.Contains(healed[0], tc.note) || !strings.Contains(healed[0], path) {
				t.Errorf("Healed = %q; want one line naming %s and saying %q", healed, path, tc.note)
			}
			if tc.wantFits == 0 {
				if got, _ := os.ReadFile(path); !bytes.Equal(got, whole) {
					t.Errorf("migrated fit file = %.12q… (%d bytes), want the current format's bytes (%d)", got, len(got), len(whole))
				}
			} else if _, err := os.Stat(path); err == nil {
				t.Error("the TSFITV01 file is still there")
			}
			emb, err := syncFit(t, dir, cat)
			if err != nil || emb.fits != tc.wantFits {
				t.Errorf("sync after the migration: %d fits, %v; want %d", emb.fits, err, tc.wantFits)
			}
		})
	}
}

// TestMigrationKilled: a process killed (SIGKILL) between any two steps
// of the migration leaves a folder that opens for writing; that open
// finishes the migration, and nothing is indexed or fitted again.
func TestMigrationKilled(t *testing.T) {
	if dir := os.Getenv("TOOLSCOUT_TEST_MIGRATE_DIR"); dir != "" {
		t.Skip("the child of a TestMigrationKilled")
	}
	for _, at := range []string{"keyword", "fit", "fits"} {
		t.Run(at, func(t *testing.T) {
			dir, cat := releasedSet(t)
			fits, _ := filepath.Glob(filepath.Join(dir, "fit-*.bin"))
			whole, err := os.ReadFile(fits[0])
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(fits[0], v2Fit(whole), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestMigrationKilledChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "TOOLSCOUT_TEST_MIGRATE_DIR="+dir, "TOOLSCOUT_TEST_MIGRATE_KILL="+at)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the child was not killed at %q: %v\n%s", at, err, out)
			}
			if _, ok := readFormat(dir); ok {
				t.Error("the format file was written before the kill")
			}
			stats, healed := keywordSync(t, dir, cat)
			if stats.Added+stats.Changed+stats.Removed != 0 {
				t.Errorf("keyword sync after a kill at %q = %+v (healed %q); want nothing indexed again", at, stats, healed)
			}
			if f, ok := readFormat(dir); !ok || f != dataFormat {
				t.Errorf("format after the open that finished the migration = %d, %v", f, ok)
			}
			if got, _ := os.ReadFile(fits[0]); !bytes.Equal(got, whole) {
				t.Errorf("fit file after a kill at %q: %.12q…, want the current format's bytes", at, got)
			}
			if emb, err := syncFit(t, dir, cat); err != nil || emb.fits != 0 {
				t.Errorf("sync with the embedder after a kill at %q: %d fits, %v; want the statistics restored", at, emb.fits, err)
			}
		})
	}
}

// TestMigrationKilledChild is TestMigrationKilled's child process: it
// opens the folder and is killed at the step it is told.
func TestMigrationKilledChild(t *testing.T) {
	dir, at := os.Getenv("TOOLSCOUT_TEST_MIGRATE_DIR"), os.Getenv("TOOLSCOUT_TEST_MIGRATE_KILL")
	if dir == "" {
		t.Skip("run by TestMigrationKilled")
	}
	migrateHook = func(step string) {
		if step == at || strings.HasPrefix(step, at+" ") {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
	st, err := OpenWith(dir, Options{})
	if err == nil {
		st.Close()
	}
	t.Fatalf("the migration passed no step %q (open: %v)", at, err)
}

// TestMigrateTheDataDirLayouts: opening a catalog set for writing
// removes the indexes of the layout before catalog sets when toolscout
// wrote them (a real Bleve index, chromem-go's folders), saying so, and
// leaves a foreign DATA_DIR/vectors and links alone; a set folder made
// before the marker, with its sources.json, is marked (and so known to
// --prune), one without either is not. A read-only open changes none of
// it.
func TestMigrateTheDataDirLayouts(t *testing.T) {
	for _, foreign := range []bool{false, true} {
		data := t.TempDir()
		kw, err := keyword.Open(filepath.Join(data, "keyword.bleve"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kw.Sync(context.Background(), indextest.MustCatalog(t, indextest.SmallCatalog)); err != nil {
			t.Fatal(err)
		}
		kw.Close()
		db, err := chromem.NewPersistentDB(filepath.Join(data, "vectors"), false)
		if err != nil {
			t.Fatal(err)
		}
		col, err := db.CreateCollection("builtin:v1:3", nil, func(context.Context, string) ([]float32, error) { return []float32{1, 0, 0}, nil })
		if err != nil {
			t.Fatal(err)
		}
		if err := col.AddDocument(context.Background(), chromem.Document{ID: "a__b", Content: "x", Embedding: []float32{0, 1, 0}}); err != nil {
			t.Fatal(err)
		}
		if foreign {
			os.WriteFile(filepath.Join(data, "vectors", "notes.txt"), []byte("mine"), 0o644)
		}
		old, unknown := filepath.Join(data, "sets", "0123456789ab"), filepath.Join(data, "sets", "ba9876543210")
		os.MkdirAll(old, 0o755)
		os.MkdirAll(unknown, 0o755)
		os.WriteFile(filepath.Join(old, "sources.json"), []byte(`{"sources":["builtin"],"last_used":"2026-11-23T10:00:00Z"}`), 0o644)
		os.WriteFile(filepath.Join(unknown, "notes.txt"), []byte("mine"), 0o644)

		before := treeOf(t, data)
		if _, err := OpenWith(data, Options{Set: &Set{}, ReadOnly: true}); !errors.Is(err, index.ErrNoIndex) {
			t.Fatalf("read-only open = %v, want ErrNoIndex (no set yet)", err)
		}
		sameTree(t, before, treeOf(t, data))

		st, err := OpenWith(data, Options{Set: &Set{}})
		if err != nil {
			t.Fatal(err)
		}
		healed := strings.Join(st.Healed(), "\n")
		st.Close()
		if _, err := os.Stat(filepath.Join(data, "keyword.bleve")); err == nil || !strings.Contains(healed, filepath.Join(data, "keyword.bleve")+": the index of the layout before catalog sets") {
			t.Errorf("foreign %v: the old layout's keyword index is there (%v) or not said:\n%s", foreign, err, healed)
		}
		_, err = os.Stat(filepath.Join(data, "vectors"))
		if said := strings.Contains(healed, filepath.Join(data, "vectors")+": the index of the layout before catalog sets"); foreign != (err == nil) || foreign == said {
			t.Errorf("foreign %v: DATA_DIR/vectors there: %v, removal said: %v; want it removed (and said) only when toolscout wrote it:\n%s", foreign, err == nil, said, healed)
		}
		if _, err := os.Stat(filepath.Join(old, setMarker)); err != nil || !strings.Contains(healed, old+": a catalog set made before the set marker") {
			t.Errorf("the set made before the marker is not marked (%v), or not said:\n%s", err, healed)
		}
		if _, err := os.Stat(filepath.Join(unknown, setMarker)); err == nil {
			t.Error("a folder with neither marker nor sources.json was marked")
		}
		if why := ownedSet(unknown, filepath.Base(unknown)); why == "" {
			t.Error("ownedSet takes a folder without the marker for a set")
		}
	}
}

// TestMigrationRacesAnotherOpen: two opens for writing of one folder not
// yet migrated, at once (two clients starting toolscout on the same
// data dir), both succeed; the one that does not get the keyword index
// leaves the step to the next open, and the folder ends migrated whole:
// the fit file the current format's bytes, nothing indexed again.
func TestMigrationRacesAnotherOpen(t *testing.T) {
	dir, cat := releasedSet(t)
	fits, _ := filepath.Glob(filepath.Join(dir, "fit-*.bin"))
	whole, err := os.ReadFile(fits[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fits[0], v2Fit(whole), 0o600); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	stores := make(chan *Store, 2)
	for range 2 {
		go func() {
			st, err := OpenWith(dir, Options{})
			errs <- err
			stores <- st
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("a concurrent open: %v", err)
		}
	}
	for range 2 {
		if st := <-stores; st != nil {
			st.Close()
		}
	}
	stats, healed := keywordSync(t, dir, cat)
	if stats.Added+stats.Changed+stats.Removed != 0 {
		t.Errorf("keyword sync after two concurrent opens = %+v (healed %q); want nothing indexed again", stats, healed)
	}
	if f, ok := readFormat(dir); !ok || f != dataFormat {
		t.Errorf("format = %d, %v; want %d", f, ok, dataFormat)
	}
	if got, _ := os.ReadFile(fits[0]); !bytes.Equal(got, whole) {
		t.Errorf("fit file after two concurrent opens: %.12q… (%d bytes), want the current format's bytes (%d)", got, len(got), len(whole))
	}
}

// TestMigrationWithoutItsStamp: a folder where the format file cannot
// be written (a folder in its place) still opens, migrated, with a line
// saying so; nothing is re-indexed.
func TestMigrationWithoutItsStamp(t *testing.T) {
	dir, cat := releasedSet(t)
	if err := os.Mkdir(filepath.Join(dir, formatFile), 0o755); err != nil {
		t.Fatal(err)
	}
	stats, healed := keywordSync(t, dir, cat)
	if stats.Added+stats.Changed+stats.Removed != 0 {
		t.Errorf("keyword sync = %+v; want nothing indexed again", stats)
	}
	if joined := strings.Join(healed, "\n"); !strings.Contains(joined, "record its format") || !strings.Contains(joined, "runs again at the next open") {
		t.Errorf("Healed = %q; want the format file that could not be written said", healed)
	}
}
