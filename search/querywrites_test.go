package search

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/internal/ollamafake"
	"github.com/toolscout/toolscout/internal/treestate"
)

// TestQueriesWriteNoFile: a data dir is written when it is opened and
// synced, never by a query. Two collections (Ollama's, the built-in
// embedder's) are indexed as two runs of toolscout index leave them; then
// queries of every mode, with and without filters, explained, of several
// steps, excluding tools, and related tools run on each collection:
//   - on a store opened again, so that each query is its collection's
//     first (no sync read it), Ollama's collection file damaged (what its
//     first reader used to remove, and now the next write path does);
//   - on a Live index that loaded (and so may write) before its queries;
//   - on a read-only store.
//
// The data dir must be as it was before the queries. Bleve's merger and
// persister run in the background of a writable keyword index, on their
// own schedule, whatever queries run: with a writable store keyword.bleve/
// is left out of the comparison; the read-only store (no merger, no
// persister) compares every file.
func TestQueriesWriteNoFile(t *testing.T) {
	ctx := context.Background()
	specs, err := index.ParseCatalog("test", []byte(testCatalog))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := index.NewCatalog(specs)
	if err != nil {
		t.Fatal(err)
	}
	fake := &ollamafake.Server{Models: map[string]int{embed.DefaultOllamaModel: 32}, Vector: ollamafake.BagOfWords}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	ollama := func() embed.Embedder { return embed.NewOllama(embed.OllamaOptions{Host: u}) }
	embedders := func() []embed.Embedder { return []embed.Embedder{ollama(), embed.NewBuiltin(embed.BuiltinOptions{})} }
	dir := t.TempDir()
	for _, emb := range embedders() {
		openLive(t, dir, emb, false, specs).Close()
	}
	ollamaFile := filepath.Join(dir, "vectors", base64.RawURLEncoding.EncodeToString([]byte(collectionOf(ollama(), 32).Name()))+".snap")
	if files, _ := filepath.Glob(filepath.Join(dir, "vectors", "*")); len(files) != 2 || !slices.Contains(files, ollamaFile) {
		t.Fatalf("vectors/ holds %v, want the two collections, %s one of them", files, filepath.Base(ollamaFile))
	}
	queries := func(t *testing.T, eng *Engine) (notices []string) {
		t.Helper()
		reqs := []Request{
			{Query: "send a chat message"},
			{Query: "weather forecast for a city", Explain: true, Limit: 3},
			{Query: "find the forecast for tomorrow. then post it to the team channel", Limit: 5},
			{Query: "open an issue", Exclude: []string{"github__create_issue"}},
			{Query: "list the issues", Domain: "github"},
			{Query: "list the issues", Domain: "github", Group: "issues"},
		}
		for _, mode := range []Mode{Keyword, Semantic, Hybrid} {
			for _, r := range reqs {
				r.Mode = mode
				resp, err := eng.Search(ctx, r)
				if err != nil {
					t.Errorf("Search(%+v): %v", r, err)
					continue
				}
				if resp.Notice != "" {
					notices = append(notices, resp.Notice)
				}
				eng.FusionInputs(ctx, r)
			}
		}
		for _, tool := range cat.Tools() {
			eng.Related(ctx, tool, 3)
		}
		return notices
	}
	// unchanged fails the test if dir changed since before, keyword.bleve/
	// left out unless all.
	unchanged := func(t *testing.T, before map[string]string, all bool) {
		t.Helper()
		after, err := treestate.Of(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range treestate.Diff(before, after) {
			if all || !strings.HasPrefix(d, filepath.Join(dir, "keyword.bleve")) {
				t.Errorf("a query wrote the data dir: %s", d)
			}
		}
	}
	t.Run("first queries of each collection", func(t *testing.T) {
		data, err := os.ReadFile(ollamaFile)
		if err != nil {
			t.Fatal(err)
		}
		data[len(data)/3] ^= 0xff
		if err := os.WriteFile(ollamaFile, data, 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := store.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		before, err := treestate.Of(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, emb := range embedders() {
			notices := queries(t, NewEngine(Options{Catalog: cat, Keyword: st.Keyword, Vectors: st.Vectors, Embedder: emb}))
			if emb.Info().Provider == "ollama" && len(notices) == 0 {
				t.Error("the damaged collection was searched without a notice: want keyword ranking saying why")
			}
		}
		unchanged(t, before, false)
		if _, err := os.Stat(ollamaFile); err != nil {
			t.Errorf("the damaged collection file: %v; want it left for the next index to heal", err)
		}
	})
	t.Run("after a load", func(t *testing.T) {
		for _, emb := range embedders() {
			live := openLive(t, dir, emb, false, specs) // heals Ollama's collection
			before, err := treestate.Of(dir)
			if err != nil {
				t.Fatal(err)
			}
			queries(t, live.Engine())
			unchanged(t, before, false)
			live.Close()
		}
	})
	t.Run("read-only", func(t *testing.T) {
		before, err := treestate.Of(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, emb := range embedders() {
			st, err := store.OpenWith(dir, store.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			queries(t, NewEngine(Options{Catalog: cat, Keyword: st.Keyword, Vectors: st.Vectors, Embedder: emb}))
			st.Close()
		}
		unchanged(t, before, true)
	})
}

// TestQueriesWriteNoFileAfterACrash: a data dir whose vector collection
// has a delta a kill left behind (one written for the collection file
// before its last full write: a kill between that write and the delta's
// removal) or a damaged one. Where the store's open finds it, the open
// heals it; where it appears after the open (another process's kill),
// queries of every mode through search.Engine serve what they can read
// and leave it: the data dir's files, their sizes, times and bytes, are
// as before the queries. A read-only store (no background writer at
// all) is compared whole.
func TestQueriesWriteNoFileAfterACrash(t *testing.T) {
	ctx := context.Background()
	specs := func(changed int) []index.DomainSpec {
		var out []index.DomainSpec
		for d, domain := range []string{"files", "chat"} {
			spec := index.DomainSpec{Name: domain}
			for i := range 15 {
				desc := fmt.Sprintf("%s tool %d: reads, writes and lists %s item number %d.", domain, i, domain, i)
				if d*15+i < changed {
					desc = fmt.Sprintf("%s tool %d, edited: sends and searches %s entry %d.", domain, i, domain, i)
				}
				spec.Tools = append(spec.Tools, tool(fmt.Sprintf("%s_tool_%d", domain, i), desc))
			}
			out = append(out, spec)
		}
		return out
	}
	emb := embed.NewBuiltin(embed.BuiltinOptions{})
	dir := t.TempDir()
	deltas := func() []string {
		files, _ := filepath.Glob(filepath.Join(dir, "vectors", "*.delta.snap"))
		return files
	}
	openLive(t, dir, emb, false, specs(0)).Close()
	openLive(t, dir, emb, false, specs(1)).Close() // one tool: a delta
	if len(deltas()) != 1 {
		t.Fatalf("vectors/ has deltas %v after a one-tool change, want one", deltas())
	}
	deltaPath := deltas()[0]
	staleDelta, err := os.ReadFile(deltaPath)
	if err != nil {
		t.Fatal(err)
	}
	final := specs(20)
	openLive(t, dir, emb, false, final).Close() // twenty: written whole, the delta removed
	if len(deltas()) != 0 {
		t.Fatalf("vectors/ has deltas %v after a large change, want none", deltas())
	}
	specsCat, err := index.NewCatalog(final)
	if err != nil {
		t.Fatal(err)
	}
	queries := func(t *testing.T, st *store.Store) {
		t.Helper()
		eng := NewEngine(Options{Catalog: specsCat, Keyword: st.Keyword, Vectors: st.Vectors, Embedder: emb})
		for _, mode := range []Mode{Keyword, Semantic, Hybrid} {
			for _, r := range []Request{{Query: "send a chat entry"}, {Query: "list files", Domain: "files", Explain: true}} {
				r.Mode = mode
				resp, err := eng.Search(ctx, r)
				if err != nil {
					t.Errorf("Search(%+v): %v", r, err)
				} else if len(resp.Results) == 0 {
					t.Errorf("Search(%+v) found nothing; want the collection's tools served", r)
				}
			}
		}
		for _, tl := range specsCat.Tools() {
			eng.Related(ctx, tl, 3)
		}
	}
	compare := func(t *testing.T, before map[string]string, all bool) {
		t.Helper()
		after, err := treestate.WithContents(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range treestate.Diff(before, after) {
			if all || !strings.HasPrefix(d, filepath.Join(dir, "keyword.bleve")) {
				t.Errorf("a query wrote the data dir: %s", d)
			}
		}
	}
	for _, tc := range []struct{ name, delta string }{
		{"stale delta", string(staleDelta)},
		{"damaged delta", string(staleDelta[:len(staleDelta)/2])},
	} {
		t.Run(tc.name+" found by the open", func(t *testing.T) {
			if err := os.WriteFile(deltaPath, []byte(tc.delta), 0o644); err != nil {
				t.Fatal(err)
			}
			st, err := store.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if len(deltas()) != 0 {
				t.Errorf("the open left the crash's delta %v; want it healed", deltas())
			}
			before, err := treestate.WithContents(dir)
			if err != nil {
				t.Fatal(err)
			}
			queries(t, st)
			compare(t, before, false)
		})
		t.Run(tc.name+" after the open", func(t *testing.T) {
			st, err := store.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if err := os.WriteFile(deltaPath, []byte(tc.delta), 0o644); err != nil {
				t.Fatal(err)
			}
			before, err := treestate.WithContents(dir)
			if err != nil {
				t.Fatal(err)
			}
			queries(t, st)
			compare(t, before, false)
		})
		t.Run(tc.name+" read-only", func(t *testing.T) {
			if err := os.WriteFile(deltaPath, []byte(tc.delta), 0o644); err != nil {
				t.Fatal(err)
			}
			before, err := treestate.WithContents(dir)
			if err != nil {
				t.Fatal(err)
			}
			st, err := store.OpenWith(dir, store.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			queries(t, st)
			st.Close()
			compare(t, before, true)
			os.Remove(deltaPath)
		})
	}
}
