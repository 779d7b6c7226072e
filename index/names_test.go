package index

import (
	"fmt"
	"hash/maphash"
	"runtime"
	"slices"
	"testing"
)

// lookupSpecs returns domains tools with names that repeat across
// domains (every tool name is in three domains) and a few that repeat
// the words of another ("list_items" and "listItems").
func lookupSpecs(domains, tools int) []DomainSpec {
	specs := make([]DomainSpec, domains)
	for d := range specs {
		specs[d] = DomainSpec{Name: fmt.Sprintf("dom%03d", d), Description: "a domain"}
		for i := 0; i < tools; i++ {
			name := fmt.Sprintf("tool_%d_%d", d/3, i)
			if i == 0 {
				name = "list_items"
			} else if i == 1 && d%2 == 0 {
				name = "listItems"
			}
			specs[d].Tools = append(specs[d].Tools, ToolSpec{Name: name, Description: "does " + name, InputSchema: []byte(`{"type":"object"}`)})
		}
	}
	return specs
}

// TestNameLookupsAnswerAsAScan: ToolsWithName, ToolsNamed and Resolve
// answer what a scan of the catalog in order finds, for names that one,
// three or many domains have, names that differ only in case or
// spelling, and names nobody has.
func TestNameLookupsAnswerAsAScan(t *testing.T) {
	cat, err := NewCatalog(lookupSpecs(30, 12))
	if err != nil {
		t.Fatal(err)
	}
	scan := func(keep func(*Tool) bool) []*Tool {
		var out []*Tool
		for _, tl := range cat.Tools() {
			if keep(tl) {
				out = append(out, tl)
			}
		}
		return out
	}
	for _, name := range []string{"list_items", "listItems", "tool_4_7", "tool_9_11", "tool_0_0", "Tool_4_7", "", "zzz", "a"} {
		want := scan(func(tl *Tool) bool { return tl.Name == name })
		if got := cat.ToolsWithName(name); !slices.Equal(got, want) {
			t.Errorf("ToolsWithName(%q) = %d tools, want %d in catalog order", name, len(got), len(want))
		}
		_, err := cat.Resolve(name)
		if len(want) == 1 && err != nil || len(want) != 1 && err == nil {
			t.Errorf("Resolve(%q) = %v with %d tools of that name", name, err, len(want))
		}
	}
	for _, q := range []string{"list items", "listItems", "dom004 list items", "dom004__tool_1_3", "tool 4 7", "dom005 tool 1 2", "nothing here", ""} {
		w := NameWords(q)
		want := scan(func(tl *Tool) bool {
			return NameWords(tl.Name) == w || NameWords(tl.Domain+" "+tl.Name) == w || NameWords(tl.QualifiedName) == w
		})
		if got := cat.ToolsNamed(q); !slices.Equal(got, want) {
			t.Errorf("ToolsNamed(%q) = %d tools, want %d in catalog order", q, len(got), len(want))
		}
	}
	// A caller appending to an answer does not overwrite the next name's tools.
	got := cat.ToolsWithName("tool_4_7")
	next := slices.Clone(cat.ToolsWithName("tool_4_8"))
	_ = append(got, nil)
	if !slices.Equal(cat.ToolsWithName("tool_4_8"), next) {
		t.Fatal("an append to ToolsWithName's answer changed another name's tools")
	}
}

// TestNameLookupsHeldCompact: the lookups are held for the server's
// life, so their bytes per tool are bounded (a map of a slice per name
// and per form held 265 bytes a tool here, arrays sorted by hash 48).
func TestNameLookupsHeldCompact(t *testing.T) {
	cat, err := NewCatalog(lookupSpecs(200, 100))
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cat.PrepareLookups()
	runtime.GC()
	runtime.ReadMemStats(&after)
	perTool := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(cat.Len())
	t.Logf("%.1f bytes a tool", perTool)
	if perTool > 80 {
		t.Fatalf("the name lookups hold %.0f bytes a tool, want at most 80", perTool)
	}
	runtime.KeepAlive(cat)
}

// TestNameLookupsSharedHash: two keys of one hash (forced here; rare
// with 64 bits) each answer only their own tools.
func TestNameLookupsSharedHash(t *testing.T) {
	a1, b, a2 := &Tool{Name: "a"}, &Tool{Name: "b"}, &Tool{Name: "a"}
	l := &nameLookups{seed: maphash.MakeSeed()}
	for _, k := range []string{"a", "b"} {
		h := maphash.String(l.seed, k)
		l.nameHash, l.byName = []uint64{h, h, h}, []*Tool{a1, b, a2}
		want := []*Tool{a1, a2}
		if k == "b" {
			want = []*Tool{b}
		}
		if got := l.named(k); !slices.Equal(got, want) {
			t.Errorf("named(%q) with a shared hash = %v, want %v", k, got, want)
		}
		if got := l.named("c"); got != nil {
			t.Errorf("named(c) = %v, want nil", got)
		}
	}
}

// BenchmarkNameLookups: building the lookups of 100k tools, as a server
// does once loaded.
func BenchmarkNameLookups(b *testing.B) {
	cat, err := NewCatalog(lookupSpecs(1000, 100))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		(&nameLookups{}).build(cat.Tools())
	}
}
