package keyword

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	bleveindex "github.com/blevesearch/bleve_index_api"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/keyword/manifest"
	"github.com/toolscout/toolscout/internal/fault"
	bbolt "go.etcd.io/bbolt"
	"golang.org/x/sync/semaphore"
)

// Keyword index field names.
const (
	FieldQualifiedName = "qname"
	FieldName          = "name"
	FieldNameWords     = "name_words"
	// FieldText holds the tool's whole text in one field: name words,
	// title, description, parameter names and descriptions.
	FieldText = "text"
	// FieldTextExact holds the same text unstemmed.
	FieldTextExact = "text_exact"
	fieldDomain    = "domain"
	fieldGroup     = "group"
)

// TextAnalyzer is the analyzer of the keyword index's text fields: words of
// letters and digits, split at camelCase, lower-cased, English stop words
// removed, Porter-stemmed.
const TextAnalyzer = "toolscout_text"

// TextExactAnalyzer is TextAnalyzer without the stemmer.
const TextExactAnalyzer = "toolscout_text_exact"

// FieldWeights are the query-time boosts of the keyword index's fields
// (QueryFields). A zero weight leaves the field out of the query.
type FieldWeights map[string]float64

// QueryFields are the fields a query can weight. A tool's title,
// description, parameters, domain text, group and tags were also indexed
// as fields of their own until this version, for measurement; no default
// weight read them (they are all in text and text_exact, but the domain
// text, group and tags), and at 100k tools they cost a fifth of a cold
// index's CPU and a fifth of the index (BENCHMARKS.md).
var QueryFields = []string{FieldQualifiedName, FieldName, FieldNameWords, FieldText, FieldTextExact}

// Check returns an error naming a weight that is not a number ≥ 0 or is
// of a field the index does not hold.
func (w FieldWeights) Check() error {
	for f, v := range w {
		if !slices.Contains(QueryFields, f) {
			return fmt.Errorf("keyword field %q: the index holds %s", f, strings.Join(QueryFields, ", "))
		}
		if !(v >= 0) {
			return fmt.Errorf("keyword field %s weight %g: use a value ≥ 0 (0 leaves the field out)", f, v)
		}
	}
	return nil
}

// DefaultFieldWeights returns the field boosts toolscout ships with: the
// whole text as one BM25 field, half stemmed and half as written (a
// stemmed match counts half, an exact one whole), the name's words a
// little more, and a query that is a tool's exact name (chosen on
// sealtools-dev and metatool-dev; the per-field weights of earlier
// versions lost 0.07 nDCG@10 to plain BM25 on long requests,
// BENCHMARKS.md).
func DefaultFieldWeights() FieldWeights {
	return FieldWeights{
		FieldQualifiedName: 6,
		FieldName:          6,
		FieldNameWords:     0.25,
		FieldText:          0.5,
		FieldTextExact:     0.5,
	}
}

const manifestKey = "toolscout_manifest"

// formatKey holds the keyword index's format, keywordFormat. An index of
// an earlier format is brought to it by Migrate (migrate.go), which
// index/store's migration step runs before Open; Open rebuilds one it is
// still handed from the catalog, and OpenReadOnly refuses it.
const (
	formatKey     = "toolscout_format"
	keywordFormat = "4"
)

// catalogHashKey holds the Hash of the catalog the index was last synced
// to, written in the same batch as the manifest.
const catalogHashKey = "toolscout_catalog_hash"

// ErrLocked means another process has the on-disk keyword index open.
var ErrLocked = errors.New("keyword index in use")

// Index is the Bleve BM25 index of a catalog's tools.
type Index struct {
	idx      bleve.Index
	inMemory bool
	// readOnly: opened with OpenReadOnly; Sync only checks.
	readOnly bool
	// partDocs is the number of documents per part of a divided query
	// (split.go); zero or less: never divided.
	partDocs int
	// batchDocs, when set (tests), replaces the documents per batch.
	batchDocs int

	healMu sync.Mutex
	// healed says what Open rebuilt and Sync re-indexed, when
	// they did.
	healed []string

	closeOnce sync.Once
	closeErr  error

	// lengths are the fields' lengths for BM25 (bm25stats.go).
	lengths atomic.Pointer[search.BM25Stats]

	// automata are the fuzzy clause's (fuzzy.go), made on first use;
	// nil when they could not be (Bleve's match query then).
	automataOnce sync.Once
	automata     *fuzzyAutomata

	// cores are the cores the searches run on, made on first use
	// (cores.go); divided counts the queries run in parts, for tests.
	coresOnce sync.Once
	cores     *semaphore.Weighted
	divided   atomic.Int64

	// fullSum reads every posting of every clause, never pruning to the
	// best documents (prune.go): the reference of tests.
	fullSum bool

	// sums is the memory the keyword sums of its searches work in
	// (memory.go).
	sums sumMemory
}

// fuzzyAutomata returns the index's cache of the fuzzy clause's
// automata, nil when the automaton builder fails (it does not for
// fuzziness 1: Bleve's own query path then serves).
func (k *Index) fuzzyAutomata() *fuzzyAutomata {
	k.automataOnce.Do(func() { k.automata, _ = newFuzzyAutomata() })
	return k.automata
}

// The fields of the mapping: textFields analyzed by TextAnalyzer,
// FieldTextExact by TextExactAnalyzer, exactFields kept whole.
var (
	textFields  = []string{FieldNameWords, FieldText}
	exactFields = []string{FieldQualifiedName, FieldName, fieldDomain, fieldGroup}
)

// NewMapping returns the Bleve index mapping: BM25 scoring, the
// identifier-aware text analyzer for text fields, exact keyword fields for
// names, domain and group.
func NewMapping() (*mapping.IndexMappingImpl, error) {
	im := bleve.NewIndexMapping()
	im.ScoringModel = bleveindex.BM25Scoring
	if err := im.AddCustomTokenizer("toolscout_words", map[string]any{
		"type": wordsTokenizerName,
	}); err != nil {
		return nil, err
	}
	if err := im.AddCustomAnalyzer(TextAnalyzer, map[string]any{
		"type":          custom.Name,
		"tokenizer":     "toolscout_words",
		"token_filters": []any{camelFilterName, lowercase.Name, en.StopName, porter.Name},
	}); err != nil {
		return nil, err
	}
	if err := im.AddCustomAnalyzer(TextExactAnalyzer, map[string]any{
		"type":          custom.Name,
		"tokenizer":     "toolscout_words",
		"token_filters": []any{camelFilterName, lowercase.Name, en.StopName},
	}); err != nil {
		return nil, err
	}
	doc := bleve.NewDocumentStaticMapping()
	text := func() *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer = TextAnalyzer
		f.Store = false
		f.IncludeInAll = false
		f.IncludeTermVectors = false
		f.DocValues = false // nothing sorts or facets by a field: a third of the index
		return f
	}
	exact := func() *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer = keyword.Name
		f.Store = false
		f.IncludeInAll = false
		f.IncludeTermVectors = false
		f.DocValues = false // nothing sorts or facets by a field: a third of the index
		return f
	}
	for _, name := range textFields {
		doc.AddFieldMappingsAt(name, text())
	}
	exactText := text()
	exactText.Analyzer = TextExactAnalyzer
	doc.AddFieldMappingsAt(FieldTextExact, exactText)
	for _, name := range exactFields {
		doc.AddFieldMappingsAt(name, exact())
	}
	im.DefaultMapping = doc
	im.DefaultAnalyzer = TextAnalyzer
	return im, nil
}

// Open opens the keyword index stored at path, creating it when
// missing. An empty path keeps the index in memory (scorch, BM25).
func Open(path string) (*Index, error) {
	im, err := NewMapping()
	if err != nil {
		return nil, fmt.Errorf("keyword mapping: %w", err)
	}
	if path == "" {
		// bleve.NewMemOnly would silently score with TF-IDF: use scorch.
		idx, err := bleve.NewUsing("", im, scorch.Name, scorch.Name, nil)
		if err != nil {
			return nil, fmt.Errorf("create in-memory keyword index: %w", err)
		}
		return &Index{idx: idx, inMemory: true, partDocs: splitDocs}, nil
	}
	var healed []string
	if _, err := os.Stat(path); err == nil {
		idx, err := openBleve(path, keywordOpenTimeout, false)
		if err == nil {
			format, ferr := idx.GetInternal([]byte(formatKey))
			if ferr == nil && string(format) == keywordFormat {
				k := &Index{idx: idx, partDocs: splitDocs}
				st, err := k.loadLengths()
				if err == nil {
					// Missing (a kill before the first Sync finished):
					// that Sync is done again and stores them.
					k.lengths.Store(st)
					return k, nil
				}
				ferr = err // idx is closed below (scorch panics on a second Close)
			}
			// Of an earlier format that no migration brought along:
			// rebuilt, as a damaged index is.
			idx.Close()
			err = fmt.Errorf("its format is %q, this toolscout writes %q", format, keywordFormat)
			if ferr != nil {
				err = fmt.Errorf("its format cannot be read: %w", ferr)
			}
		}
		if errors.Is(err, bbolt.ErrTimeout) {
			// Bleve's scorch holds its root.bolt with an exclusive lock.
			return nil, fmt.Errorf("open keyword index %s: %w (another toolscout process holds it)", path, ErrLocked)
		}
		// Damaged (a kill mid-write, a corrupt segment): the keyword index
		// is rebuilt from the catalog in well under a second, so start over.
		if rerr := os.RemoveAll(path); rerr != nil {
			return nil, fmt.Errorf("open keyword index %s: %w; removing it to rebuild failed: %v", path, err, rerr)
		}
		healed = []string{fmt.Sprintf("keyword index %s could not be read (%v); rebuilt from the catalog", path, err)}
	}
	idx, err := bleve.New(path, im)
	if err != nil {
		return nil, fmt.Errorf("create keyword index %s: %w", path, err)
	}
	if err := idx.SetInternal([]byte(formatKey), []byte(keywordFormat)); err != nil {
		idx.Close()
		return nil, fmt.Errorf("create keyword index %s: %w", path, err)
	}
	return &Index{idx: idx, healed: healed, partDocs: splitDocs}, nil
}

// OpenReadOnly opens the keyword index at path without writing
// to it: Bleve reads it with no merger or persister running, and its
// root.bolt is locked shared, so that any number of processes read it at
// once (a process writing it holds the lock exclusively: the open waits
// a second, then answers ErrLocked). Nothing is created or healed: a
// missing index is ErrNoIndex, a damaged one an error. Sync then fails
// with ErrReadOnly unless the index already holds the catalog.
func OpenReadOnly(path string) (*Index, error) {
	if _, err := os.Stat(filepath.Join(path, "store", "root.bolt")); err != nil {
		return nil, fmt.Errorf("keyword index %s: %w", path, index.ErrNoIndex)
	}
	idx, err := openBleve(path, keywordOpenTimeout, true)
	if err != nil {
		if errors.Is(err, bbolt.ErrTimeout) {
			return nil, fmt.Errorf("open keyword index %s: %w (a toolscout process writing it holds it: toolscout index, or serve without --read-only)", path, ErrLocked)
		}
		return nil, fmt.Errorf("open keyword index %s: %w", path, err)
	}
	k := &Index{idx: idx, readOnly: true, partDocs: splitDocs}
	format, err := idx.GetInternal([]byte(formatKey))
	if err == nil && string(format) != keywordFormat {
		err = fmt.Errorf("its format is %q, this toolscout reads %q: run toolscout index on this data dir once (it migrates the data dir), then open it read-only again", format, keywordFormat)
	}
	if err == nil {
		var st *search.BM25Stats
		if st, err = k.loadLengths(); err == nil {
			k.lengths.Store(st)
			return k, nil
		}
	}
	idx.Close()
	return nil, fmt.Errorf("open keyword index %s: %w", path, err)
}

func (k *Index) batchSize() int {
	if k.batchDocs > 0 {
		return k.batchDocs
	}
	if k.inMemory {
		return memBatchSize
	}
	return keywordBatchSize
}

// Close closes the index. Closing twice is harmless (Bleve's own Close
// panics the second time).
func (k *Index) Close() error {
	k.closeOnce.Do(func() { k.closeErr = k.idx.Close() })
	return k.closeErr
}

// Count returns the number of indexed tools.
func (k *Index) Count() (uint64, error) { return k.idx.DocCount() }

type keywordDoc struct {
	QName     string `json:"qname"`
	Name      string `json:"name"`
	NameWords string `json:"name_words"`
	Text      string `json:"text"`
	TextExact string `json:"text_exact"`
	Domain    string `json:"domain"`
	Group     string `json:"group"`
}

func newKeywordDoc(t *index.Tool, domainDesc string) keywordDoc {
	var pn, pd []string
	for _, p := range t.Params() {
		pn = append(pn, index.NameWords(p.Name))
		if p.Description != "" {
			pd = append(pd, p.Description)
		}
	}
	d := keywordDoc{
		QName:     strings.ToLower(t.QualifiedName),
		Name:      strings.ToLower(t.Name),
		NameWords: index.NameWords(t.Name),
		Text:      strings.Join([]string{index.NameWords(t.Name), t.Title, t.Description, strings.Join(pn, " "), strings.Join(pd, " ")}, " "),
		Domain:    t.Domain,
		Group:     t.Group,
	}
	d.TextExact = d.Text
	return d
}

// manifestHeader starts the manifest; its format is package manifest's.
const manifestHeader = manifest.Header

func (k *Index) manifest() (map[string]string, error) {
	raw, err := k.idx.GetInternal([]byte(manifestKey))
	if err != nil {
		return nil, err
	}
	m, err := manifest.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("keyword index manifest: %w", err)
	}
	return m, nil
}

// walkManifest returns the walk of the index's manifest.
func (k *Index) walkManifest() (*manifest.Walk, error) {
	raw, err := k.idx.GetInternal([]byte(manifestKey))
	if err != nil {
		return nil, err
	}
	w, err := manifest.NewWalk(raw)
	if err != nil {
		return nil, fmt.Errorf("keyword index manifest: %w", err)
	}
	return w, nil
}

// documentIDs lists the index's documents as a manifest in which every
// document is out of date, after the manifest could not be read (why),
// and says so in Healed.
func (k *Index) documentIDs(ctx context.Context, why error) (map[string]string, error) {
	n, err := k.idx.DocCount()
	if err != nil {
		return nil, fmt.Errorf("%w; listing the documents to re-index them failed: %v", why, err)
	}
	req := bleve.NewSearchRequestOptions(bleve.NewMatchAllQuery(), int(n), 0, false)
	res, err := k.search(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("%w; listing the documents to re-index them failed: %v", why, err)
	}
	m := make(map[string]string, len(res.Hits))
	for _, h := range res.Hits {
		m[h.ID] = ""
	}
	k.healMu.Lock()
	k.healed = append(k.healed, fmt.Sprintf("%v; every tool is indexed again", why))
	k.healMu.Unlock()
	return m, nil
}

// Healed says what Open rebuilt and Sync re-indexed, when they
// did, one line each.
func (k *Index) Healed() []string {
	k.healMu.Lock()
	defer k.healMu.Unlock()
	return slices.Clone(k.healed)
}

// keywordBatchSize is the number of documents indexed per Bleve batch on
// disk, memBatchSize in memory. Each batch becomes a segment, and a query
// looks every term up in every segment; on disk scorch merges segments in
// the background, in memory it never does. So in-memory indexes take
// bigger batches: at 10k tools one segment instead of ten answers a
// keyword search in 1.47 ms instead of 2.0 (p50, BenchmarkQuery), for a
// transient 0.3 GB while the batch is built.
const (
	keywordBatchSize = 1000
	memBatchSize     = 10000
)

// Sync makes the index hold exactly cat's tools: new and changed tools are
// (re)indexed, removed ones deleted, unchanged ones left alone. Documents
// go in batches of keywordBatchSize; the deletions and the new manifest go
// in the last one, so an interrupted Sync is finished by the next.
func (k *Index) Sync(ctx context.Context, cat *index.Catalog) (index.SyncStats, error) {
	var st index.SyncStats
	// The catalog's hash covers every tool's content hash: when the index
	// was last synced to the same hash, there is nothing to compare.
	if h, err := k.idx.GetInternal([]byte(catalogHashKey)); err == nil && string(h) == cat.Hash() {
		st.Unchanged = cat.Len()
		return st, nil
	}
	if k.readOnly {
		return st, fmt.Errorf("keyword index: %w, and it holds another catalog than the one to serve: build it with toolscout index", index.ErrReadOnly)
	}
	old, err := k.walkManifest()
	if err != nil {
		// Which documents are up to date is unknown: all of them are
		// indexed again, and those cat does not have deleted.
		ids, err := k.documentIDs(ctx, err)
		if err != nil {
			return st, err
		}
		old = manifest.HashWalk(ids)
	}
	// The field lengths: the previous totals corrected by the tools
	// that changed, when the manifest has every tool's own lengths and
	// the index its totals; else every tool counted (bm25stats.go).
	prev := k.lengths.Load()
	incremental := old.AllLengths() && prev != nil
	var all [][]toolLengths
	totals := make(map[string]int, len(textFields)+len(exactFields)+1)
	if incremental {
		maps.Copy(totals, prev.FieldCardinality)
	} else {
		all = catalogLengths(cat)
	}
	size := len(manifestHeader)
	for _, t := range cat.Tools() {
		size += len(t.QualifiedName) + len(t.Hash) + 2 + 30
	}
	man := append(make([]byte, 0, size), manifestHeader...)
	b := k.idx.NewBatch()
	for di, d := range cat.Domains() {
		domainText := -1 // counted when a tool of d is
		for ti, t := range d.Tools {
			man = append(append(append(append(man, t.QualifiedName...), '\t'), t.Hash...), '\t')
			found, same, was := old.Take(t.QualifiedName, t.Hash)
			if !incremental {
				man = append(appendLengths(man, all[di][ti]), '\n')
			} else if same {
				man = append(append(man, was...), '\n')
			} else {
				if found {
					l, _ := parseLengths(was) // checked by walkManifest
					l.addTo(totals, -1)
				}
				if domainText < 0 {
					domainText = domainWords(d)
				}
				l := countTool(t, domainText)
				l.addTo(totals, 1)
				man = append(appendLengths(man, l), '\n')
			}
			switch {
			case !found:
				st.Added++
			case !same:
				st.Changed++
			default:
				st.Unchanged++
				continue
			}
			if b.Size() >= k.batchSize() {
				// Bounded memory: one batch of 100k documents peaks at
				// 3.1 GB, batches of 1,000 at 0.55 GB (BENCHMARKS.md).
				// Until the last batch writes the manifest, the next Sync
				// sees these documents as new and indexes them again.
				// A full batch is written only once another document
				// comes: the last one goes with the manifest, so a
				// change of up to a batch is one write, not two.
				if err := ctx.Err(); err != nil {
					return st, err
				}
				if err := k.idx.Batch(b); err != nil {
					return st, fmt.Errorf("write keyword index: %w", err)
				}
				b.Reset()
			}
			if err := b.Index(t.QualifiedName, newKeywordDoc(t, d.Description)); err != nil {
				return st, fmt.Errorf("index %s: %w", t.QualifiedName, err)
			}
		}
	}
	old.Left(func(id string, was []byte) {
		b.Delete(id)
		st.Removed++
		if incremental {
			l, _ := parseLengths(was) // checked by walkManifest
			l.addTo(totals, -1)
		}
	})
	if err := ctx.Err(); err != nil {
		return st, err
	}
	var lengths *search.BM25Stats
	if incremental {
		lengths = &search.BM25Stats{DocCount: float64(cat.Len()), FieldCardinality: totals}
		completeLengths(lengths)
		for _, n := range totals {
			if n < 0 {
				// Totals that do not belong to the manifest (only a
				// damaged index has such): count every tool.
				lengths = fieldLengths(cat)
				break
			}
		}
	} else {
		lengths = sumLengths(cat.Len(), all)
	}
	rawLengths, err := json.Marshal(lengths)
	if err != nil {
		return st, fmt.Errorf("keyword index field lengths: %w", err)
	}
	b.SetInternal([]byte(lengthsKey), sealLengths(rawLengths))
	if st.Added+st.Changed+st.Removed != 0 || !old.AllLengths() {
		b.SetInternal([]byte(manifestKey), man)
	}
	// (With no document changed, this is equal content under another
	// hash, an index written before the hash was kept: the hash is
	// recorded for the next start.)
	b.SetInternal([]byte(catalogHashKey), []byte(cat.Hash()))
	if err := k.idx.Batch(b); err != nil {
		return st, fmt.Errorf("write keyword index: %w", err)
	}
	k.lengths.Store(lengths)
	return st, nil
}

// roundScore drops the last bits of a Bleve score: it sums the terms of
// a fuzzy expansion in map order, so equal scores can differ there from
// run to run.
func roundScore(x float64) float64 { return math.Round(x*1e9) / 1e9 }

func (k *Index) search(ctx context.Context, req *bleve.SearchRequest) (*bleve.SearchResult, error) {
	var res *bleve.SearchResult
	err := fault.Guard("keyword search", func() error {
		var err error
		res, err = k.idx.SearchInContext(ctx, req)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	return res, nil
}

// Query is a BM25 query over the keyword index.
type Query struct {
	Text    string
	Domain  string // optional filter
	Group   string // optional filter, with Domain
	Size    int    // number of hits; 10 when zero
	Weights FieldWeights
	// Fuzzy, when > 0, adds edit-distance-1 matches on the tool name's
	// words with this boost, for misspelt queries.
	Fuzzy float64
	// Scoring adds Bleve's coordination factor or query weight to BM25;
	// the zero value scores plain BM25 (sumquery.go).
	Scoring Scoring
	Explain bool
	// IDs, when set, limits the hits to these tools (qualified names).
	IDs []string
	// Divide lets a query over a large index run as several searches at
	// once, one per core (split.go). Leave it off when other work runs
	// beside the query: dividing costs some CPU of its own.
	Divide bool
	// DividePart, when above 0, is the fewest documents per part of a
	// divided query in place of the index's (splitDocs): a query with
	// other work beside it divides only a larger index.
	DividePart int
}

// Hit is one keyword match.
type Hit struct {
	ID    string // qualified name
	Score float64
	// Coverage is Score over the query's attainable score: the sum, over
	// its terms and fields, of what a term found once in a field of
	// average length scores. About 1 when the tool matches every word of
	// the query; a weak match on one common word of a long query is near 0.
	Coverage float64
	// Terms are the matched terms' shares of Score, when explanation was
	// requested.
	Terms []TermScore
	// Explanation is Bleve's own explanation tree as text (its document
	// IDs are internal bytes), for diagnostics.
	Explanation string
}

// ErrEmptyQuery is returned for a query with no searchable words.
var ErrEmptyQuery = errors.New("empty query")

// Search runs q and returns hits by descending BM25 score.
func (k *Index) Search(ctx context.Context, q Query) ([]Hit, error) {
	ctx = k.withLengths(ctx)
	top, kq, err := buildQuery(q)
	if err != nil {
		return nil, err
	}
	slots, err := k.takeCore(ctx)
	if err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	defer slots.release()
	ceiling := &atomicFloat{}
	kq.ceiling = ceiling
	kq.mem = &k.sums
	if q.Fuzzy > 0 {
		kq.automata = k.fuzzyAutomata()
	}
	size := q.Size
	if size <= 0 {
		size = 10
	}
	// Bleve breaks ties in score by its internal document numbers, which
	// depend on the order a batch happened to index in: which of several
	// tied tools made the cut changed from one index build to the next
	// (metatool-dev hybrid nDCG@10 moved between 0.6380 and 0.6385 over
	// identical eval runs). So the query asks for twice the hits: when the
	// tie at the cut ends inside that window, every tied tool is there and
	// sorting by ID below picks the same ones each time. Only a tie that
	// fills the whole window asks Bleve to sort by "_id" itself, which
	// loads every matching document's ID (2× the keyword query time at
	// 10k synthetic tools if done for every query).
	window := 2 * size
	// A query without filters prunes its sum to the documents that can
	// be among the best it keeps (prune.go); a filter would drop some of
	// them after the sum.
	prune := top == query.Query(kq) && !k.fullSum
	if prune {
		kq.topK = window
	}
	found, err := k.topHits(ctx, top, window, q, false, slots)
	if err != nil {
		return nil, err
	}
	if len(found) == window && roundScore(found[size-1].Score) == roundScore(found[window-1].Score) {
		if prune {
			kq.topK = size
		}
		if found, err = k.topHits(ctx, top, size, q, true, slots); err != nil {
			return nil, err
		}
	}
	hits := keywordHits(found, size, q.Explain)
	if c := ceiling.load(); c > 0 {
		for i := range hits {
			hits[i].Coverage = hits[i].Score / c
		}
	}
	return hits, nil
}

// buildQuery returns the Bleve query of q: a disjunction of one match
// query per weighted field, plus the fuzzy clause, within the scope.
func buildQuery(q Query) (query.Query, *keywordQuery, error) {
	text := strings.TrimSpace(q.Text)
	if text == "" {
		return nil, nil, ErrEmptyQuery
	}
	weights := q.Weights
	if weights == nil {
		weights = DefaultFieldWeights()
	}
	if err := weights.Check(); err != nil {
		return nil, nil, err
	}
	fields := make([]string, 0, len(weights))
	for f := range weights {
		fields = append(fields, f)
	}
	sort.Strings(fields) // deterministic query structure
	kept := fields[:0]
	for _, f := range fields {
		if weights[f] > 0 {
			kept = append(kept, f)
		}
	}
	if len(kept) == 0 {
		return nil, nil, errors.New("keyword query: every field weight is zero")
	}
	kq := &keywordQuery{text: text, fields: kept, weights: weights, fuzzy: q.Fuzzy, scoring: q.Scoring}
	var top query.Query = kq
	if q.IDs != nil {
		// A conjunction, not a filter: it advances the sum to each listed
		// tool instead of scoring every match and dropping the rest. The
		// ID clause scores 0.
		kq.sparse = true
		only := bleve.NewDocIDQuery(q.IDs)
		only.SetBoost(0)
		top = bleve.NewConjunctionQuery(top, only)
	}
	if q.Domain != "" || q.Group != "" {
		bq := bleve.NewBooleanQuery()
		bq.AddMust(top)
		if q.Domain != "" {
			tq := bleve.NewTermQuery(q.Domain)
			tq.SetField(fieldDomain)
			bq.AddFilter(tq)
		}
		if q.Group != "" {
			tq := bleve.NewTermQuery(q.Group)
			tq.SetField(fieldGroup)
			bq.AddFilter(tq)
		}
		top = bq
	}
	return top, kq, nil
}

// keywordHits turns Bleve's matches into hits: scores rounded, ties in
// score by ID, the best size kept.
func keywordHits(found []*search.DocumentMatch, size int, explain bool) []Hit {
	hits := make([]Hit, 0, len(found))
	for _, h := range found {
		// Bleve sums the terms of a fuzzy expansion in map order, so equal
		// scores can differ in their last bits from run to run: rounding
		// lets the ID break those ties, and keyword rankings repeat exactly.
		kh := Hit{ID: h.ID, Score: roundScore(h.Score)}
		if explain && h.Expl != nil {
			kh.Terms = termScores(h.Expl)
			kh.Explanation = h.Expl.String()
		}
		hits = append(hits, kh)
	}
	// Ties in score go by ID, so that rankings do not depend on the order
	// in which a batch happened to index documents.
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].ID < hits[j].ID
	})
	if len(hits) > size {
		hits = hits[:size]
	}
	return hits
}

// topHits returns the best n matches of top: in Bleve's order when the
// query runs whole, by descending score and then ID when it runs in parts
// (split.go). byID asks Bleve to break ties in score by ID itself, for a
// tie wider than the window. The query runs in as many parts as slots
// can hold cores for.
func (k *Index) topHits(ctx context.Context, top query.Query, n int, kq Query, byID bool, slots *coreSlots) ([]*search.DocumentMatch, error) {
	request := func(q query.Query) *bleve.SearchRequest {
		req := bleve.NewSearchRequestOptions(q, n, 0, kq.Explain)
		if byID {
			req.SortBy([]string{"-_score", "_id"})
		}
		return req
	}
	if adv, err := k.idx.Advanced(); err == nil && kq.Divide {
		if r, err := adv.Reader(); err == nil {
			defer r.Close()
			if docs, err := r.DocCount(); err == nil {
				per := k.partDocs
				if kq.DividePart > 0 && per > 0 {
					per = max(per, kq.DividePart)
				}
				if parts := slots.parts(splitParts(docs, per)); parts > 1 {
					k.divided.Add(1)
					hits, err := k.dividedHits(ctx, top, n, request, &snapshotPin{want: r}, parts)
					if err != nil || hits != nil {
						return hits, err
					}
				}
			}
		}
	}
	res, err := k.search(ctx, request(top))
	if err != nil {
		return nil, err
	}
	return res.Hits, nil
}

// dividedHits runs the query of request in parts at once, all on the
// snapshot pin holds, and merges their hits by descending score and ID.
// It returns nil hits when a part saw another snapshot.
func (k *Index) dividedHits(ctx context.Context, top query.Query, n int, request func(query.Query) *bleve.SearchRequest, pin *snapshotPin, parts int) ([]*search.DocumentMatch, error) {
	results := make([]*bleve.SearchResult, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for i := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = k.search(ctx, request(partQuery{q: top, part: i, parts: parts, pin: pin}))
		}()
	}
	wg.Wait()
	if pin.moved.Load() {
		return nil, nil
	}
	hits := make([]*search.DocumentMatch, 0, len(results)*n)
	for i, res := range results {
		if errs[i] != nil {
			return nil, errs[i]
		}
		hits = append(hits, res.Hits...)
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if si, sj := roundScore(hits[i].Score), roundScore(hits[j].Score); si != sj {
			return si > sj
		}
		return hits[i].ID < hits[j].ID
	})
	if len(hits) > n {
		hits = hits[:n]
	}
	return hits, nil
}

// Analyze returns the terms the text analyzer makes of s, for tests and
// explanations.
func (k *Index) Analyze(s string) []string {
	a := k.idx.Mapping().AnalyzerNamed(TextAnalyzer)
	if a == nil {
		return nil
	}
	var out []string
	for _, tok := range a.Analyze([]byte(s)) {
		out = append(out, string(tok.Term))
	}
	return out
}
