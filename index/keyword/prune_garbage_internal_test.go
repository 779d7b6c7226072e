package keyword

import (
	"context"
	"math/rand"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/search"
	bleveindex "github.com/blevesearch/bleve_index_api"
)

// TestPrunedSumGarbage: a pruned sum reads its postings, candidates and
// their sums into memory its index keeps between queries (pruneArena,
// sumMemory), whichever core it runs on: once a query
// has run, the same query's drain again allocates less than a byte for
// every two postings of its clauses (Bleve's chunk readers), however many
// documents it read and kept as candidates; it made lists as long as
// those for every query (about half of a keyword-mode query's bytes at
// 100k tools).
func TestPrunedSumGarbage(t *testing.T) {
	if raceBuild {
		t.Skip("sync.Pool (the lists handed out) drops objects at random under the race detector")
	}
	built, words, path := twinIndexAt(t, 1500, 300)
	// Read-only, as serve --read-only: no merge runs beside the
	// measurement (its bytes would count).
	if err := built.Close(); err != nil {
		t.Fatal(err)
	}
	kw, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer kw.Close()
	defer func(n uint64) { minPrunePostings = n }(minPrunePostings)
	minPrunePostings = 1024 // the test's catalog is small
	// No collection while measuring, and one P: the lists a drain hands
	// out come from a sync.Pool (hitBuffers), which a collection empties
	// and which keeps a P's last list to that P.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ctx := context.WithValue(kw.withLengths(context.Background()), search.GetScoringModelCallbackKey,
		search.GetScoringModelCallbackFn(func() string { return bleveindex.BM25Scoring })) // as Bleve's search sets it
	fields := sortedFields(DefaultFieldWeights())
	r := indexReader(t, kw)
	defer r.Close()
	drain := func(t *testing.T, text string, k int) (bytes uint64, postings, kept int, pruned bool) {
		q := &keywordQuery{text: text, fields: fields, weights: DefaultFieldWeights(), topK: k, mem: &kw.sums}
		s, err := q.Searcher(ctx, r, kw.idx.Mapping(), search.SearcherOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		sum := s.(*sumSearcher)
		if !sum.taat || sum.topK != k {
			t.Fatal("the sum is not pruned term at a time: the test proves nothing")
		}
		sc := &search.SearchContext{DocumentMatchPool: search.NewDocumentMatchPool(1, 0)}
		pruned0 := prunedSums.Load()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		hits, err := sum.drain(sc)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		putHits(hits)
		return after.TotalAlloc - before.TotalAlloc, int(sum.Count()), len(hits), prunedSums.Load() > pruned0
	}
	for _, tc := range []struct {
		name  string
		words int
		k     int
	}{
		{"short", 3, 10},
		{"long", 40, 50},
		{"long, many kept", 40, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The first query of random words (seeded) that prunes.
			rng := rand.New(rand.NewSource(1))
			var text string
			for range 1000 {
				q := make([]string, tc.words)
				for i := range q {
					q[i] = words[rng.Intn(len(words))]
				}
				text = strings.Join(q, " ")
				if _, _, _, pruned := drain(t, text, tc.k); pruned {
					break // and the arena is filled
				}
				text = ""
			}
			if text == "" {
				t.Fatalf("no query of %d words prunes at k=%d: the test proves nothing", tc.words, tc.k)
			}
			bytes, postings, kept, _ := drain(t, text, tc.k)
			t.Logf("%q k=%d: %d postings, %d hits, %d bytes", text, tc.k, postings, kept, bytes)
			// What is left is Bleve's: a reader for each chunk of
			// postings decoded (zapx), well under a byte a posting.
			if bytes > uint64(postings)/2 {
				t.Errorf("drain(%d words, k=%d) allocated %d bytes over %d postings, want at most %d once its arena is there", tc.words, tc.k, bytes, postings, postings/2)
			}
		})
	}
}
