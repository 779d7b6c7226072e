package keyword

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/mapping"
	bleveindex "github.com/blevesearch/bleve_index_api"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/indextest"
)

func TestAnalyzer(t *testing.T) {
	kw, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer kw.Close()
	tests := []struct{ in, want string }{
		{"getFileContents", "get file content"},
		{"search repositories", "search repositori"},
		{"the running messages", "run messag"},
		{"list_issues", "list issu"},
	}
	for _, tc := range tests {
		if got := strings.Join(kw.Analyze(tc.in), " "); got != tc.want {
			t.Errorf("Analyze(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func ids(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func TestKeywordSearch(t *testing.T) {
	ctx := context.Background()
	cat := indextest.MustCatalog(t, indextest.SmallCatalog)
	kw, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer kw.Close()
	st, err := kw.Sync(ctx, cat)
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != 6 {
		t.Errorf("Sync stats = %v, want 6 added", st)
	}
	tests := []struct {
		name, query, domain, group string
		wantFirst                  string
		wantCount                  int // -1: don't check
	}{
		{"stemmed description", "sending", "", "", "slack__post_message", 1},
		{"split name", "file contents", "", "", "github__getFileContents", -1},
		{"exact name field", "getFileContents", "", "", "github__getFileContents", -1},
		{"domain filter", "create issue", "jira", "", "jira__create_issue", 1},
		{"group filter", "issue", "github", "issues", "", 2},
		{"parameter name", "channel id", "", "", "slack__post_message", -1},
		{"domain description", "tickets", "", "", "jira__create_issue", -1},
		{"no match", "weather forecast", "", "", "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := kw.Search(ctx, Query{Text: tc.query, Domain: tc.domain, Group: tc.group, Size: 10})
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantFirst != "" && (len(hits) == 0 || hits[0].ID != tc.wantFirst) {
				t.Errorf("Search(%q) = %v, want %s first", tc.query, ids(hits), tc.wantFirst)
			}
			if tc.wantCount >= 0 && len(hits) != tc.wantCount {
				t.Errorf("Search(%q) = %v, want %d hits", tc.query, ids(hits), tc.wantCount)
			}
			for _, h := range hits {
				tool := cat.Tool(h.ID)
				if tc.domain != "" && tool.Domain != tc.domain || tc.group != "" && tool.Group != tc.group {
					t.Errorf("hit %s is outside domain %q group %q", h.ID, tc.domain, tc.group)
				}
			}
		})
	}
	if _, err := kw.Search(ctx, Query{Text: "  "}); err != ErrEmptyQuery {
		t.Errorf("empty query error = %v, want ErrEmptyQuery", err)
	}
	hits, err := kw.Search(ctx, Query{Text: "messges", Fuzzy: 1})
	if err != nil || len(hits) == 0 {
		t.Errorf("fuzzy Search(messges) = %v, %v; want matches", ids(hits), err)
	}
	hits, err = kw.Search(ctx, Query{Text: "message", Explain: true, Size: 1})
	if err != nil || len(hits) != 1 || hits[0].Explanation == "" {
		t.Errorf("Search with Explain = %+v, %v; want an explanation", hits, err)
	}
}

func TestKeywordIndexPersistsBM25AndSyncsIncrementally(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "kw.bleve")
	kw, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kw.Sync(ctx, indextest.MustCatalog(t, indextest.SmallCatalog)); err != nil {
		t.Fatal(err)
	}
	kw.Close()

	kw, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer kw.Close()
	if im, ok := kw.idx.Mapping().(*mapping.IndexMappingImpl); !ok || im.ScoringModel != bleveindex.BM25Scoring {
		t.Errorf("scoring model after reopen = %+v, want bm25", kw.idx.Mapping())
	}
	// Same catalog again: nothing to do.
	st, err := kw.Sync(ctx, indextest.MustCatalog(t, indextest.SmallCatalog))
	if err != nil || st.Unchanged != 6 || st.Added+st.Changed+st.Removed != 0 {
		t.Fatalf("re-sync = %v, %v; want 6 unchanged", st, err)
	}
	// One changed description, one tool removed (jira domain gone).
	changed := strings.Replace(indextest.SmallCatalog, "Send a message to a channel.", "Post a chat note to a room.", 1)
	changed = changed[:strings.Index(changed, `,
 {"name":"jira"`)] + "]}"
	st, err = kw.Sync(ctx, indextest.MustCatalog(t, changed))
	if err != nil {
		t.Fatal(err)
	}
	if st.Changed != 1 || st.Removed != 1 || st.Unchanged != 4 {
		t.Errorf("sync after change = %v, want 1 changed, 1 removed, 4 unchanged", st)
	}
	hits, _ := kw.Search(ctx, Query{Text: "room"})
	if len(hits) != 1 || hits[0].ID != "slack__post_message" {
		t.Errorf("Search(room) = %v, want the updated post_message", ids(hits))
	}
	hits, _ = kw.Search(ctx, Query{Text: "ticket"})
	if len(hits) != 0 {
		t.Errorf("Search(ticket) = %v, want nothing after jira was removed", ids(hits))
	}
	if n, _ := kw.Count(); n != 5 {
		t.Errorf("Count() = %d, want 5", n)
	}
	// The same catalog again is recognised by its hash alone: the
	// per-tool manifest is not even read (here it is made unreadable).
	if err := kw.idx.SetInternal([]byte(manifestKey), []byte("{damaged")); err != nil {
		t.Fatal(err)
	}
	if st, err := kw.Sync(ctx, indextest.MustCatalog(t, changed)); err != nil || st.Unchanged != 5 || st.Added+st.Changed+st.Removed != 0 {
		t.Errorf("re-sync of the same catalog = %v, %v; want 5 unchanged without reading the manifest", st, err)
	}
	// Another catalog needs the manifest: damaged, every tool is indexed
	// again, the documents no longer in the catalog are deleted, and
	// Healed says so.
	st, err = kw.Sync(ctx, indextest.MustCatalog(t, indextest.SmallCatalog))
	if err != nil || st.Changed != 5 || st.Added != 1 || st.Removed != 0 {
		t.Errorf("sync of another catalog with a damaged manifest = %v, %v; want 5 changed (indexed again), 1 added", st, err)
	}
	if h := kw.Healed(); len(h) != 1 || !strings.Contains(h[0], "manifest") {
		t.Errorf("Healed() = %q, want the damaged manifest", h)
	}
	hits, _ = kw.Search(ctx, Query{Text: "room"})
	if len(hits) != 0 {
		t.Errorf("Search(room) = %v after healing, want nothing: the changed description is gone", ids(hits))
	}
	if n, _ := kw.Count(); n != 6 {
		t.Errorf("Count() = %d after healing, want 6", n)
	}
	// A document the damaged manifest no longer lists, not in the
	// catalog, is deleted by the heal.
	if err := kw.idx.Index("ghost__tool", newKeywordDoc(indextest.MustCatalog(t, indextest.SmallCatalog).Tools()[0], "")); err != nil {
		t.Fatal(err)
	}
	if err := kw.idx.SetInternal([]byte(manifestKey), []byte("{damaged")); err != nil {
		t.Fatal(err)
	}
	if err := kw.idx.SetInternal([]byte(catalogHashKey), []byte("other")); err != nil {
		t.Fatal(err)
	}
	st, err = kw.Sync(ctx, indextest.MustCatalog(t, indextest.SmallCatalog))
	if err != nil || st.Removed != 1 || st.Changed != 6 {
		t.Errorf("heal with a stray document = %v, %v; want it removed and 6 indexed again", st, err)
	}
	if n, _ := kw.Count(); n != 6 {
		t.Errorf("Count() = %d, want 6 once the stray document is deleted", n)
	}
}

func TestBM25NotTFIDF(t *testing.T) {
	// The explanation of a BM25 score names the model's k1 and b; TF-IDF's
	// does not. In memory, bleve.NewMemOnly would silently use TF-IDF.
	for _, path := range []string{"", filepath.Join(t.TempDir(), "kw.bleve")} {
		kw, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kw.Sync(context.Background(), indextest.MustCatalog(t, indextest.SmallCatalog)); err != nil {
			t.Fatal(err)
		}
		hits, err := kw.Search(context.Background(), Query{Text: "message", Explain: true, Size: 1})
		kw.Close()
		if err != nil || len(hits) == 0 {
			t.Fatalf("Search = %v, %v", hits, err)
		}
		if !strings.Contains(hits[0].Explanation, "k1") {
			t.Errorf("index %q: explanation %s does not show BM25 (k1, b)", path, hits[0].Explanation)
		}
	}
}

// TestExplainTermScores: the explanation is each matched term's share of
// the score, with no internal document IDs, and the shares sum to it.
func TestExplainTermScores(t *testing.T) {
	kw, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer kw.Close()
	if _, err := kw.Sync(context.Background(), indextest.MustCatalog(t, indextest.SmallCatalog)); err != nil {
		t.Fatal(err)
	}
	for _, fuzzy := range []float64{0, 0.2} {
		hits, err := kw.Search(context.Background(), Query{Text: "post a mesage to the channel", Size: 3, Explain: true, Fuzzy: fuzzy})
		if err != nil || len(hits) == 0 {
			t.Fatalf("search: %v, %v", hits, err)
		}
		for _, h := range hits {
			sum := 0.0
			for _, ts := range h.Terms {
				sum += ts.Score
				if ts.Field == "" || ts.Term == "" || strings.ContainsAny(ts.Field+ts.Term, "\x00\ufffd ") {
					t.Errorf("%s: term %+v", h.ID, ts)
				}
			}
			if len(h.Terms) == 0 || math.Abs(sum-h.Score) > 1e-6 {
				t.Errorf("fuzzy %v, %s: terms %+v sum to %.9f, score %.9f", fuzzy, h.ID, h.Terms, sum, h.Score)
			}
		}
	}
}

// Which of many tools tied in score make the cut must not depend on the
// order a build happened to index them in: the same catalog, indexed
// again, gives the same hits (the lowest IDs of the tie, in ID order).
func TestKeywordTiesAreStableAcrossBuilds(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"domains":[{"name":"files","description":"Files","tools":[`)
	for i := 0; i < 60; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"name":"tool%02d","description":"Reads the contents of a file.","inputSchema":{"type":"object"}}`, i)
	}
	b.WriteString(`]}]}`)
	cat := indextest.MustCatalog(t, b.String())
	for _, size := range []int{5, 10, 25, 40} { // 40: the whole tie fits the window of 2×size
		var want []string
		for i := 0; i < size; i++ {
			want = append(want, fmt.Sprintf("files__tool%02d", i))
		}
		for build := 0; build < 4; build++ {
			kw, err := Open("")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := kw.Sync(context.Background(), cat); err != nil {
				t.Fatal(err)
			}
			hits, err := kw.Search(context.Background(), Query{Text: "reads contents", Size: size})
			kw.Close()
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(hits); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("size %d, build %d: hits %v, want %v", size, build, got, want)
			}
		}
	}
}

// TestManifestWalk: asked in any order (the manifest's own, with tools
// inserted, removed, moved or renamed), the walk answers what the
// decoded manifest says, and leaves exactly the ids never asked for.
func TestManifestWalk(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for round := 0; round < 300; round++ {
		n := r.Intn(30)
		ids := make([]string, n)
		raw := []byte(manifestHeader)
		for i := range ids {
			ids[i] = fmt.Sprintf("d__t%d", i)
			raw = fmt.Appendf(raw, "%s\th%d\n", ids[i], i%3)
		}
		want, err := decodeManifest(raw)
		if err != nil {
			t.Fatal(err)
		}
		// The catalog asks for most ids in order, some out of it, and
		// for some the manifest does not have.
		var asks []string
		for _, id := range ids {
			switch r.Intn(10) {
			case 0: // removed from the catalog
			case 1:
				asks = append(asks, "new__"+id)
				asks = append(asks, id)
			default:
				asks = append(asks, id)
			}
		}
		if len(asks) > 1 && r.Intn(3) == 0 {
			i, j := r.Intn(len(asks)), r.Intn(len(asks))
			asks[i], asks[j] = asks[j], asks[i]
		}
		w := &manifestWalk{rest: raw[len(manifestHeader):]}
		for _, id := range asks {
			hash := fmt.Sprintf("h%d", r.Intn(3))
			found, same, _ := w.take(id, hash)
			h, ok := want[id]
			if found != ok || same != (ok && h == hash) {
				t.Fatalf("round %d: take(%q, %q) = %v, %v; the manifest has %q, %v", round, id, hash, found, same, h, ok)
			}
			delete(want, id)
		}
		left := map[string]bool{}
		w.left(func(id string, _ []byte) { left[id] = true })
		if len(left) != len(want) {
			t.Fatalf("round %d: left %v, want the ids never asked %v", round, left, want)
		}
		for id := range want {
			if !left[id] {
				t.Fatalf("round %d: %q was never asked but is not left", round, id)
			}
		}
	}
}

// TestSyncBatches: documents go in batches of at most batchSize, and a
// change of up to one batch is written once, with the manifest.
func TestSyncBatches(t *testing.T) {
	kw, err := Open(filepath.Join(t.TempDir(), "kw"))
	if err != nil {
		t.Fatal(err)
	}
	defer kw.Close()
	kw.batchDocs = 10
	batches := func() uint64 {
		st, _ := kw.idx.StatsMap()["index"].(map[string]interface{})
		n, ok := st["TotBatches"].(uint64)
		if !ok {
			t.Fatalf("no batch count in %v", st)
		}
		return n
	}
	catalog := func(changed int) *index.Catalog {
		var tools []string
		for i := 0; i < 25; i++ {
			desc := fmt.Sprintf("Tool number %d.", i)
			if i < changed {
				desc += " Changed."
			}
			tools = append(tools, fmt.Sprintf(`{"name":"t%d","description":%q,"inputSchema":{"type":"object"}}`, i, desc))
		}
		return indextest.MustCatalog(t, `{"domains":[{"name":"d","tools":[`+strings.Join(tools, ",")+`]}]}`)
	}
	for _, step := range []struct {
		changed     int
		wantBatches uint64
	}{{0, 3}, {10, 1}, {0, 1}, {11, 2}, {0, 2}} {
		before := batches()
		st, err := kw.Sync(context.Background(), catalog(step.changed))
		if err != nil {
			t.Fatal(err)
		}
		if got := batches() - before; got != step.wantBatches {
			t.Errorf("%d changed (%v): %d batches, want %d", step.changed, st, got, step.wantBatches)
		}
	}
}

// TestExactFormsCountMore: two tools whose texts stem alike but are worded
// differently tie on the stemmed field alone; the unstemmed copy ranks the
// one that uses the request's own words first, and stemming still finds
// the other.
func TestExactFormsCountMore(t *testing.T) {
	const cat = `{"domains":[{"name":"ops","description":"Operations","tools":[
  {"name":"alpha","description":"Lists running processes now.","inputSchema":{"type":"object"}},
  {"name":"beta","description":"Lists run processing now.","inputSchema":{"type":"object"}}]}]}`
	kw, err := Open(filepath.Join(t.TempDir(), "kw.bleve"))
	if err != nil {
		t.Fatal(err)
	}
	defer kw.Close()
	if _, err := kw.Sync(context.Background(), indextest.MustCatalog(t, cat)); err != nil {
		t.Fatal(err)
	}
	search := func(w FieldWeights) map[string]float64 {
		hits, err := kw.Search(context.Background(), Query{Text: "running processes", Weights: w, Size: 10})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, h := range hits {
			out[h.ID] = h.Score
		}
		return out
	}
	stemmed := search(FieldWeights{FieldText: 1})
	if len(stemmed) != 2 || stemmed["ops__alpha"] != stemmed["ops__beta"] {
		t.Fatalf("stemmed text only: %v, want a tie of both tools", stemmed)
	}
	both := search(DefaultFieldWeights())
	if len(both) != 2 || both["ops__alpha"] <= both["ops__beta"] {
		t.Errorf("default fields: %v, want both tools, ops__alpha first", both)
	}
}

// TestCoverage: a hit's coverage is its score over what the query could
// score, so words of the query that no tool has dilute it, a match on
// every word of a short query is near 1, and it does not depend on the
// query running whole or in parts (split.go).
func TestCoverage(t *testing.T) {
	ctx, kw := context.Background(), smallKeyword(t)
	coverage := func(q string, divide bool) map[string]float64 {
		t.Helper()
		hits, err := kw.Search(ctx, Query{Text: q, Size: 10, Divide: divide})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, h := range hits {
			if h.Coverage <= 0 {
				t.Errorf("%q: %s has coverage %g with score %g", q, h.ID, h.Coverage, h.Score)
			}
			out[h.ID] = h.Coverage
		}
		return out
	}
	full := coverage("send message channel", false)["slack__post_message"]
	if full < 0.5 || full > 2 {
		t.Errorf("coverage of a tool matching every query word = %.3f, want about 1", full)
	}
	diluted := coverage("send message channel quarterly invoice reconciliation", false)["slack__post_message"]
	if !(diluted > 0 && diluted < full*0.6) {
		t.Errorf("coverage with three words no tool has = %.3f, want well under %.3f", diluted, full)
	}
	kw.partDocs = 2 // run in parts
	if got := coverage("send message channel", true)["slack__post_message"]; math.Abs(got-full) > 1e-9 {
		t.Errorf("coverage in parts = %.6f, whole = %.6f", got, full)
	}
}

// TestSearchIDs: a query limited to some tools scores them as the whole
// query does, coverage included, and returns no other.
func TestSearchIDs(t *testing.T) {
	ctx, kw := context.Background(), smallKeyword(t)
	all, err := kw.Search(ctx, Query{Text: "create an issue in a repository", Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 3 {
		t.Fatalf("%d hits, want at least 3", len(all))
	}
	only := []string{all[1].ID, all[2].ID, "slack__search_messages"}
	got, err := kw.Search(ctx, Query{Text: "create an issue in a repository", Size: 10, IDs: only})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !reflect.DeepEqual(got, all[1:3]) {
		t.Errorf("limited to %v: %+v, want %+v", only, got, all[1:3])
	}
}

// TestKeywordLengthsChecked: the stored field lengths weight every
// keyword score. A byte of them changed makes the index unreadable:
// rebuilt, said once, and ranking as before (it once closed the index
// twice, a panic in scorch). Lengths stored before checksums are read
// and stored again with one.
func TestKeywordLengthsChecked(t *testing.T) {
	ctx := context.Background()
	cat := indextest.MustCatalog(t, indextest.SmallCatalog)
	path := filepath.Join(t.TempDir(), "kw.bleve")
	kw, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kw.Sync(ctx, cat); err != nil {
		t.Fatal(err)
	}
	want, _ := kw.Search(ctx, Query{Text: "send a message to the channel"})
	sealed, _ := kw.idx.GetInternal([]byte(lengthsKey))
	kw.Close()
	reopen := func(value []byte) *Index {
		t.Helper()
		kw, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := kw.idx.SetInternal([]byte(lengthsKey), value); err != nil {
			t.Fatal(err)
		}
		kw.Close()
		if kw, err = Open(path); err != nil {
			t.Fatal(err)
		}
		if _, err := kw.Sync(ctx, cat); err != nil {
			t.Fatal(err)
		}
		got, _ := kw.Search(ctx, Query{Text: "send a message to the channel"})
		if len(got) != len(want) {
			t.Fatalf("Search after reopening = %v, want %v", got, want)
		}
		for i := range got {
			if got[i].ID != want[i].ID || got[i].Score != want[i].Score {
				t.Fatalf("Search after reopening = %v, want %v", got, want)
			}
		}
		return kw
	}
	// A digit of the JSON changed: valid JSON, other statistics.
	at := bytes.IndexAny(sealed[len(lengthsHeader):], "123456789") + len(lengthsHeader)
	damaged := bytes.Clone(sealed)
	damaged[at] ^= 0x01
	kw = reopen(damaged)
	if h := kw.Healed(); len(h) != 1 || !strings.Contains(h[0], "field lengths") || !strings.Contains(h[0], "checksum") {
		t.Errorf("Healed = %q, want one line about the damaged field lengths", h)
	}
	kw.Close()
	// Stored before checksums, by format "3": sealed by the migration,
	// the same bytes as a sync stores.
	legacy := sealed[len(lengthsHeader) : len(sealed)-checksum.FooterLen(sealed)]
	if kw, err = Open(path); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string][]byte{lengthsKey: legacy, formatKey: []byte(migratableFormat)} {
		if err := kw.idx.SetInternal([]byte(k), v); err != nil {
			t.Fatal(err)
		}
	}
	kw.Close()
	if _, err := Migrate(path); err != nil {
		t.Fatal(err)
	}
	if kw, err = Open(path); err != nil {
		t.Fatal(err)
	}
	if h := kw.Healed(); len(h) != 0 {
		t.Errorf("lengths stored before checksums: Healed = %q, want nothing", h)
	}
	if raw, _ := kw.idx.GetInternal([]byte(lengthsKey)); !bytes.Equal(raw, sealed) {
		t.Errorf("lengths stored before checksums are stored again as %.30q, want %.30q", raw, sealed)
	}
	kw.Close()
}

// smallKeyword returns an in-memory keyword index of indextest.SmallCatalog.
func smallKeyword(t *testing.T) *Index {
	t.Helper()
	kw, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kw.Close() })
	if _, err := kw.Sync(context.Background(), indextest.MustCatalog(t, indextest.SmallCatalog)); err != nil {
		t.Fatal(err)
	}
	return kw
}

// TestMappingIndexesOnly: the keyword index only answers term queries
// scored by BM25, so no field keeps its text, term vectors or doc values
// (doc values, for sorting and facets, were a third of the index).
func TestMappingIndexesOnly(t *testing.T) {
	im, err := NewMapping()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for name, dm := range im.DefaultMapping.Properties {
		for _, f := range dm.Fields {
			n++
			if f.Store || f.IncludeTermVectors || f.DocValues || f.IncludeInAll {
				t.Errorf("field %s: store %v, term vectors %v, doc values %v, in _all %v; want none", name, f.Store, f.IncludeTermVectors, f.DocValues, f.IncludeInAll)
			}
		}
	}
	if n == 0 {
		t.Fatal("the mapping has no fields")
	}
}

// TestWeightOfAFieldNotIndexed: a query weighting a field the index does
// not hold (the per-part fields that left it) is refused, naming the
// fields it holds, instead of failing inside Bleve or matching nothing.
func TestWeightOfAFieldNotIndexed(t *testing.T) {
	kw, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer kw.Close()
	cat, err := index.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kw.Sync(context.Background(), cat); err != nil {
		t.Fatal(err)
	}
	for _, w := range []FieldWeights{{"description": 2}, {FieldText: 1, "title": 1}} {
		_, err := kw.Search(context.Background(), Query{Text: "send an email", Weights: w})
		if err == nil || !strings.Contains(err.Error(), "the index holds qname, name, name_words, text, text_exact") {
			t.Errorf("Search weighting %v: %v, want the fields the index holds", w, err)
		}
	}
	hits, err := kw.Search(context.Background(), Query{Text: "send an email", Weights: FieldWeights{FieldTextExact: 1}})
	if err != nil || len(hits) == 0 {
		t.Errorf("Search weighting text_exact alone: %d hits, %v", len(hits), err)
	}
}
