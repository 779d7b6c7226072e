package keyword

import (
	"container/heap"
	"container/list"
	"context"
	"fmt"
	"sync"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"
	bleveindex "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
	"github.com/blevesearch/vellum"
	"github.com/blevesearch/vellum/levenshtein"
	"golang.org/x/sync/singleflight"
)

// The fuzzy clause of a keyword-mode query (Query.Fuzzy) is Bleve's
// match query with fuzziness 1 and a prefix of 2 on the name's words.
// Bleve's scorch builds a Levenshtein automaton for every word of every
// query, and again for each part of a divided one (split.go): at 100k
// tools about half of a keyword query's bytes
// (docs/benchmarks/2026-11-27-keyword-query-garbage.md). An automaton
// depends only on its word, and is read-only once built, so the clause
// here is the same query with each word's automaton kept in a small LRU
// per index (fuzzyAutomata) and shared by the queries and parts that
// search the word.
//
// Everything else is Bleve's, step by step: the words as MatchQuery
// analyzes them, a disjunction of at least one of them, the candidate
// terms as scorch's field dictionary merges the segments' automaton
// iterators (the same heap, so the same terms and the same edit
// distances: vellum's iterator reports 0 for the first term it accepts
// in a segment, and a term found in several segments takes the distance
// of the cursor on top of the heap), and the searcher NewFuzzySearcher
// makes of them. TestFuzzyClauseAsBleve checks the scores against
// Bleve's match query. One difference: scorch collects the segments'
// iterators in the order its goroutines answer, so which segment's
// distance a term found in several segments takes can change from one
// Bleve query to the next; here they are taken in segment order, one of
// the orders Bleve's can take, every time.

// fuzzyPrefix and fuzziness are the fuzzy clause's: candidates share
// the word's first two letters and are one edit from it.
const (
	fuzzyPrefix = 2
	fuzziness   = 1
)

// fuzzyAutomataSize bounds the automata kept. One holds 1 KB of
// transitions a state, and vellum sizes them for the most states a word
// of its length can need: 128 automata of 11-13-letter words hold about
// 14 MB (measured), shorter words less. Bleve allocated as much anew
// for every word of every query and part.
const fuzzyAutomataSize = 128

// fuzzyAutomata is a small LRU of Levenshtein automata by word. A dozen
// lines of container/list, as search's query vector cache.
type fuzzyAutomata struct {
	mu      sync.Mutex
	builder *levenshtein.LevenshteinAutomatonBuilder
	ll      *list.List
	items   map[string]*list.Element
	builds  int // automata built, for tests
	// building makes the parts of a divided query that miss the same
	// word at once build its automaton once (a race that built it
	// twice failed TestFuzzyAutomataShared on a CI run).
	building singleflight.Group

	// found are the candidate terms of words on snap, the snapshot
	// last searched (fuzzyFound); lookups counts those made, for tests.
	snap    *scorch.IndexSnapshot
	found   map[fuzzyKey]fuzzyTerms
	finding singleflight.Group
	lookups int
}

// A word's candidate terms depend only on the word, the field and the
// segments of the snapshot searched, which never change: each segment's
// automaton iterator, merged, read for every word of every keyword-mode
// query and again for each part of a divided one, was about 190 KB of
// each keyword-mode search at 100k tools (12 segments;
// docs/benchmarks/2026-12-06-garbage.md). So the index keeps them for
// the snapshot searched last, and forgets them all when a search comes
// on another (the index changed) or when fuzzyFoundSize words are kept.
// The snapshot is held as the key only: a snapshot replaced is kept
// from the collector until the next fuzzy search.

// fuzzyFoundSize bounds the words whose candidates are kept: a few
// terms each.
const fuzzyFoundSize = 4096

type fuzzyKey struct{ word, field string }

// fuzzyTerms are a word's candidate terms and their edit distances,
// read-only once kept.
type fuzzyTerms struct {
	terms     []string
	distances []uint8
}

type fuzzyAutomaton struct {
	word string
	dfa  *levenshtein.DFA
}

func newFuzzyAutomata() (*fuzzyAutomata, error) {
	b, err := levenshtein.NewLevenshteinAutomatonBuilder(fuzziness, true) // as scorch's
	if err != nil {
		return nil, fmt.Errorf("keyword fuzzy automata: %w", err)
	}
	return &fuzzyAutomata{builder: b, ll: list.New(), items: map[string]*list.Element{}}, nil
}

// get returns word's automaton, built on first use. Automata are only
// read once built: concurrent queries share them.
func (c *fuzzyAutomata) get(word string) (*levenshtein.DFA, error) {
	c.mu.Lock()
	if e, ok := c.items[word]; ok {
		c.ll.MoveToFront(e)
		c.mu.Unlock()
		return e.Value.(*fuzzyAutomaton).dfa, nil
	}
	c.mu.Unlock()
	v, err, _ := c.building.Do(word, func() (any, error) {
		c.mu.Lock()
		if e, ok := c.items[word]; ok { // built while this one waited
			c.mu.Unlock()
			return e.Value.(*fuzzyAutomaton).dfa, nil
		}
		c.mu.Unlock()
		dfa, err := c.builder.BuildDfa(word, fuzziness)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.builds++
		c.items[word] = c.ll.PushFront(&fuzzyAutomaton{word, dfa})
		if c.ll.Len() > fuzzyAutomataSize {
			old := c.ll.Remove(c.ll.Back()).(*fuzzyAutomaton)
			delete(c.items, old.word)
		}
		return dfa, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*levenshtein.DFA), nil
}

// fuzzyNameQuery returns the fuzzy clause of text over field with this
// boost: MatchQuery's disjunction of one fuzzy query per word, the words
// searched through automata.
func fuzzyNameQuery(m mapping.IndexMapping, automata *fuzzyAutomata, text, field string, boost float64) (query.Query, error) {
	a := m.AnalyzerNamed(m.AnalyzerNameForPath(field))
	if a == nil {
		return nil, fmt.Errorf("keyword fuzzy query: no analyzer for %s", field)
	}
	tokens := a.Analyze([]byte(text))
	if len(tokens) == 0 {
		return query.NewMatchNoneQuery(), nil
	}
	words := make([]query.Query, len(tokens))
	for i, tok := range tokens {
		words[i] = &fuzzyWordQuery{word: string(tok.Term), field: field, boost: boost, automata: automata}
	}
	q := query.NewDisjunctionQuery(words)
	q.SetMin(1)
	return q, nil
}

// fuzzyWordQuery is FuzzyQuery with fuzziness 1 and prefix 2, its
// candidates found through a cached automaton.
type fuzzyWordQuery struct {
	word, field string
	boost       float64
	automata    *fuzzyAutomata
}

// Searcher implements query.Query as searcher.NewFuzzySearcher does.
func (q *fuzzyWordQuery) Searcher(ctx context.Context, r bleveindex.IndexReader, m mapping.IndexMapping, o search.SearcherOptions) (search.Searcher, error) {
	snap, ok := r.(*scorch.IndexSnapshot)
	if _, synonyms := ctx.Value(search.FieldTermSynonymMapKey).(search.FieldTermSynonymMap); !ok || synonyms || q.automata == nil || ctx.Value(search.FuzzyMatchPhraseKey) != nil {
		return searcher.NewFuzzySearcher(ctx, r, q.word, fuzzyPrefix, fuzziness, q.field, q.boost, o)
	}
	prefix := ""
	for i, c := range q.word {
		if i >= fuzzyPrefix {
			break
		}
		prefix += string(c)
	}
	terms, distances, err := q.automata.candidates(snap, q.word, q.field, prefix)
	if err != nil {
		return nil, err
	}
	if len(terms) == 0 || len(terms) == 1 && terms[0] == q.word {
		return searcher.NewTermSearcher(ctx, r, q.word, q.field, q.boost, o)
	}
	return searcher.NewMultiTermSearcherBoosted(ctx, r, terms, q.field, q.boost, distances, o, true)
}

// candidates returns word's candidate terms in field on snap and their
// edit distances: fuzzyCandidates through word's automaton, kept for
// snap. The lists are shared: read them only.
func (c *fuzzyAutomata) candidates(snap *scorch.IndexSnapshot, word, field, prefix string) ([]string, []uint8, error) {
	key := fuzzyKey{word, field}
	c.mu.Lock()
	if c.snap == snap {
		if f, ok := c.found[key]; ok {
			c.mu.Unlock()
			return f.terms, f.distances, nil
		}
	}
	c.mu.Unlock()
	// The parts of a divided query that miss the same word at once look
	// it up once.
	v, err, _ := c.finding.Do(fmt.Sprintf("%p\x00%s\x00%s", snap, field, word), func() (any, error) {
		c.mu.Lock()
		if f, ok := c.found[key]; ok && c.snap == snap { // found while this one waited
			c.mu.Unlock()
			return f, nil
		}
		c.mu.Unlock()
		dfa, err := c.get(word)
		if err != nil {
			return nil, err
		}
		terms, distances, err := fuzzyCandidates(snap, dfa, field, prefix)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.lookups++
		if c.snap != snap || len(c.found) >= fuzzyFoundSize {
			c.snap, c.found = snap, map[fuzzyKey]fuzzyTerms{}
		}
		f := fuzzyTerms{terms, distances}
		c.found[key] = f
		return f, nil
	})
	if err != nil {
		return nil, nil, err
	}
	f := v.(fuzzyTerms)
	return f.terms, f.distances, nil
}

// fuzzyCandidates returns the terms of field that a accepts, with the
// edit distances Bleve's fuzzy searcher gives them: the segments'
// automaton iterators merged as scorch's IndexSnapshotFieldDict merges
// them.
func fuzzyCandidates(snap *scorch.IndexSnapshot, a vellum.Automaton, field, prefix string) ([]string, []uint8, error) {
	var beg, end []byte
	if prefix != "" {
		beg = []byte(prefix)
		end = calculateExclusiveEndFromPrefix(beg)
	}
	segs := snap.Segments()
	d := &dictMerge{cursors: make([]*dictCursor, 0, len(segs))}
	for _, s := range segs {
		dict, err := s.Segment().Dictionary(field)
		if err != nil {
			return nil, nil, err
		}
		itr := dict.AutomatonIterator(a, beg, end)
		next, err := itr.Next()
		if err != nil {
			return nil, nil, err
		}
		if next != nil {
			d.cursors = append(d.cursors, &dictCursor{itr: itr, curr: *next})
		}
	}
	heap.Init(d)
	var terms []string
	var distances []uint8
	for {
		e, err := d.next()
		if err != nil {
			return nil, nil, err
		}
		if e == nil {
			return terms, distances, nil
		}
		// The merge hands each term out once (Bleve's set of candidates).
		terms = append(terms, e.Term)
		distances = append(distances, e.EditDistance)
		if n := searcher.DisjunctionMaxClauseCount; n != 0 && len(terms) > n {
			return nil, nil, fmt.Errorf("TooManyClauses over field: `%s` [%d > maxClauseCount, which is set to %d]", field, len(terms), n)
		}
	}
}

// calculateExclusiveEndFromPrefix is scorch's: the first key without
// the prefix.
func calculateExclusiveEndFromPrefix(in []byte) []byte {
	rv := make([]byte, len(in))
	copy(rv, in)
	for i := len(rv) - 1; i >= 0; i-- {
		rv[i]++
		if rv[i] != 0 {
			return rv
		}
	}
	return nil
}

// dictCursor and dictMerge are scorch's segmentDictCursor and
// IndexSnapshotFieldDict (snapshot_index_dict.go), for iterating only.
type dictCursor struct {
	itr  segment.DictionaryIterator
	curr bleveindex.DictEntry
}

type dictMerge struct {
	cursors []*dictCursor
	entry   bleveindex.DictEntry
}

func (d *dictMerge) Len() int           { return len(d.cursors) }
func (d *dictMerge) Less(a, b int) bool { return d.cursors[a].curr.Term < d.cursors[b].curr.Term }
func (d *dictMerge) Swap(a, b int)      { d.cursors[a], d.cursors[b] = d.cursors[b], d.cursors[a] }
func (d *dictMerge) Push(x any)         { d.cursors = append(d.cursors, x.(*dictCursor)) }
func (d *dictMerge) Pop() any {
	n := len(d.cursors)
	x := d.cursors[n-1]
	d.cursors = d.cursors[:n-1]
	return x
}

// advance moves the top cursor on.
func (d *dictMerge) advance() error {
	next, err := d.cursors[0].itr.Next()
	if err != nil {
		return err
	}
	if next == nil {
		heap.Pop(d)
	} else {
		d.cursors[0].curr = *next
		heap.Fix(d, 0)
	}
	return nil
}

// next is IndexSnapshotFieldDict.Next: the smallest term, its entry
// the top cursor's.
func (d *dictMerge) next() (*bleveindex.DictEntry, error) {
	if len(d.cursors) == 0 {
		return nil, nil
	}
	d.entry = d.cursors[0].curr
	if err := d.advance(); err != nil {
		return nil, err
	}
	for len(d.cursors) > 0 && d.cursors[0].curr.Term == d.entry.Term {
		d.entry.Count += d.cursors[0].curr.Count
		if err := d.advance(); err != nil {
			return nil, err
		}
	}
	return &d.entry, nil
}
