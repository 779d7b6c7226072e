package index

import (
	"os"
	"path/filepath"
	"testing"
)

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
