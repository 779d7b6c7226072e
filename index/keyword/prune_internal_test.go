package keyword

import (
	"context"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/toolscout/toolscout/index"
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
	kw, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kw.Close() })
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
	return kw, words, path
}

// TestPrunedSumIsTheFullSum: a sum pruned to the documents that can be
// among the best k (prune.go) gives Bleve's collector the same best k as
// the full sum: the same documents, scores to the last bit, in the same
// order, ties at the cut included; on random queries of random lengths
// and k, whole and divided in parts, sorted by score alone and by score
// and ID; and Search answers the same with and without pruning.
func TestPrunedSumIsTheFullSum(t *testing.T) {
	kw, words := twinIndex(t, 1500, 300)
	defer func(n uint64) { minPrunePostings = n }(minPrunePostings)
	minPrunePostings = 1024 // the test's catalog is small
	rng := rand.New(rand.NewSource(1))
	fields := sortedFields(DefaultFieldWeights())
	ctx := kw.withLengths(context.Background())
	pruned0 := prunedSums.Load()
	ties, queries := 0, 60
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
