package keyword

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	bleveindex "github.com/blevesearch/bleve_index_api"
	"github.com/toolscout/toolscout/internal/racetest"
	"github.com/toolscout/toolscout/internal/synth"
)

// directQueries are short requests, the long multi-step requests agents
// write (as BenchmarkLongQuery in search builds them), one that repeats
// its words, and words no tool has.
func directQueries() []string {
	short := synth.Queries(64, 3)
	out := append([]string{}, short[:24]...)
	for i := range 12 {
		q := func(j int) string { return short[(8*i+j)%len(short)] }
		step := fmt.Sprintf("%s and %s, then %s and %s, after that %s and %s, and then %s and %s.",
			q(0), q(1), q(2), q(3), q(4), q(5), q(6), q(7))
		out = append(out, step)
		if i%4 == 0 {
			out = append(out, step+" "+strings.ToUpper(step)+" Finally "+short[i]+"!")
		}
	}
	return append(out,
		strings.Repeat(short[0]+" ", 9),
		"zyzzyva quuxification of the frobnicator",
	)
}

type scoredHit struct {
	id    string
	score float64
}

// directHits runs kq over the documents of part of parts on pin's
// snapshot, every hit in Bleve's order (score, then document number).
func directHits(t *testing.T, kw *Index, kq *keywordQuery, part, parts int, pin *snapshotPin) []scoredHit {
	t.Helper()
	res, err := kw.search(kw.withLengths(context.Background()),
		bleve.NewSearchRequestOptions(partQuery{q: kq, part: part, parts: parts, pin: pin}, 1<<20, 0, false))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]scoredHit, len(res.Hits))
	for i, h := range res.Hits {
		out[i] = scoredHit{h.ID, h.Score}
	}
	return out
}

// TestDirectTermsScoreAsBleve: a sum read term at a time scores its term
// clauses from their postings directly (taat.go), and every hit of every
// query, whole or divided in parts, scores the same to the last bit as
// through Bleve's term searcher and ranks in the same place.
func TestDirectTermsScoreAsBleve(t *testing.T) {
	racetest.Plain(t)
	kw := readOnlySynth(t)
	allFields := FieldWeights{}
	for f := range DefaultFieldWeights() {
		allFields[f] = 1
	}
	type variant struct {
		name    string
		weights FieldWeights
		scoring Scoring
		fuzzy   float64
		parts   int
	}
	variants := []variant{
		{"default", DefaultFieldWeights(), Scoring{}, 0, 3},
		{"fuzzy", DefaultFieldWeights(), Scoring{}, 0.3, 2},
		{"all-fields", allFields, Scoring{}, 0, 1},
		{"idf-weight", DefaultFieldWeights(), Scoring{IDFWeight: true}, 0, 1},
		{"bleve-lengths", allFields, Scoring{BleveLengths: true, IDFWeight: true}, 0, 2},
	}
	queries := directQueries()
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			for qi, text := range queries {
				if v.name != "default" && qi%3 != 0 {
					continue // the long tail under -race
				}
				fields := sortedFields(v.weights)
				direct := &keywordQuery{text: text, fields: fields, weights: v.weights, fuzzy: v.fuzzy, scoring: v.scoring}
				viaBleve := *direct
				viaBleve.bleveTerms = true
				compareDirect(t, kw, text, direct, &viaBleve, v.parts)
			}
		})
	}
}

// compareDirect checks that direct and viaBleve find the same hits with
// the same scores in the same order, whole and in each of parts parts.
func compareDirect(t *testing.T, kw *Index, text string, direct, viaBleve *keywordQuery, parts int) {
	t.Helper()
	for range 100 {
		r := indexReader(t, kw)
		pin := &snapshotPin{want: r}
		type run struct{ part, parts int }
		runs := []run{{0, 1}}
		for p := range parts {
			if parts > 1 {
				runs = append(runs, run{p, parts})
			}
		}
		var got, want [][]scoredHit
		for _, ru := range runs {
			got = append(got, directHits(t, kw, direct, ru.part, ru.parts, pin))
			want = append(want, directHits(t, kw, viaBleve, ru.part, ru.parts, pin))
		}
		r.Close()
		if pin.moved.Load() {
			continue // a merge renumbered the documents: again
		}
		for i, ru := range runs {
			g, w := got[i], want[i]
			if len(g) != len(w) {
				t.Fatalf("%q part %d/%d: %d hits, through Bleve's term searcher %d", text, ru.part, ru.parts, len(g), len(w))
			}
			if ru.parts == 1 && len(w) == 0 && !strings.Contains(text, "zyzzyva") {
				t.Fatalf("%q matches nothing: the comparison proves nothing", text)
			}
			for j := range g {
				if g[j] != w[j] {
					t.Fatalf("%q part %d/%d: hit %d is %s %v (bits %x), through Bleve's term searcher %s %v",
						text, ru.part, ru.parts, j, g[j].id, g[j].score, g[j].score, w[j].id, w[j].score)
				}
			}
		}
		return
	}
	t.Fatal("the index kept changing")
}

// TestDirectTermsUsed: the sums of a plain BM25 query read their terms
// directly, and those of a query explained, or coordinated, or kept on
// Bleve's searchers, through Bleve's term searcher; so the comparison
// above compares two paths.
func TestDirectTermsUsed(t *testing.T) {
	kw := synthIndex(t, 200)
	r := indexReader(t, kw)
	defer r.Close()
	ctx := context.WithValue(kw.withLengths(context.Background()), search.GetScoringModelCallbackKey,
		search.GetScoringModelCallbackFn(func() string { return bleveindex.BM25Scoring }))
	text := synth.Queries(1, 5)[0]
	fields := sortedFields(DefaultFieldWeights())
	for _, tc := range []struct {
		name       string
		scoring    Scoring
		explain    bool
		bleveTerms bool
		direct     bool
	}{
		{"plain BM25", Scoring{}, false, false, true},
		{"query weight", Scoring{IDFWeight: true}, false, false, true},
		{"explained", Scoring{}, true, false, false},
		{"coordinated", Scoring{Coord: true}, false, false, false},
		{"Bleve's term searchers", Scoring{}, false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kq := &keywordQuery{text: text, fields: fields, weights: DefaultFieldWeights(), scoring: tc.scoring, bleveTerms: tc.bleveTerms}
			s, err := kq.Searcher(ctx, r, kw.idx.Mapping(), search.SearcherOptions{Explain: tc.explain})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var direct, viaBleve int
			var walk func(s search.Searcher)
			walk = func(s search.Searcher) {
				switch c := s.(type) {
				case *sumSearcher:
					for _, cl := range c.clauses {
						walk(cl)
					}
				case *termClause:
					direct++
				default:
					viaBleve++
				}
			}
			walk(s)
			if tc.direct && (direct == 0 || viaBleve != 0) {
				t.Errorf("%d term clauses read directly, %d through Bleve; want all directly", direct, viaBleve)
			}
			if !tc.direct && direct != 0 {
				t.Errorf("%d term clauses read directly; want none", direct)
			}
		})
	}
}

// sortedFields returns the weighted fields of w in order, as buildQuery
// does.
func sortedFields(w FieldWeights) []string {
	top, kq, err := buildQuery(Query{Text: "x", Weights: w})
	if err != nil || top == nil {
		return nil
	}
	return kq.fields
}

// synthIndex returns an in-memory index of a synthetic catalog of tools
// tools, closed when the test ends.
func synthIndex(t *testing.T, tools int) *Index {
	t.Helper()
	kw, err := buildSynth(tools)
	if kw != nil {
		t.Cleanup(func() { kw.Close() })
	}
	if err != nil {
		t.Fatal(err)
	}
	return kw
}

// buildSynth returns synthIndex's index, which the caller closes (also
// after an error, when it is not nil).
func buildSynth(tools int) (*Index, error) {
	kw, err := Open("")
	if err != nil {
		return nil, err
	}
	cat, err := synth.Catalog(tools, 1)
	if err == nil {
		_, err = kw.Sync(context.Background(), cat)
	}
	return kw, err
}

// readOnlySynth returns an in-memory index of a synthetic catalog of
// 1,500 tools (synthIndex's), built once for the package's tests that
// only read it: TestDirectTermsScoreAsBleve and TestFuzzyClauseAsBleve
// (a build and its merges are a CPU second under -race; issue 47, item
// 5). Such a test sets nothing on it. It is never closed: it is in
// memory, and goes with the test process.
func readOnlySynth(t *testing.T) *Index {
	t.Helper()
	sharedSynth.once.Do(func() { sharedSynth.kw, sharedSynth.err = buildSynth(1500) })
	if sharedSynth.err != nil {
		t.Fatal(sharedSynth.err)
	}
	return sharedSynth.kw
}

// sharedSynth is readOnlySynth's index, built once.
var sharedSynth struct {
	once sync.Once
	kw   *Index
	err  error
}

// indexReader returns a reader of kw's current snapshot; the caller
// closes it.
func indexReader(t *testing.T, kw *Index) bleveindex.IndexReader {
	t.Helper()
	adv, err := kw.idx.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	r, err := adv.Reader()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestTermAtATimePoolSize: a sum read term at a time asks Bleve for a
// pool of one match, and one more per match its fuzzy clause holds, not
// one per clause: Bleve allocates the pool for every query, and a long
// request has hundreds of clauses.
func TestTermAtATimePoolSize(t *testing.T) {
	kw, err := Open(filepath.Join(t.TempDir(), "keyword.bleve"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kw.Close() })
	cat, err := synth.Catalog(500, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kw.Sync(context.Background(), cat); err != nil {
		t.Fatal(err)
	}
	r := indexReader(t, kw)
	defer r.Close()
	long := directQueries()[24]
	for _, tc := range []struct {
		name  string
		fuzzy float64
		most  int // besides the fuzzy clause's own
	}{
		{"terms only", 0, 2}, // the exact-name fields' terms go through Bleve: one match each, one at a time
		{"with the fuzzy clause", 0.2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := &keywordQuery{text: long, fields: sortedFields(DefaultFieldWeights()), weights: DefaultFieldWeights(), fuzzy: tc.fuzzy}
			s, err := q.Searcher(kw.withLengths(context.Background()), r, kw.idx.Mapping(), search.SearcherOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			sum := s.(*sumSearcher)
			if !sum.taat {
				t.Fatal("the sum is not read term at a time: the test proves nothing")
			}
			clauses, most := 0, tc.most
			for _, c := range sum.clauses {
				if f, ok := c.(*sumSearcher); ok {
					clauses += len(f.clauses)
				} else {
					most += c.DocumentMatchPoolSize() // the fuzzy clause's own
				}
			}
			if clauses < 40 {
				t.Fatalf("%q: %d term clauses, want a long request's", long, clauses)
			}
			if got := s.DocumentMatchPoolSize(); got > most {
				t.Errorf("DocumentMatchPoolSize() = %d over %d term clauses, want at most %d", got, clauses, most)
			}
		})
	}
}
