package keyword

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2/search"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/keyword/manifest"
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
// A value written before checksums (JSON alone) is sealed by Migrate.
const (
	lengthsKey    = "toolscout_field_lengths"
	lengthsHeader = "TSLEN01\n"
)

// sealLengths returns the value stored under lengthsKey for the JSON js.
func sealLengths(js []byte) []byte {
	return checksum.Append(append([]byte(lengthsHeader), js...))
}

// toolLengths are one tool's word counts in the fields whose length
// varies, in this order: group (1 when the tool has one), name words,
// title, description, parameter names, parameter descriptions, domain
// text, group text, tags. The rest follow from them: qname, name and
// domain are one word a tool, text and text_exact the sum of the name's
// words to the parameter descriptions (addTo). The title to the tags
// were fields of their own until they left the index (QueryFields); the
// manifest keeps their counts in its format, and only the text's parts
// are summed now.
//
// The manifest keeps each tool's lengths beside its hash (package manifest), so
// that a Sync counts only the tools that changed and corrects the
// previous totals by them, instead of counting the whole catalog on
// every change (0.27 s of a 1%-changed re-index at 100k tools,
// BENCHMARKS.md). The counts are integers: the totals are the same as a
// count of the whole catalog, to the bit (TestIncrementalLengthsAsCold).
// A change to how words are counted must change manifestHeader, or an
// index's totals would mix two ways of counting.
type toolLengths [manifest.NumLengths]int

// countTool returns t's lengths; domainText is its domain's text's word
// count (domainWords).
func countTool(t *index.Tool, domainText int) toolLengths {
	var l toolLengths
	if t.Group != "" {
		l[0] = 1
	}
	var pn, pd int
	for _, p := range t.Params() {
		pn += words(p.Name)
		pd += words(p.Description)
	}
	l[1], l[2], l[3], l[4], l[5] = words(t.Name), words(t.Title), words(t.Description), pn, pd
	l[6], l[7], l[8] = domainText, words(t.Group), words(strings.Join(t.Tags(), " "))
	return l
}

// domainWords counts the words of d's text, as each of its tools'
// domain_text field holds it.
func domainWords(d *index.Domain) int {
	return words(index.NameWords(d.Name) + " " + d.Description)
}

// addTo adds l's fields to sum, sign times (1 or -1).
func (l toolLengths) addTo(sum map[string]int, sign int) {
	sum[FieldQualifiedName] += sign
	sum[FieldName] += sign
	sum[fieldDomain] += sign
	sum[fieldGroup] += sign * l[0]
	sum[FieldNameWords] += sign * l[1]
	text := l[1] + l[2] + l[3] + l[4] + l[5]
	sum[FieldText] += sign * text
	sum[FieldTextExact] += sign * text
}

// appendLengths appends l as the manifest writes it
// (manifest.AppendLengths).
func appendLengths(b []byte, l toolLengths) []byte {
	return manifest.AppendLengths(b, l)
}

// parseLengths reads what appendLengths wrote; false when b is not
// that.
func parseLengths(b []byte) (toolLengths, bool) {
	l, ok := manifest.ParseLengths(b)
	return toolLengths(l), ok
}

// catalogLengths counts every tool of cat, a slice per domain in cat's
// order, the domains on every core.
func catalogLengths(cat *index.Catalog) [][]toolLengths {
	domains := cat.Domains()
	out := make([][]toolLengths, len(domains))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(domains)))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(domains); i += workers {
				d := domains[i]
				dw := domainWords(d)
				out[i] = make([]toolLengths, len(d.Tools))
				for j, t := range d.Tools {
					out[i][j] = countTool(t, dw)
				}
			}
		}()
	}
	wg.Wait()
	return out
}

// sumLengths returns the statistics of a catalog of docs tools whose
// lengths are all.
func sumLengths(docs int, all [][]toolLengths) *search.BM25Stats {
	st := &search.BM25Stats{DocCount: float64(docs)}
	completeLengths(st)
	for _, d := range all {
		for _, l := range d {
			l.addTo(st.FieldCardinality, 1)
		}
	}
	return st
}

// fieldLengths counts, over cat's tools, the documents and each field's
// words as the text analyzer keeps them (letters and digits, split at
// case changes, without stop words; stemming keeps the count).
//
// It counts each part of a tool once, not the documents newKeywordDoc
// builds: the text fields (text, text_exact) are the name's words,
// title, description and parameters joined by spaces, so their count is
// the sum of those parts' counts; a domain's text is counted once for
// all its tools; the domains are counted on every core. The totals are
// those of counting newKeywordDoc's fields (TestFieldLengthsAsDocuments).
// Sync runs it only when the manifest lacks the tools' own lengths.
func fieldLengths(cat *index.Catalog) *search.BM25Stats {
	return sumLengths(cat.Len(), catalogLengths(cat))
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
func (k *Index) loadLengths() (*search.BM25Stats, error) {
	raw, err := k.idx.GetInternal([]byte(lengthsKey))
	if err != nil || len(raw) == 0 {
		return nil, err
	}
	if !bytes.HasPrefix(raw, []byte(lengthsHeader)) {
		return nil, errors.New("keyword index field lengths: stored without a checksum (an earlier toolscout's format, which Migrate seals)")
	}
	body, err := checksum.Body(raw)
	if err != nil {
		return nil, fmt.Errorf("keyword index field lengths: %w", err)
	}
	var st search.BM25Stats
	if err := json.Unmarshal(body[len(lengthsHeader):], &st); err != nil {
		return nil, fmt.Errorf("keyword index field lengths: %w", err)
	}
	completeLengths(&st)
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
