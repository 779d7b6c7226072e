package keyword

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2/search"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/text"
)

// Bleve's BM25 takes a field's average length to be the number of
// distinct terms in its dictionary (summed over segments) over the number
// of documents, rounded up. At 4,076 tools the text field, about 30 words
// a tool, is taken to average 6, so BM25's length normalisation punishes
// every longer-than-average tool far too hard, and how hard depends on how
// many segments the index happens to have. (Counting the documents of
// each term from the dictionaries instead is no cure: zap's dictionary
// iterator reports a count of 1 for every term after the first term held
// by a single document.) Its search reads the statistics from the context
// when they are there (search.BM25StatsKey): Sync counts the fields'
// words in the catalog it indexes, stores the totals in the index beside
// the manifest, and every query passes them on.

// lengthsKey holds the index's search.BM25Stats: lengthsHeader, their
// JSON, then the checksums of both (sealLengths). A byte changed in them
// would silently change every keyword score, so a value whose checksum
// does not match makes the index unreadable (rebuilt from the catalog).
// A value written before checksums (JSON alone) is read as it is, and
// stored again with one.
const (
	lengthsKey    = "toolscout_field_lengths"
	lengthsHeader = "TSLEN01\n"
)

// sealLengths returns the value stored under lengthsKey for the JSON js.
func sealLengths(js []byte) []byte {
	return checksum.Append(append([]byte(lengthsHeader), js...))
}

// fieldLengths counts, over cat's tools, the documents and each field's
// words as the text analyzer keeps them (letters and digits, split at
// case changes, without stop words; stemming keeps the count).
//
// It runs on every change, over the whole catalog, and once cost half
// of a 1%-changed re-index at 100k tools (1 s of 2: BENCHMARKS.md). So it
// counts each part of a tool once, not the documents newKeywordDoc
// builds: the text fields (text, text_exact) are the name's words,
// title, description and parameters joined by spaces, so their count is
// the sum of those parts' counts; a domain's text is counted once for
// all its tools; the domains are counted on every core. The totals are
// those of counting newKeywordDoc's fields (TestFieldLengthsAsDocuments).
func fieldLengths(cat *index.Catalog) *search.BM25Stats {
	st := &search.BM25Stats{DocCount: float64(cat.Len())}
	completeLengths(st)
	domains := cat.Domains()
	parts := make([]map[string]int, min(runtime.GOMAXPROCS(0), max(1, len(domains))))
	var wg sync.WaitGroup
	for w := range parts {
		parts[w] = map[string]int{}
		wg.Add(1)
		go func(sum map[string]int) {
			defer wg.Done()
			for i := w; i < len(domains); i += len(parts) {
				countDomain(domains[i], sum)
			}
		}(parts[w])
	}
	wg.Wait()
	for _, sum := range parts {
		for f, n := range sum {
			st.FieldCardinality[f] += n
		}
	}
	return st
}

// countDomain adds the words of d's tools' fields to sum.
func countDomain(d *index.Domain, sum map[string]int) {
	domainText := words(index.NameWords(d.Name) + " " + d.Description)
	for _, t := range d.Tools {
		sum[FieldQualifiedName]++
		sum[FieldName]++
		sum[fieldDomain]++
		if t.Group != "" {
			sum[fieldGroup]++
		}
		name, title, desc := words(t.Name), words(t.Title), words(t.Description)
		var pn, pd int
		for _, p := range t.Params() {
			pn += words(p.Name)
			pd += words(p.Description)
		}
		sum[FieldNameWords] += name
		sum[FieldTitle] += title
		sum[FieldDescription] += desc
		sum[FieldParamNames] += pn
		sum[FieldParamDesc] += pd
		sum[FieldDomainText] += domainText
		sum[FieldGroupText] += words(t.Group)
		sum[FieldTags] += words(strings.Join(t.Tags, " "))
		sum[FieldText] += name + title + desc + pn + pd
		sum[FieldTextExact] += name + title + desc + pn + pd
	}
}

// words counts s's words as the text analyzer keeps them.
func words(s string) int {
	n := 0
	for _, w := range text.SplitIdentifier(s) {
		if !text.Stopword(w) {
			n++
		}
	}
	return n
}

// completeLengths gives st every field of the mapping, those it lacks
// with no words. Bleve fails a term query on a field the statistics lack
// ("field stat for bm25 not present"), and a catalog without tools counts
// no field at all: every keyword query of an index with no tool yet (all
// upstream servers down or connecting) failed so (issue 34). Statistics
// stored that way by an earlier toolscout are completed when read.
func completeLengths(st *search.BM25Stats) {
	if st.FieldCardinality == nil {
		st.FieldCardinality = map[string]int{}
	}
	for _, fields := range [][]string{textFields, {FieldTextExact}, exactFields} {
		for _, f := range fields {
			if _, ok := st.FieldCardinality[f]; !ok {
				st.FieldCardinality[f] = 0
			}
		}
	}
}

// loadLengths reads the statistics Sync stored; nil when there are none.
// Statistics stored before checksums are stored again with one.
func (k *Index) loadLengths() (*search.BM25Stats, error) {
	raw, err := k.idx.GetInternal([]byte(lengthsKey))
	if err != nil || len(raw) == 0 {
		return nil, err
	}
	js, sealed := raw, bytes.HasPrefix(raw, []byte(lengthsHeader))
	if sealed {
		body, err := checksum.Body(raw)
		if err != nil {
			return nil, fmt.Errorf("keyword index field lengths: %w", err)
		}
		js = body[len(lengthsHeader):]
	}
	var st search.BM25Stats
	if err := json.Unmarshal(js, &st); err != nil {
		return nil, fmt.Errorf("keyword index field lengths: %w", err)
	}
	completeLengths(&st)
	if !sealed && !k.readOnly { // read-only: Bleve persists nothing, a write would wait for good
		if err := k.idx.SetInternal([]byte(lengthsKey), sealLengths(js)); err != nil {
			return nil, fmt.Errorf("keyword index field lengths: %w", err)
		}
	}
	return &st, nil
}

// withLengths returns ctx carrying the index's field lengths, when it has
// them.
func (k *Index) withLengths(ctx context.Context) context.Context {
	if st := k.lengths.Load(); st != nil {
		return context.WithValue(ctx, search.BM25StatsKey, st)
	}
	return ctx
}
