package keyword

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/racetest"
	"github.com/toolscout/toolscout/internal/synth"
)

// misspelt returns queries with a letter dropped or doubled in each
// word, for the fuzzy clause to find.
func misspelt(queries []string) []string {
	out := make([]string, 0, len(queries))
	for i, q := range queries {
		words := strings.Fields(q)
		for j, w := range words {
			if len(w) > 3 {
				if (i+j)%2 == 0 {
					words[j] = w[:2] + w[3:]
				} else {
					words[j] = w[:3] + w[2:]
				}
			}
		}
		out = append(out, strings.Join(words, " "))
	}
	return out
}

// TestFuzzyClauseAsBleve: the fuzzy clause with its automata cached
// (fuzzy.go) finds the same hits with the same scores, to the last bit
// and in the same order, as Bleve's match query, whole and in parts, on
// plain and misspelt queries; and twice in a row, the second time from
// the cache.
//
// Misspelt are the 24 short requests and the first long one and its
// longer variant (directQueries' first 26), not every long request as
// before: the long ones are made of the short ones' words, and were two
// thirds of the test's 7 s under -race (issue 47, item 5).
func TestFuzzyClauseAsBleve(t *testing.T) {
	racetest.Plain(t)
	kw := readOnlySynth(t)
	queries := directQueries()
	queries = append(queries, misspelt(queries[:26])...)
	automata, err := newFuzzyAutomata()
	if err != nil {
		t.Fatal(err)
	}
	fields := sortedFields(DefaultFieldWeights())
	for round := range 2 {
		for qi, text := range queries {
			if round == 1 && qi%3 != 0 {
				continue // the long tail under -race
			}
			cached := &keywordQuery{text: text, fields: fields, weights: DefaultFieldWeights(), fuzzy: 0.3, automata: automata}
			viaBleve := *cached
			viaBleve.automata = nil
			compareDirect(t, kw, text, cached, &viaBleve, 2)
		}
	}
	if automata.builds == 0 {
		t.Error("no automaton was built: the cached clause was not run")
	}
}

// TestFuzzyAutomataShared: a word's automaton is built once, whatever
// the searches and parts of searches that look it up, and the cache
// keeps at most fuzzyAutomataSize.
func TestFuzzyAutomataShared(t *testing.T) {
	kw := synthIndex(t, 600)
	kw.SetPartDocs(100) // divided in parts: each part looks the words up
	for range 3 {
		if _, err := kw.Search(context.Background(), Query{Text: "serch fles", Fuzzy: 0.3, Divide: true}); err != nil {
			t.Fatal(err)
		}
	}
	a := kw.fuzzyAutomata()
	if a == nil || a.builds != 2 {
		t.Fatalf("automata built for 3 searches of two words: %v, want 2", a)
	}
	for i := range fuzzyAutomataSize + 10 {
		if _, err := a.get(fmt.Sprintf("word%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := a.ll.Len(); n != fuzzyAutomataSize || len(a.items) != n {
		t.Errorf("cache holds %d automata (%d in its map), want %d", n, len(a.items), fuzzyAutomataSize)
	}
}

// TestFuzzyCandidatesKept: a word's candidate terms are looked up in the
// segments once per snapshot, whatever the searches and parts that
// search it; after the index changes, a search looks them up again and
// finds the term that came with the change.
func TestFuzzyCandidatesKept(t *testing.T) {
	kw, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kw.Close() })
	specs := synth.Specs(600, 40, 1)
	sync := func(extra ...index.DomainSpec) {
		t.Helper()
		cat, err := index.NewCatalog(append(slices.Clone(specs), extra...))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kw.Sync(context.Background(), cat); err != nil {
			t.Fatal(err)
		}
	}
	sync()
	kw.SetPartDocs(100) // divided in parts: each part looks the words up
	search := func() []Hit {
		t.Helper()
		hits, err := kw.Search(context.Background(), Query{Text: "serch zebrra", Fuzzy: 0.3, Divide: true})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	for range 3 {
		search()
	}
	a := kw.fuzzyAutomata()
	if a.lookups != 2 {
		t.Fatalf("candidates looked up %d times for 3 searches of two words, want 2", a.lookups)
	}
	for _, h := range search() {
		if strings.HasPrefix(h.ID, "zoo") {
			t.Fatalf("%s found before it was indexed", h.ID)
		}
	}
	zebra := specs[0].Tools[0]
	zebra.Name, zebra.Description = "zebra_report", "Report on the zebra."
	sync(index.DomainSpec{Name: "zoo", Description: "The zoo", Tools: []index.ToolSpec{zebra}})
	found := false
	for _, h := range search() {
		found = found || h.ID == "zoo__zebra_report"
	}
	if !found {
		t.Errorf("a search for %q after zoo__zebra_report was indexed did not find it: the candidates of the snapshot before were used", "zebrra")
	}
	if a.lookups <= 2 {
		t.Errorf("candidates looked up %d times in all, want more after the index changed", a.lookups)
	}
}
