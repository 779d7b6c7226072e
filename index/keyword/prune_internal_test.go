package keyword

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	bleveindex "github.com/blevesearch/bleve_index_api"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/racetest"
	"github.com/toolscout/toolscout/internal/synth"
)

// twinIndex returns an index on disk of a synthetic catalog of tools
// tools and, in a domain of their own, twins of the first twins of them
// (the same name, description and schema: the same scores, ties at every
// cut), and the words of its descriptions.
func twinIndex(t *testing.T, tools, twins int) (*Index, []string) {
	t.Helper()
	kw, words, _ := twinIndexAt(t, tools, twins)
	return kw, words
}

// twinIndexAt is twinIndex, and the index's folder.
func twinIndexAt(t *testing.T, tools, twins int) (*Index, []string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keyword.bleve")
	kw, words := twinIndexIn(t, path, tools, twins, 0)
	return kw, words, path
}

// twinIndexIn is twinIndex at path (empty: in memory) written in batches
// of batch documents (0: the index's own), each a segment: with batch
// set, a tenth of the tools is then changed, leaving deleted documents
// in the segments. In memory scorch merges no segment: they stay as
// written.
func twinIndexIn(t *testing.T, path string, tools, twins, batch int) (*Index, []string) {
	t.Helper()
	kw, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kw.Close() })
	kw.batchDocs = batch
	specs := synth.Specs(tools, 40, 7)
	twin := index.DomainSpec{Name: "twin", Description: "Twins"}
	var words []string
	for _, d := range specs {
		for _, tool := range d.Tools {
			if len(twin.Tools) < twins {
				twin.Tools = append(twin.Tools, tool)
			}
			words = append(words, strings.Fields(strings.Trim(tool.Description, "."))...)
		}
	}
	cat, err := index.NewCatalog(append(specs, twin))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kw.Sync(context.Background(), cat); err != nil {
		t.Fatal(err)
	}
	if batch == 0 {
		return kw, words
	}
	for d := range specs {
		for i := range specs[d].Tools {
			if (d+i)%10 == 0 {
				specs[d].Tools[i].Description += " Changed to archive the invoice."
			}
		}
	}
	if cat, err = index.NewCatalog(append(specs, twin)); err != nil {
		t.Fatal(err)
	}
	if _, err := kw.Sync(context.Background(), cat); err != nil {
		t.Fatal(err)
	}
	return kw, words
}

// TestPrunedSumIsTheFullSum: a sum pruned to the documents that can be
// among the best k (prune.go) gives Bleve's collector the same best k as
// the full sum: the same documents, scores to the last bit, in the same
// order, ties at the cut included; on random queries of random lengths
// and k, whole and divided in parts, sorted by score alone and by score
// and ID; and Search answers the same with and without pruning. On an
// index of one segment, and of several with deleted documents, where
// the sum reads a segment at a time and carries the k-th best score
// from one segment to the next (prune.go), in windows of a whole
// segment and of 97 documents (a carried score at many window edges
// inside each segment).
//
// Each configuration draws its own 24 queries (seeds 1, 2 and 3), for
// a little over a third of the 60 each the test ran before (issue 47,
// item 5: 17.9 s under -race then): each still prunes every sum and
// ties at the cut in a tenth or more (3 to 6 of the first 20 in every
// run seen; a longer draw only adds queries to it), and prunes windows
// at a carried score in both windowings.
//
// The indexes are in memory, where scorch merges no segment (issue 47,
// item 5: on disk each windowing needed an index of its own, queried as
// soon as it was built, before the background merges made its segments
// one; their writes and merges were a third of the test's CPU): both
// windowings read one index of several segments, which stay as written,
// deleted documents included. The sums read the same zap segments in
// memory as on disk.
func TestPrunedSumIsTheFullSum(t *testing.T) {
	racetest.Plain(t)
	const queries = 24
	t.Run("one segment", func(t *testing.T) {
		kw, words := twinIndexIn(t, "", 1500, 300, 0)
		prunedSumIsTheFullSum(t, kw, words, 1, queries)
	})
	several, words := severalSegments(t)
	for i, window := range []uint64{pruneWindow, 97} {
		t.Run(fmt.Sprintf("several segments, windows of %d", window), func(t *testing.T) {
			defer func(w uint64) { pruneWindow = w }(pruneWindow)
			pruneWindow = window
			carried0 := carriedWindows.Load()
			prunedSumIsTheFullSum(t, several, words, int64(2+i), queries)
			if carried := carriedWindows.Load() - carried0; carried == 0 {
				t.Fatal("no window skipped postings at the k-th best score carried from the windows before it: the carry is not tested")
			} else {
				t.Logf("%d windows pruned at a carried score", carried)
			}
		})
	}
}

// severalSegments returns an in-memory index for TestPrunedSumIsTheFullSum
// of several segments with deleted documents, closed when t ends, and
// the words of its descriptions.
func severalSegments(t *testing.T) (*Index, []string) {
	kw, words := twinIndexIn(t, "", 1500, 300, segmentDocs)
	r := indexReader(t, kw)
	segs, deleted := segmentsOf(r)
	r.Close()
	if len(segs) < 2 || deleted == 0 {
		t.Fatalf("%d segments, %d deleted documents: the test proves little", len(segs), deleted)
	}
	t.Logf("%d segments, %d deleted documents", len(segs), deleted)
	return kw, words
}

const segmentDocs = 200

// prunedSumIsTheFullSum compares pruned and full sums on kw for
// queries random queries of words drawn from seed.
func prunedSumIsTheFullSum(t *testing.T, kw *Index, words []string, seed int64, queries int) {
	defer func(n uint64) { minPrunePostings = n }(minPrunePostings)
	minPrunePostings = 1024 // the test's catalog is small
	rng := rand.New(rand.NewSource(seed))
	fields := sortedFields(DefaultFieldWeights())
	ctx := kw.withLengths(context.Background())
	pruned0 := prunedSums.Load()
	ties := 0
	for qi := range queries {
		n := 1 + rng.Intn(60)
		if qi%4 == 0 {
			n = 1 + rng.Intn(4)
		}
		q := make([]string, n)
		for i := range q {
			q[i] = words[rng.Intn(len(words))]
		}
		text := strings.Join(q, " ")
		k := []int{1, 2, 3, 5, 10, 20, 50, 100, 200}[rng.Intn(9)]
		parts := 1 + rng.Intn(3)
		fuzzy := 0.0
		if qi%3 == 0 {
			fuzzy = 0.3
		}
		for range 100 {
			r := indexReader(t, kw)
			pin := &snapshotPin{want: r}
			type result struct {
				ids    []string
				scores []float64
			}
			run := func(topK, part, parts int, byID bool) result {
				kq := &keywordQuery{text: text, fields: fields, weights: DefaultFieldWeights(), fuzzy: fuzzy, topK: topK}
				req := bleve.NewSearchRequestOptions(partQuery{q: kq, part: part, parts: parts, pin: pin}, k, 0, false)
				if byID {
					req.SortBy([]string{"-_score", "_id"})
				}
				res, err := kw.search(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				var out result
				for _, h := range res.Hits {
					out.ids = append(out.ids, h.ID)
					out.scores = append(out.scores, h.Score)
				}
				return out
			}
			type got struct {
				name       string
				full, prun result
			}
			var all []got
			for _, byID := range []bool{false, true} {
				for p := range parts {
					name := "score"
					if byID {
						name = "score, ID"
					}
					all = append(all, got{name, run(0, p, parts, byID), run(k, p, parts, byID)})
				}
			}
			r.Close()
			if pin.moved.Load() {
				continue // a merge renumbered the documents: again
			}
			for _, g := range all {
				if len(g.full.ids) != len(g.prun.ids) {
					t.Fatalf("%q k=%d (%s, %d parts): %d hits pruned, %d in full", text, k, g.name, parts, len(g.prun.ids), len(g.full.ids))
				}
				for i := range g.full.ids {
					if g.full.ids[i] != g.prun.ids[i] || g.full.scores[i] != g.prun.scores[i] {
						t.Fatalf("%q k=%d (%s, %d parts): hit %d is %s %v pruned, %s %v in full",
							text, k, g.name, parts, i, g.prun.ids[i], g.prun.scores[i], g.full.ids[i], g.full.scores[i])
					}
				}
			}
			if full := all[0].full; len(full.scores) == k && k > 1 && full.scores[k-1] == full.scores[k-2] {
				ties++
			}
			break
		}
		kw.fullSum = true
		want, err := kw.Search(context.Background(), Query{Text: text, Size: k, Fuzzy: fuzzy})
		kw.fullSum = false
		if err != nil {
			t.Fatal(err)
		}
		got, err := kw.Search(context.Background(), Query{Text: text, Size: k, Fuzzy: fuzzy})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("Search %q k=%d: %d hits pruned, %d in full", text, k, len(got), len(want))
		}
		for i := range got {
			if got[i].ID != want[i].ID || got[i].Score != want[i].Score || got[i].Coverage != want[i].Coverage {
				t.Fatalf("Search %q k=%d: hit %d is %+v pruned, %+v in full", text, k, i, got[i], want[i])
			}
		}
	}
	if pruned := prunedSums.Load() - pruned0; pruned < int64(queries) {
		t.Fatalf("%d sums pruned over %d queries: the comparison proves little", pruned, queries)
	}
	if ties < queries/10 {
		t.Fatalf("%d of %d queries tie at the cut: the ties are not tested", ties, queries)
	}
	t.Logf("%d sums pruned; %d of %d queries tie at the cut", prunedSums.Load()-pruned0, ties, queries)
}

// TestPrunedSumKeepsTiesAcrossSegments: a sum read a segment at a time
// hands out every document that ties the k-th best score carried from
// the segments before, not only those above it. Every tool here scores
// the same, and the tools with the first IDs are added last, in a
// segment of their own: the best k by score and ID are all in a segment
// read after the carried score was set.
func TestPrunedSumKeepsTiesAcrossSegments(t *testing.T) {
	defer func(n uint64) { minPrunePostings = n }(minPrunePostings)
	minPrunePostings = 64
	d := index.DomainSpec{Name: "same", Description: "Tools that all say the same"}
	for i := range 1000 {
		d.Tools = append(d.Tools, index.ToolSpec{
			Name:        fmt.Sprintf("t%04d", i),
			Description: "Archive the invoice records of an account.",
			InputSchema: json.RawMessage(`{"type":"object"}`),
		})
	}
	// build returns an index of the tools whose first 20 by ID were added
	// last, and says whether the first of them lies after the first
	// segment (scorch's merges, in the background, may have put them in
	// one).
	build := func() (*Index, bool) {
		path := filepath.Join(t.TempDir(), "keyword.bleve")
		var kw *Index
		for i, tools := range [][]index.ToolSpec{d.Tools[20:], d.Tools} {
			var err error
			if kw, err = Open(path); err != nil {
				t.Fatal(err)
			}
			kw.batchDocs = 250 // several segments, fewer than scorch merges at
			cat, err := index.NewCatalog([]index.DomainSpec{{Name: d.Name, Description: d.Description, Tools: tools}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := kw.Sync(context.Background(), cat); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				// Closed and opened again: its segments on disk, no longer
				// merged with the next sync's.
				if err := kw.Close(); err != nil {
					t.Fatal(err)
				}
			}
		}
		t.Cleanup(func() { kw.Close() })
		r := indexReader(t, kw)
		defer r.Close()
		segs := r.(interface {
			Segments() []*scorch.SegmentSnapshot
		}).Segments()
		id, err := r.InternalID("same__t0000")
		if err != nil || len(id) != 8 {
			t.Fatalf("InternalID(same__t0000) = %v, %v", id, err)
		}
		return kw, len(segs) > 1 && binary.BigEndian.Uint64(id) >= uint64(segs[0].FullSize())
	}
	var kw *Index
	for range 5 {
		var apart bool
		if kw, apart = build(); apart {
			break
		}
		kw = nil
	}
	if kw == nil {
		t.Fatal("the tools added last share the first segment in five builds: the test proves nothing")
	}
	for _, k := range []int{1, 3, 10} {
		q := Query{Text: "archive invoice records", Size: k}
		kw.fullSum = true
		want, err := kw.Search(context.Background(), q)
		kw.fullSum = false
		if err != nil {
			t.Fatal(err)
		}
		got, err := kw.Search(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != k || want[0].ID != "same__t0000" {
			t.Fatalf("Search k=%d in full = %v: not the ties the test means", k, want)
		}
		if len(got) != len(want) {
			t.Fatalf("Search k=%d: %d hits pruned, %d in full", k, len(got), len(want))
		}
		for i := range got {
			if got[i].ID != want[i].ID || got[i].Score != want[i].Score {
				t.Fatalf("Search k=%d: hit %d is %s %v pruned, %s %v in full", k, i, got[i].ID, got[i].Score, want[i].ID, want[i].Score)
			}
		}
	}
}

// segmentsOf returns r's segments and how many deleted documents they hold.
func segmentsOf(r bleveindex.IndexReader) ([]*scorch.SegmentSnapshot, int) {
	segs := r.(interface {
		Segments() []*scorch.SegmentSnapshot
	}).Segments()
	deleted := 0
	for _, s := range segs {
		if d := s.Deleted(); d != nil {
			deleted += int(d.GetCardinality())
		}
	}
	return segs, deleted
}
