package keyword_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/keyword"
	"github.com/toolscout/toolscout/internal/racetest"
	"github.com/toolscout/toolscout/internal/synth"
)

// splitIndex returns an in-memory keyword index of 3,000 synthetic
// tools, written in batches of 1,000 (an index on disk's), whose second
// sync changes every seventh tool and drops every eleventh: four
// segments, the first three with deleted documents. In memory scorch
// merges nothing, so they stay so (on disk the merges purged them
// within a second, and writing and merging the index was a third of the
// three tests' CPU under -race; issue 47, item 5). The index is built
// once for the package's tests, which only read it (issue 47: three
// builds were a fifth of their time); a test that changes its part size
// sets it back (Cleanup). TestMain closes it.
func splitIndex(t *testing.T) *keyword.Index {
	t.Helper()
	split.once.Do(func() { split.kw, split.err = buildSplitIndex() })
	if split.err != nil {
		t.Fatal(split.err)
	}
	return split.kw
}

// split is splitIndex's index, built once.
var split struct {
	once sync.Once
	kw   *keyword.Index
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if split.kw != nil {
		split.kw.Close()
	}
	os.Exit(code)
}

func buildSplitIndex() (*keyword.Index, error) {
	kw, err := keyword.Open("")
	if err != nil {
		return nil, err
	}
	kw.SetBatchDocs(1000)
	specs := synth.Specs(3000, 40, 1)
	cat, err := index.NewCatalog(specs)
	if err != nil {
		return kw, err
	}
	if _, err := kw.Sync(context.Background(), cat); err != nil {
		return kw, err
	}
	n := 0
	for d := range specs {
		var keep []index.ToolSpec
		for _, tool := range specs[d].Tools {
			n++
			switch {
			case n%11 == 0:
				continue
			case n%7 == 0:
				tool.Description += " Also archives the report."
			}
			keep = append(keep, tool)
		}
		specs[d].Tools = keep
	}
	if cat, err = index.NewCatalog(specs); err != nil {
		return kw, err
	}
	st, err := kw.Sync(context.Background(), cat)
	if err != nil {
		return kw, err
	}
	if st.Changed == 0 || st.Removed == 0 {
		return kw, fmt.Errorf("second sync: %+v, want changed and removed tools", st)
	}
	if segs, deleted, err := kw.Segments(); err != nil || segs < 2 || deleted == 0 {
		return kw, fmt.Errorf("%d segments, %d deleted documents (%v): want several, with deleted documents", segs, deleted, err)
	}
	return kw, nil
}

func splitQueries() []keyword.Query {
	var qs []keyword.Query
	for i, text := range synth.Queries(12, 3) {
		q := keyword.Query{Text: text, Divide: true}
		switch i % 3 {
		case 1:
			q.Fuzzy = 0.2
		case 2:
			q.Domain = fmt.Sprintf("svc%03d", i)
		}
		qs = append(qs, q)
	}
	return append(qs, keyword.Query{Text: "archives report", Divide: true}, keyword.Query{Text: "deploy pipline", Fuzzy: 0.2, Divide: true})
}

// TestQueryPartsPartitionTheIndex: the parts of a divided query match every
// document the whole query matches exactly once, with the same score.
func TestQueryPartsPartitionTheIndex(t *testing.T) {
	racetest.Plain(t)
	kw := splitIndex(t)
	ctx := context.Background()
	for _, q := range splitQueries() {
		for _, parts := range []int{2, 3, 5} {
			all, err := kw.PartHits(ctx, q, parts)
			if err != nil {
				t.Fatal(err)
			}
			whole := all[0]
			if len(whole) == 0 {
				t.Fatalf("%q matches nothing", q.Text)
			}
			seen := map[string]int{}
			nonEmpty := 0
			for p, hits := range all[1:] {
				if len(hits) > 0 {
					nonEmpty++
				}
				for id, s := range hits {
					if prev, dup := seen[id]; dup {
						t.Fatalf("%q in %d parts: %s in parts %d and %d", q.Text, parts, id, prev, p)
					}
					seen[id] = p
					// Exactly equal: with at most 16 clauses Bleve's
					// disjunctions add scores in clause order (split.go).
					if w, ok := whole[id]; !ok || w != s {
						t.Fatalf("%q in %d parts: %s scores %v in part %d, %v (present %v) undivided", q.Text, parts, id, s, p, w, ok)
					}
				}
			}
			if len(seen) != len(whole) {
				t.Fatalf("%q in %d parts: %d documents matched, %d undivided", q.Text, parts, len(seen), len(whole))
			}
			if len(whole) >= 50 && nonEmpty < 2 {
				t.Fatalf("%q in %d parts: %d matches all in one part: the query was not divided", q.Text, parts, len(whole))
			}
		}
	}
}

// TestDividedSearchRanksAsWhole: Search gives the same hits, scores and
// order whether it divides the query or not.
func TestDividedSearchRanksAsWhole(t *testing.T) {
	kw := splitIndex(t)
	per := kw.PartDocs()
	t.Cleanup(func() { kw.SetPartDocs(per) })
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	ctx := context.Background()
	for _, q := range splitQueries() {
		for _, size := range []int{1, 10, 50} {
			q.Size = size
			kw.SetPartDocs(0)
			want, err := kw.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, per := range []int{1000, 700} { // 2 and 4 parts
				kw.SetPartDocs(per)
				got, err := kw.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%q size %d, %d documents per part:\n got %v\nwant %v", q.Text, size, per, got, want)
				}
			}
		}
	}
}

// TestTermAtATimeScoresAsHeap: a query read term at a time (taat.go)
// gives the same hits, scores and order as the same query merged document
// at a time (which an explanation asks for), over segments with deleted
// documents, whole and divided.
func TestTermAtATimeScoresAsHeap(t *testing.T) {
	racetest.Plain(t)
	kw := splitIndex(t)
	ctx := context.Background()
	long := keyword.Query{Text: synth.Queries(1, 5)[0] + " and then " + synth.Queries(1, 6)[0] + ", after that " + synth.Queries(1, 7)[0]}
	for _, q := range append(splitQueries(), long) {
		for _, divide := range []bool{false, true} {
			q.Size, q.Divide = 40, divide
			fast, err := kw.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			q.Explain = true
			slow, err := kw.Search(ctx, q)
			q.Explain = false
			if err != nil {
				t.Fatal(err)
			}
			if len(fast) == 0 || len(fast) != len(slow) {
				t.Fatalf("%q (divided %v): %d hits term at a time, %d document at a time", q.Text, divide, len(fast), len(slow))
			}
			for i := range fast {
				if fast[i].ID != slow[i].ID || fast[i].Score != slow[i].Score || fast[i].Coverage != slow[i].Coverage {
					t.Fatalf("%q (divided %v) hit %d: %s %v term at a time, %s %v document at a time", q.Text, divide, i, fast[i].ID, fast[i].Score, slow[i].ID, slow[i].Score)
				}
			}
		}
	}
}
