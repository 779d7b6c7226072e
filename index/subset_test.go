package index

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestSubset(t *testing.T) {
	obj := json.RawMessage(`{"type":"object"}`)
	cat, err := NewCatalog([]DomainSpec{
		{Name: "memory", Tools: []ToolSpec{{Name: "read_graph", InputSchema: obj, Group: "read"}, {Name: "delete_entities", InputSchema: obj, Group: "write"}}},
		{Name: "other", Tools: []ToolSpec{{Name: "read_graph", InputSchema: obj}}},
		{Name: "secret", Tools: []ToolSpec{{Name: "launch", InputSchema: obj}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.Resolve("read_graph"); err == nil {
		t.Fatal("read_graph should be ambiguous in the whole catalog")
	}
	sub := cat.Subset(func(t *Tool) bool { return t.Domain == "memory" && t.Name == "read_graph" })
	if got, err := sub.Resolve("read_graph"); err != nil || got.QualifiedName != "memory__read_graph" {
		t.Errorf("Resolve(read_graph) = %v, %v, want memory__read_graph", got, err)
	}
	for _, name := range []string{"other__read_graph", "secret__launch", "memory__delete_entities", "launch", "memory/delete_entities"} {
		if _, err := sub.Resolve(name); !errors.Is(err, ErrToolNotFound) {
			t.Errorf("Resolve(%q) = %v, want ErrToolNotFound", name, err)
		}
	}
	if sub.Len() != 1 || len(sub.Domains()) != 1 || sub.Domain("secret") != nil || sub.Domain("other") != nil {
		t.Errorf("subset has %d tools in %d domains", sub.Len(), len(sub.Domains()))
	}
	if g := sub.Domain("memory").Groups; len(g) != 1 || g[0] != "read" {
		t.Errorf("memory's groups = %v, want [read]", g)
	}
	if len(sub.ToolsNamed("launch")) != 0 {
		t.Error("ToolsNamed finds a tool left out")
	}
	if sub.Hash() == cat.Hash() {
		t.Error("the subset has the whole catalog's hash")
	}
}
