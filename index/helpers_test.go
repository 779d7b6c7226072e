package index

import (
	"github.com/toolscout/toolscout/internal/fileio"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// openWithLeftovers dates the files at paths, temporary files a kill left
// behind, past leftoverAge and opens the store in dir (closed when the
// test ends).
func openWithLeftovers(t *testing.T, dir string, paths ...string) *Store {
	t.Helper()
	old := time.Now().Add(-2 * fileio.LeftoverAge)
	for _, p := range paths {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustCatalog(t testing.TB, js string) *Catalog {
	t.Helper()
	specs, err := ParseCatalog("test", []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := NewCatalog(specs)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}
