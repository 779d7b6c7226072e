package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/pin"
	"github.com/toolscout/toolscout/internal/indextest"
)

// TestVerify: a byte flipped in any checked file of a folder is reported
// by Verify, naming that file, even where no start reads it (a delta of
// another catalog than the one served, another embedder's statistics);
// a clean folder reports nothing, and Verify changes nothing.
func TestVerify(t *testing.T) {
	srcDir := t.TempDir()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	doc := richCatalog
	for k := 0; k < 20; k++ { // enough tools for one edit to be a delta
		doc = strings.Replace(doc, `{"name":"alpha","description":"","tools":[`,
			fmt.Sprintf(`{"name":"alpha","description":"","tools":[{"name":"pad%d","description":"Pad.","inputSchema":{"type":"object"}},`, k), 1)
	}
	for _, d := range []string{doc, strings.Replace(doc, "List drafts.", "List the drafts.", 1)} {
		saveCatalogDoc(t, s, filepath.Join(srcDir, "test"), d)
	}
	cat := indextest.MustCatalog(t, indextest.SmallCatalog)
	if err := s.SaveFit("other-embedder", cat, saveLabel("statistics no start here reads")); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveListedTools(listedSample()); err != nil {
		t.Fatal(err)
	}
	fl := s.Feedback()
	for i := 0; i < 5; i++ {
		if err := fl.Record(fbEvent(i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"one", "two"} { // the second keeps the first as pins.bin.prev
		if err := s.Pins().Update(func(b *pin.Book) bool {
			b.Check("alpha", []index.ToolSpec{{Name: name, Description: "A tool.", InputSchema: []byte(`{"type":"object"}`)}}, time.Unix(1, 0))
			return true
		}); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.Verify(); len(got) != 0 {
		t.Fatalf("a clean folder: %v", got)
	}
	files := []string{index.CatalogCacheFile, index.CatalogDeltaFile, filepath.Base(s.fitPath("other-embedder", cat)), listedFile, pinsFile, pinsPrev, feedbackFile}
	for _, name := range files {
		path := filepath.Join(s.dir, name)
		good, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s was not written: %v", name, err)
		}
		bad := append([]byte(nil), good...)
		bad[len(bad)*2/3] ^= 0x08
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		got := s.Verify()
		if len(got) == 0 || got[0].Path != path {
			t.Errorf("a byte flipped in %s: Verify = %v, want it named first", name, got)
		}
		for _, d := range got[1:] {
			if !(name == index.CatalogCacheFile && d.Path == filepath.Join(s.dir, index.CatalogDeltaFile)) {
				t.Errorf("a byte flipped in %s: %v reported too", name, d)
			}
		}
		if after, _ := os.ReadFile(path); string(after) != string(bad) {
			t.Errorf("Verify changed %s", name)
		}
		if err := os.WriteFile(path, good, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if mem, _ := Open(""); mem.Verify() != nil {
		t.Error("a store in memory reports damage")
	}
}

// TestVerifySkipsWhatTheStartRead: a catalog cache this process read
// whole (a start) is not read again by Verify, which serve runs after its
// start: at 100k tools that was a second copy of a 62 MB catalog.bin. A
// store that has not read it (doctor's) checks it.
func TestVerifySkipsWhatTheStartRead(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	key := saveCatalogDoc(t, s, filepath.Join(t.TempDir(), "test"), richCatalog)
	if s.CachedCatalog(key) == nil {
		t.Fatal("the saved catalog is not read back")
	}
	path := filepath.Join(dir, index.CatalogCacheFile)
	good, _ := os.ReadFile(path)
	bad := append([]byte(nil), good...)
	bad[len(bad)/2] ^= 0x08
	os.WriteFile(path, bad, 0o644) // changed after this process read it
	if got := s.Verify(); len(got) != 0 {
		t.Errorf("Verify after the start read the cache: %v, want it not read again", got)
	}
	other, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if got := other.Verify(); len(got) != 1 || got[0].Path != path {
		t.Errorf("another process's Verify: %v, want %s reported", got, path)
	}
}
