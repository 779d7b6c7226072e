package index

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolscout/toolscout/internal/racetest"
	"math/rand"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// scratchFiles returns three empty scratch files in a test's folder.
func scratchFiles(t *testing.T) [3]Scratch {
	t.Helper()
	var out [3]Scratch
	for i := range out {
		f, err := os.CreateTemp(t.TempDir(), "scratch-*")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		out[i] = f
	}
	return out
}

// sourceOf writes docs as catalog files and reads them as a source.
func sourceOf(t *testing.T, docs ...string) *CatalogSource {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, doc := range docs {
		paths = append(paths, writeFile(t, dir, fmt.Sprintf("catalog%d.json", i), doc))
	}
	src, err := ReadCatalogSource(paths)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Drop)
	return src
}

// builtCache is catalog.bin as a first build writes it today: the
// files' specs read (with the digests of their bytes), the catalog
// built, then encoded whole.
func builtCache(t *testing.T, src *CatalogSource, key []byte) ([]byte, error) {
	t.Helper()
	specs, last, err := src.SpecsFromLast(func() *Last { return nil })
	if err != nil {
		return nil, err
	}
	cat, err := NewCatalogFromLast(specs, last)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := WriteCatalogCache(&buf, key, cat); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), nil
}

// streamedCache is catalog.bin as a streamed build writes it.
func streamedCache(t *testing.T, src *CatalogSource, key []byte, o streamOptions) ([]byte, error) {
	t.Helper()
	var buf bytes.Buffer
	err := src.streamCache(context.Background(), &buf, key, scratchFiles(t), o)
	return buf.Bytes(), err
}

// repetitiveCatalog is a catalog of n tools in domains of 37, whose
// schemas, parameter descriptions (longer than byValueMax), groups and
// tags recur across tools, as those of one server's tools do, beside
// ones that do not.
func repetitiveCatalog(n int, seed int64) string {
	r := rand.New(rand.NewSource(seed))
	type tool struct {
		Name         string          `json:"name"`
		Description  string          `json:"description,omitempty"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
		Annotations  json.RawMessage `json:"annotations,omitempty"`
		Group        string          `json:"group,omitempty"`
		Tags         []string        `json:"tags,omitempty"`
		Deprecated   any             `json:"deprecated,omitempty"`
	}
	type domain struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Tools       []tool `json:"tools"`
	}
	var doms []domain
	for i := 0; i < n; i++ {
		if i%37 == 0 {
			doms = append(doms, domain{Name: fmt.Sprintf("d%03d", i/37), Description: fmt.Sprintf("  Domain %d of the test.  ", i/37)})
		}
		d := &doms[len(doms)-1]
		props := map[string]any{}
		for p := 0; p < 1+r.Intn(4); p++ {
			name := fmt.Sprintf("param_%d", r.Intn(12))
			props[name] = map[string]any{"type": "string", "description": fmt.Sprintf("The parameter number %d, described at some length to be long", r.Intn(6))}
		}
		schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
		if r.Intn(5) == 0 {
			schema = json.RawMessage(`{"type": "object"}`)
		}
		tl := tool{Name: fmt.Sprintf("tool_%d", i), Description: fmt.Sprintf("Tool %d does thing %d.", i, r.Intn(50)), InputSchema: schema,
			Group: []string{"", "read", "write", "admin"}[r.Intn(4)]}
		if r.Intn(3) == 0 {
			tl.Tags = []string{"tag-" + fmt.Sprint(r.Intn(3)), "a much longer tag that recurs across the tools " + fmt.Sprint(r.Intn(2))}
		}
		if r.Intn(7) == 0 {
			tl.OutputSchema = json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)
			tl.Annotations = json.RawMessage(`{"readOnlyHint": true}`)
		}
		if r.Intn(11) == 0 {
			tl.Deprecated = "use tool_0 instead"
		}
		d.Tools = append(d.Tools, tl)
	}
	data, _ := json.MarshalIndent(map[string]any{"domains": doms}, "", " ")
	return string(data)
}

// TestStreamCatalogCacheSameFile: a streamed build writes catalog.bin
// byte for byte as a first build does today (the same tools, digests,
// shared strings and schemas written once, the same catalog hash),
// whatever its batches and however much of its regions is on disk
// when it looks back for a string written before.
func TestStreamCatalogCacheSameFile(t *testing.T) {
	racetest.Plain(t)
	key := bytes.Repeat([]byte{7}, 32)
	small := streamOptions{batch: 5, spillAt: 64}
	for _, tc := range []struct {
		name string
		docs []string
		o    streamOptions
	}{
		{"rich catalog", []string{richCatalog}, streamOptions{batch: streamBatch, spillAt: spillAt}},
		{"rich catalog in small steps", []string{richCatalog}, small},
		{"builtin catalog", []string{string(builtinCatalogJSON)}, streamOptions{batch: streamBatch, spillAt: spillAt}},
		{"repetitive catalog", []string{repetitiveCatalog(3000, 1)}, streamOptions{batch: 512, spillAt: 4096}},
		{"repetitive catalog in small steps", []string{repetitiveCatalog(400, 2)}, small},
		{"two files", []string{repetitiveCatalog(200, 3), strings.Replace(repetitiveCatalog(100, 4), `"d0`, `"e0`, -1)}, small},
		{"empty catalog", []string{`{"domains": []}`}, small},
		{"domain without tools", []string{`{"domains": [{"name": "empty", "description": "nothing"}, {"name": "a", "tools": [{"name": "t", "inputSchema": {"type": "object"}}]}]}`}, small},
		{"members in another order", []string{`{"domains": [{"tools": [{"inputSchema": {"type": "object"}, "name": "t", "group": "g"}], "x": [1], "description": "late", "name": "a"}]}`}, small},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := sourceOf(t, tc.docs...)
			want, err := builtCache(t, src, key)
			if err != nil {
				t.Fatal(err)
			}
			got, err := streamedCache(t, src, key, tc.o)
			if err != nil {
				t.Fatalf("streamed build: %v", err)
			}
			if !bytes.Equal(got, want) {
				at := 0
				for at < min(len(got), len(want)) && got[at] == want[at] {
					at++
				}
				t.Fatalf("streamed catalog.bin is %d bytes, differs from the built one's %d bytes at %d", len(got), len(want), at)
			}
			c, err := DecodeCatalogCache(got)
			if err != nil {
				t.Fatalf("DecodeCatalogCache(streamed) = %v", err)
			}
			if built := mustCatalogOf(t, src); c.Catalog().Hash() != built.Hash() || c.Catalog().Len() != built.Len() {
				t.Errorf("streamed catalog: hash %s, %d tools; want %s, %d", c.Catalog().Hash(), c.Catalog().Len(), built.Hash(), built.Len())
			}
		})
	}
}

func mustCatalogOf(t *testing.T, src *CatalogSource) *Catalog {
	t.Helper()
	specs, err := src.Specs()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := NewCatalog(specs)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// TestStreamCatalogCacheErrors: bad input is the error a build gives
// today (the file, the JSON path, the reason), the first in the files'
// order; a document a streamed build does not read, or whose JSON is
// wrong anywhere (which a build today reports first), is
// ErrNotStreamable, for the caller to build it the usual way.
func TestStreamCatalogCacheErrors(t *testing.T) {
	const ok = `{"name": "fine", "inputSchema": {"type": "object"}}`
	tools := func(ts ...string) string { return `[` + strings.Join(ts, ",") + `]` }
	dom := func(name, tools string) string {
		return `{"name": "` + name + `", "description": "d", "tools": ` + tools + `}`
	}
	doc := func(doms ...string) string { return `{"domains": [` + strings.Join(doms, ",") + `]}` }
	for _, tc := range []struct {
		name          string
		docs          []string
		notStreamable bool
	}{
		{name: "invalid domain name", docs: []string{doc(dom("a", tools(ok)), dom("Bad Name", tools(ok)))}},
		{name: "duplicate domain across files", docs: []string{doc(dom("a", tools(ok))), doc(dom("b", tools(ok)), dom("a", tools(ok)))}},
		{name: "duplicate tool", docs: []string{doc(dom("a", tools(ok, `{"name": "other", "inputSchema": {"type": "object"}}`, ok)))}},
		{name: "schema not an object schema", docs: []string{doc(dom("a", tools(ok, `{"name": "s", "inputSchema": {"type": "string"}}`)))}},
		{name: "schema missing", docs: []string{doc(dom("a", tools(`{"name": "s"}`)))}},
		{name: "bad group", docs: []string{doc(dom("a", tools(`{"name": "g", "group": " spaced ", "inputSchema": {"type": "object"}}`)))}},
		{name: "annotations not an object", docs: []string{doc(dom("a", tools(`{"name": "n", "annotations": [1], "inputSchema": {"type": "object"}}`)))}},
		{name: "tool without a name", docs: []string{doc(dom("a", tools(`{"inputSchema": {"type": "object"}}`)))}},
		{name: "first of two errors", docs: []string{doc(dom("a", tools(`{"name": "x", "inputSchema": {"type": "array"}}`)), dom("BAD", tools(ok)))}},
		{name: "domain error before its tools' errors", docs: []string{doc(dom("BAD", tools(`{"name": "x"}`)))}},
		{name: "wrong JSON type after an error", notStreamable: true,
			docs: []string{doc(dom("BAD", tools(ok)), dom("b", tools(`{"name": "t", "tags": "not a list", "inputSchema": {"type": "object"}}`)))}},
		{name: "invalid JSON in a later file", notStreamable: true, docs: []string{doc(dom("BAD", tools(ok))), `{"domains": [{"name": "b", "tools": [{"name": tru}]}]}`}},
		{name: "top-level key other than domains", notStreamable: true, docs: []string{`{"$schema": "x", "domains": []}`}},
		{name: "tools null", notStreamable: true, docs: []string{`{"domains": [{"name": "a", "tools": null}]}`}},
		{name: "domain name not a string", notStreamable: true, docs: []string{`{"domains": [{"name": 5, "tools": []}]}`}},
		{name: "group not a string", notStreamable: true, docs: []string{doc(dom("a", tools(`{"name": "g", "group": 5, "inputSchema": {"type": "object"}}`)))}},
		{name: "key in another case", notStreamable: true, docs: []string{`{"domains": [{"Name": "a", "tools": []}]}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := sourceOf(t, tc.docs...)
			_, err := streamedCache(t, src, make([]byte, 32), streamOptions{batch: 2, spillAt: 16})
			_, want := builtCache(t, src, make([]byte, 32))
			if tc.notStreamable {
				if !errors.Is(err, ErrNotStreamable) {
					t.Fatalf("streamed build = %v; want ErrNotStreamable (the usual build says %v)", err, want)
				}
				return
			}
			if want == nil {
				t.Fatal("the usual build took the input: a bad case")
			}
			var got, exp *CatalogError
			if !errors.As(err, &got) || !errors.As(want, &exp) || !reflect.DeepEqual(got, exp) {
				t.Fatalf("streamed build = %v; want the usual build's %v", err, want)
			}
		})
	}
}

// TestStreamCatalogCacheHeap: a streamed build's live heap does not
// grow with the tools' texts and schemas. The catalog's tools are large
// (4 KB of description and schema each); after each batch the live
// heap (after a collection) stays under an eighth of the catalog file,
// where a build that held its tools, or their specs, would hold more
// than the file.
func TestStreamCatalogCacheHeap(t *testing.T) {
	racetest.Plain(t)
	const n = 3000
	var b strings.Builder
	b.WriteString(`{"domains": [`)
	for i := 0; i < n; i++ {
		if i%100 == 0 {
			if i > 0 {
				b.WriteString(`]},`)
			}
			fmt.Fprintf(&b, `{"name": "d%d", "description": "domain %d", "tools": [`, i/100, i/100)
		} else {
			b.WriteByte(',')
		}
		words := strings.Repeat(fmt.Sprintf("word%d ", i), 250)
		fmt.Fprintf(&b, `{"name": "t%d", "description": %q, "inputSchema": {"type": "object", "properties": {"p%d": {"type": "string", "description": %q}}}}`, i, words, i, words)
	}
	b.WriteString(`]}]}`)
	src := sourceOf(t, b.String())
	size := uint64(b.Len())

	var ms runtime.MemStats
	live := func() uint64 {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	base := live()
	var peak uint64
	o := streamOptions{batch: 100, spillAt: 64 << 10, afterBatch: func() { peak = max(peak, live()) }}
	got, err := streamedCache(t, src, make([]byte, 32), o)
	if err != nil {
		t.Fatal(err)
	}
	if peak == 0 {
		t.Fatal("afterBatch never called")
	}
	grown := peak - min(peak, base) // the output is written after the last batch
	t.Logf("catalog file %d bytes; the live heap grew by %d bytes at most (catalog.bin %d bytes)", size, grown, len(got))
	if grown > size/8 {
		t.Errorf("the live heap grew by %d bytes over a streamed build of a %d-byte catalog: want under %d", grown, size, size/8)
	}
}

// FuzzStreamCatalogCache: whatever the document, a streamed build gives
// what a build today gives (the same catalog.bin, or the same
// *CatalogError), or ErrNotStreamable; never a panic.
func FuzzStreamCatalogCache(f *testing.F) {
	f.Add(richCatalog)
	f.Add(repetitiveCatalog(40, 5))
	f.Add(`{"domains": [{"name": "a", "tools": [{"name": "t", "inputSchema": {"type": "object"}}, {"name": "t", "inputSchema": {"type": "object"}}]}]}`)
	f.Add(`{"domains": [{"tools": [{"name": "x", "group": "g", "inputSchema": {"type": "object", "properties": {"p": {"description": "d"}}}}], "name": "BAD"}]}`)
	f.Add(`{"domains": [{"name": "a", "tools": [{"name": "b__c", "inputSchema": {"type": "object"}}]}, {"name": "a__b", "tools": [{"name": "c", "inputSchema": {"type": "object"}}]}]}`)
	f.Fuzz(func(t *testing.T, doc string) {
		src := sourceOf(t, doc)
		key := make([]byte, 32)
		want, wantErr := builtCache(t, src, key)
		got, err := streamedCache(t, src, key, streamOptions{batch: 3, spillAt: 32})
		switch {
		case errors.Is(err, ErrNotStreamable):
		case wantErr == nil && err == nil:
			if !bytes.Equal(got, want) {
				t.Fatalf("streamed catalog.bin differs from the built one for %q", doc)
			}
		case wantErr != nil && err != nil:
			var g, w *CatalogError
			if !errors.As(err, &g) || !errors.As(wantErr, &w) || !reflect.DeepEqual(g, w) {
				t.Fatalf("streamed build = %v; want %v", err, wantErr)
			}
		default:
			t.Fatalf("streamed build = %v; the usual build = %v", err, wantErr)
		}
	})
}
