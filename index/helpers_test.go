package index

import (
	"encoding/json"
	"fmt"
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

// deltaCatalog returns a catalog of 5 domains × 20 tools; edit changes
// it per tool (return false to leave the tool out).
func deltaCatalog(t *testing.T, extra []string, edit func(d, i int, tool map[string]any) bool) *Catalog {
	t.Helper()
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"}
	var domains []map[string]any
	for d := 0; d < 5; d++ {
		var tools []map[string]any
		for i := 0; i < 20; i++ {
			tool := map[string]any{
				"name":        fmt.Sprintf("tool%02d", i),
				"description": fmt.Sprintf("Do %s %s with %s.", words[(d+i)%12], words[(3*i+1)%12], words[(d*7+i*5)%12]),
				"inputSchema": map[string]any{"type": "object"},
			}
			if edit == nil || edit(d, i, tool) {
				tools = append(tools, tool)
			}
		}
		if d == 0 {
			for _, name := range extra {
				tools = append(tools, map[string]any{"name": name, "description": "Added " + name + " later.", "inputSchema": map[string]any{"type": "object"}})
			}
		}
		domains = append(domains, map[string]any{"name": fmt.Sprintf("dom%d", d), "description": "Domain " + words[d], "tools": tools})
	}
	raw, err := json.Marshal(map[string]any{"domains": domains})
	if err != nil {
		t.Fatal(err)
	}
	return mustCatalog(t, string(raw))
}
