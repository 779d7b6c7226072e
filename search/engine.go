package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/keyword"
	"github.com/toolscout/toolscout/index/vector"
)

// Mode is a ranking mode.
type Mode string

// The ranking modes.
const (
	Keyword  Mode = "keyword"
	Semantic Mode = "semantic"
	Hybrid   Mode = "hybrid"
)

// Modes lists the valid modes.
var Modes = []Mode{Keyword, Semantic, Hybrid}

// ParseMode parses a mode name; "" gives Hybrid.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return Hybrid, nil
	case Keyword, Semantic, Hybrid:
		return m, nil
	}
	return "", invalidf("unknown search mode %s: use keyword, semantic or hybrid", Quote(s, 100))
}

// ErrInvalidRequest matches (errors.Is) every error caused by the request
// itself: unknown mode, domain or group, empty query, limit out of range.
var ErrInvalidRequest = errors.New("invalid search request")

// RequestError is an error caused by the request. Its message is the
// reason and what to do, fit to show the model as is; errors.Is matches
// it to ErrInvalidRequest.
type RequestError struct{ Reason string }

func (e *RequestError) Error() string { return e.Reason }

// Is reports whether target is ErrInvalidRequest.
func (e *RequestError) Is(target error) bool { return target == ErrInvalidRequest }

func invalidf(format string, args ...any) error {
	return &RequestError{Reason: fmt.Sprintf(format, args...)}
}

// DefaultLimit is the number of results of a request without a limit, and
// MaxLimit the most one request returns.
const (
	DefaultLimit = 10
	MaxLimit     = 100
)

// Request is one search.
type Request struct {
	Query   string
	Mode    Mode // Hybrid when empty
	Domain  string
	Group   string // needs Domain
	Limit   int    // 1 to MaxLimit; DefaultLimit when zero
	Explain bool
	// Params overrides the engine's parameters for this request (nil: the
	// engine's). Eval uses it to compare strategies on one index.
	Params *Params
	// Exclude names tools (qualified names) to rank as if they were not
	// in the catalog: eval measures confidence with the relevant tools of
	// its queries left out.
	Exclude []string
}

// Response is a ranked answer.
type Response struct {
	Query string `json:"query"`
	// Mode is the mode actually used: keyword when semantic ranking failed.
	Mode Mode `json:"search_mode"`
	// Embedder names the embedder that ranked the semantic list
	// ("builtin/wordvec-v2", "ollama/nomic-embed-text"), or "none".
	Embedder string `json:"embedder"`
	// Notice says why the mode differs from the one asked for, or that
	// the catalog has no tool yet (NoToolsNotice).
	Notice string `json:"notice,omitempty"`
	// Steps are the steps of a request of several (steps.go), in order;
	// a Result's Step counts from 1 into them.
	Steps   []string `json:"steps,omitempty"`
	Results []Result `json:"results"`
	// Confidence is how well the first result fits the request, and
	// sets each result's Confidence (nil
	// when there is no model for the mode and embedder; value 0 and low
	// when there is no result).
	Confidence *Confidence `json:"confidence,omitempty"`
}

// Result is one ranked tool.
type Result struct {
	Tool  *index.Tool
	Score float64
	// Step is the 1-based step of the request whose own ranking put the
	// tool here (0: the whole request's ranking).
	Step int
	// Explanation, when requested.
	Explanation *Explanation
	// Confidence estimates, from 0 to 1, the chance that the tool is one
	// the request needs: a logistic model of its evidence and of how far
	// it falls behind the first result, fitted on the dev sets'
	// requests (ConfidenceModel); never above the result before it. 0
	// when the mode and embedder have no model (Response.Confidence nil).
	Confidence float64
	// coverage is the tool's keyword coverage (keyword.Hit) and
	// similarity its semantic similarity, 0 when the tool is not in that
	// list: the evidence of confidence.
	coverage, similarity float64
}

// Explanation tells how a result was ranked.
type Explanation struct {
	KeywordRank  int     `json:"keyword_rank,omitempty"` // 1-based; 0: not in the list
	KeywordScore float64 `json:"keyword_score,omitempty"`
	// KeywordCoverage is the keyword score over the request's attainable
	// score (keyword.Hit.Coverage).
	KeywordCoverage float64 `json:"keyword_coverage,omitempty"`
	SemanticRank    int     `json:"semantic_rank,omitempty"`
	SemanticScore   float64 `json:"semantic_score,omitempty"`
	ExactName       bool    `json:"exact_name,omitempty"`
	DomainNamed     bool    `json:"domain_named,omitempty"`
	// DomainRank is the rank of the tool's domain by how well the domain
	// as a whole matches the query (hybrid mode; 0: not used).
	DomainRank int `json:"domain_rank,omitempty"`
	// DomainCoverage is how much of the request the tool's domain as a
	// whole covers: its name, description and tools' names and summaries
	// (domaintext.go), 0 to 1.
	DomainCoverage float64 `json:"domain_coverage,omitempty"`
	// BM25 is the keyword score by matched term and field.
	BM25 []keyword.TermScore `json:"bm25,omitempty"`
	// Fusion is what each part added to a hybrid score.
	Fusion *FusionTerms `json:"fusion,omitempty"`
}

// FusionTerms are the parts of a hybrid score: what the keyword list and
// the semantic list added (with convex fusion weight × the min-max
// normalised score, with RRF weight/(k+rank)), the tool's domain
// (weight/(k+rank)), then the boosts. They sum to the score.
type FusionTerms struct {
	Method      string  `json:"method"`
	Keyword     float64 `json:"keyword,omitempty"`
	Semantic    float64 `json:"semantic,omitempty"`
	Domain      float64 `json:"domain,omitempty"`
	ExactBoost  float64 `json:"exact_boost,omitempty"`
	DomainBoost float64 `json:"domain_boost,omitempty"`
}

// Options builds an Engine. Catalog and Keyword are required; without
// Vectors or Embedder, semantic and hybrid requests fall back to keyword.
type Options struct {
	Catalog  *index.Catalog
	Keyword  *keyword.Index
	Vectors  *vector.Store
	Embedder embed.Embedder
	Params   Params
	// CacheSize is the number of query embeddings kept (256 when zero,
	// none when negative).
	CacheSize int
	Logger    *slog.Logger
}

// Engine answers searches. It is safe for concurrent use; SetCatalog swaps
// the catalog after a re-index.
type Engine struct {
	params Params
	cache  *vectorCache
	log    *slog.Logger

	mu  sync.RWMutex
	ix  *indexes // swapped whole (SwapIndexes)
	emb embed.Embedder
	cat *index.Catalog
	// unavailable, when set, says why semantic ranking cannot answer yet
	// (a Live index still embedding); emb is nil meanwhile.
	unavailable string

	// domText is the domain index of the catalog last searched
	// (domaintext.go), built under domTextMu.
	domText   atomic.Pointer[domainText]
	domTextMu sync.Mutex
	// domVec are the domain vectors of the build last searched
	// (domainvector.go), built under domVecMu.
	domVec   atomic.Pointer[domainVectors]
	domVecMu sync.Mutex
	// domWords is the word index of the domains' names of the catalog
	// last searched (named.go).
	domWords atomic.Pointer[domainWords]
	// fusionMem keeps the fusions' scratch between searches (learned.go).
	fusionMem kept[fusionScratch]
	// domSimMem keeps the buffers of the requests' domain similarities
	// between searches (putDomainSims).
	domSimMem kept[[]float32]
}

// NewEngine returns an engine over already-synced indexes.
func NewEngine(opts Options) *Engine {
	size := opts.CacheSize
	if size == 0 {
		size = 256
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine{
		ix:     &indexes{kw: opts.Keyword, vs: opts.Vectors},
		emb:    opts.Embedder,
		params: opts.Params.withDefaults(),
		cache:  newVectorCache(size),
		log:    log,
		cat:    opts.Catalog,
	}
}

// Catalog returns the catalog being searched.
func (e *Engine) Catalog() *index.Catalog {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.cat
}

// SetCatalog replaces the catalog once both indexes hold its tools.
// indexes are the keyword and vector indexes a search reads, with the
// searches in flight on them: a search keeps the ones it started with,
// so that a swap (a newer build) never mixes two.
type indexes struct {
	kw       *keyword.Index
	vs       *vector.Store
	inflight sync.WaitGroup
}

// acquire returns the indexes, embedder and catalog searches use now,
// counted in flight until release.
func (e *Engine) acquire() (*indexes, embed.Embedder, *index.Catalog, string) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	e.ix.inflight.Add(1)
	return e.ix, e.emb, e.cat, e.unavailable
}

// swapIndexes makes kw, vs, emb and cat what searches use, at once, and
// returns a function that waits for the searches still on the previous
// indexes.
func (e *Engine) swapIndexes(kw *keyword.Index, vs *vector.Store, emb embed.Embedder, cat *index.Catalog) (drained func()) {
	e.mu.Lock()
	old := e.ix
	e.ix, e.emb, e.cat, e.unavailable = &indexes{kw: kw, vs: vs}, emb, cat, ""
	e.mu.Unlock()
	e.prepareDomainText(cat)
	// Query vectors are keyed by the build (embedQuery), and the new
	// embedder is fitted to the new build: the cached ones are the old
	// build's, of no use again.
	e.cache.clear()
	return old.inflight.Wait
}

func (e *Engine) SetCatalog(cat *index.Catalog) {
	e.mu.Lock()
	e.cat = cat
	e.mu.Unlock()
	e.prepareDomainText(cat)
}

// Params returns the engine's ranking parameters.
func (e *Engine) Params() Params { return e.params }

// EmbedderName names the engine's embedder, or "none".
func (e *Engine) EmbedderName() string {
	emb, _ := e.embedder()
	if emb == nil {
		return "none"
	}
	return emb.Info().String()
}

// embedder returns the embedder that ranks semantic lists, or nil and why
// not.
func (e *Engine) embedder() (embed.Embedder, string) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.emb == nil || e.ix.vs == nil {
		if e.unavailable != "" {
			return nil, e.unavailable
		}
		return nil, "no embedder configured"
	}
	return e.emb, ""
}

// setEmbedder swaps the embedder in once its vectors are indexed; nil
// with a reason turns semantic ranking off until then.
func (e *Engine) setEmbedder(emb embed.Embedder, unavailable string) {
	e.mu.Lock()
	e.emb, e.unavailable = emb, unavailable
	e.mu.Unlock()
}

// Related returns up to n tools of t's domain nearest to it: by its
// stored vector, or by keyword on its name words when there are no
// vectors.
func (e *Engine) Related(ctx context.Context, t *index.Tool, n int) ([]*index.Tool, error) {
	ix, emb, cat, _ := e.acquire()
	defer ix.inflight.Done()
	var ids []string
	if emb != nil && ix.vs != nil && emb.Info().Dims > 0 {
		hits, err := ix.vs.Neighbors(ctx, collectionOf(emb, emb.Info().Dims), t.QualifiedName, n, t.Domain)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
	} else {
		hits, err := ix.kw.Search(ctx, keyword.Query{Text: index.NameWords(t.Name) + " " + t.Summary, Domain: t.Domain, Size: n + 1, Weights: e.params.Fields, Scoring: e.params.scoring()})
		if err != nil && !errors.Is(err, keyword.ErrEmptyQuery) {
			return nil, err
		}
		for _, h := range hits {
			if h.ID != t.QualifiedName {
				ids = append(ids, h.ID)
			}
		}
	}
	var out []*index.Tool
	for _, id := range ids {
		if r := cat.Tool(id); r != nil && len(out) < n {
			out = append(out, r)
		}
	}
	return out, nil
}

// CheckScope validates a domain and group against the catalog, with errors
// that list the valid names.
func CheckScope(cat *index.Catalog, domain, group string) error {
	if err := checkName("domain", domain); err != nil {
		return err
	}
	if err := checkName("group", group); err != nil {
		return err
	}
	if group != "" && domain == "" {
		return invalidf("group %q needs a domain: pass domain as well (groups belong to domains)", group)
	}
	if domain == "" {
		return nil
	}
	d := cat.Domain(domain)
	if d == nil {
		names := make([]string, 0, len(cat.Domains()))
		for _, d := range cat.Domains() {
			names = append(names, d.Name)
		}
		msg := fmt.Sprintf("unknown domain %q", domain)
		if len(names) == 0 {
			return invalidf("%s: no domain has tools yet", msg)
		}
		if s := closest(domain, names, 1); len(s) > 0 {
			msg += fmt.Sprintf(" (did you mean %q?)", s[0])
		}
		return invalidf("%s; valid domains: %s", msg, strings.Join(names, ", "))
	}
	if group != "" && !slices.Contains(d.Groups, group) {
		if len(d.Groups) == 0 {
			return invalidf("unknown group %q: domain %q has no groups", group, domain)
		}
		msg := fmt.Sprintf("unknown group %q in domain %q", group, domain)
		if s := closest(group, d.Groups, 1); len(s) > 0 {
			msg += fmt.Sprintf(" (did you mean %q?)", s[0])
		}
		return invalidf("%s; valid groups: %s", msg, strings.Join(d.Groups, ", "))
	}
	return nil
}

// CheckLimit validates a request's limit (zero aside, which means
// DefaultLimit).
func CheckLimit(n int) error {
	if n < 1 || n > MaxLimit {
		return invalidf("limit %d is out of range: use 1 to %d", n, MaxLimit)
	}
	return nil
}

// plan is a validated request: every check happens once, here.
type plan struct {
	req     Request
	q       string
	mode    Mode
	p       Params
	limit   int
	depth   int
	notice  string
	cat     *index.Catalog
	emb     embed.Embedder // nil: semantic ranking unavailable, for unavail
	unavail string
	exclude map[string]bool
	ix      *indexes // in flight until Search returns
}

// plan validates req against the engine's catalog: the query (bounded),
// the mode, the scope and the limit.
func (e *Engine) plan(req Request) (pl plan, err error) {
	ix, emb, cat, unavail := e.acquire()
	if emb == nil || ix.vs == nil {
		emb = nil
		if unavail == "" {
			unavail = "no embedder configured"
		}
	}
	defer func() {
		if err != nil {
			ix.inflight.Done()
		}
	}()
	q, notice := boundQuery(strings.TrimSpace(req.Query))
	if q == "" {
		return plan{}, invalidf("empty query: describe the task in words")
	}
	mode, err := ParseMode(string(req.Mode))
	if err != nil {
		return plan{}, err
	}
	if err := CheckScope(cat, req.Domain, req.Group); err != nil {
		return plan{}, err
	}
	limit := req.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	if err := CheckLimit(limit); err != nil {
		return plan{}, err
	}
	p := e.params
	if req.Params != nil {
		if err := req.Params.Check(); err != nil {
			return plan{}, invalidf("params: %v", err)
		}
		p = req.Params.withDefaults()
	}
	pl = plan{req: req, q: q, mode: mode, p: p, limit: limit, depth: max(limit, p.Candidates), notice: notice, cat: cat, emb: emb, unavail: unavail, ix: ix}
	if len(req.Exclude) > 0 {
		pl.exclude = make(map[string]bool, len(req.Exclude))
		for _, id := range req.Exclude {
			pl.exclude[id] = true
		}
	}
	return pl, nil
}

// NoToolsNotice is the notice of an answer from a catalog without tools.
const NoToolsNotice = "no tool is indexed yet"

// Search ranks tools for req: the request is validated once, then the
// mode picks the keyword list, the semantic list or their fusion. When
// semantic ranking fails, the answer is exactly the keyword request's, with
// a notice saying why.
func (e *Engine) Search(ctx context.Context, req Request) (*Response, error) {
	pl, err := e.plan(req)
	if err != nil {
		return nil, err
	}
	defer pl.ix.inflight.Done()
	resp := &Response{Query: pl.q, Mode: pl.mode, Embedder: "none", Notice: pl.notice}
	if pl.cat.Len() == 0 {
		// Nothing to rank (every upstream server down or connecting):
		// each mode answers alike, and says so.
		resp.Notice = joinNotice(resp.Notice, NoToolsNotice)
		resp.Results = []Result{}
		return resp, nil
	}
	var steps []string
	if pl.p.StepDepth != int(Off) {
		if steps = Steps(pl.q); len(steps) < 2 {
			steps = nil
		}
	}
	results, err := e.ranked(ctx, pl, steps, pl.mode)
	var unavailable semanticError
	if errors.As(err, &unavailable) && ctx.Err() == nil {
		e.log.Warn("semantic ranking failed; keyword fallback", "err", unavailable.err)
		resp.Notice = joinNotice(resp.Notice, fmt.Sprintf("%s ranking unavailable, ranked by keyword instead: %v", pl.mode, unavailable.err))
		resp.Mode = Keyword
		results, err = e.ranked(ctx, pl, steps, Keyword)
	} else if err == nil && pl.mode != Keyword {
		resp.Embedder = pl.emb.Info().String()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	resp.Steps = steps
	if len(results) > pl.limit {
		results = results[:pl.limit]
	}
	resp.Results = results
	resp.Confidence = confidenceOf(resp.Mode, pl.emb, results)
	return resp, nil
}

// ranked ranks the whole request in mode and, when it has several steps,
// labels the results with the steps they fit (StepDepth and StepWeight
// zero, the default) or composes the steps' own rankings with it.
func (e *Engine) ranked(ctx context.Context, pl plan, steps []string, mode Mode) ([]Result, error) {
	rank := map[Mode]func(context.Context, plan) ([]Result, error){
		Keyword: e.keywordResults, Semantic: e.semanticResults, Hybrid: e.hybridResults,
	}[mode]
	whole, err := rank(ctx, pl)
	if err != nil || len(steps) < 2 {
		return whole, err
	}
	if pl.p.StepDepth <= 0 && pl.p.StepWeight <= 0 {
		return e.labelSteps(ctx, pl, steps, whole, mode)
	}
	return e.composeSteps(ctx, pl, steps, whole, rank)
}

// semanticError marks a failure of the semantic list, which a request
// survives by falling back to keyword ranking.
type semanticError struct{ err error }

func (s semanticError) Error() string { return s.err.Error() }
func (s semanticError) Unwrap() error { return s.err }

// keywordHits runs the keyword list. alone says it is the whole answer
// (keyword mode): then it has fuzzy matches, and the cores to itself, so a
// query over a large index runs in parts at once. Beside the semantic list
// (hybrid mode) it runs in parts only from hybridPartDocs documents a part.
func (e *Engine) keywordHits(ctx context.Context, pl plan, alone bool) ([]keyword.Hit, error) {
	kq := keyword.Query{
		Text: pl.q, Domain: pl.req.Domain, Group: pl.req.Group, Size: pl.depth + len(pl.exclude),
		Weights: pl.p.Fields, Explain: pl.req.Explain, Scoring: pl.p.scoring(),
		Divide: true, DividePart: hybridPartDocs,
	}
	if alone {
		kq.Fuzzy, kq.DividePart = pl.p.Fuzzy, 0
	}
	hits, err := pl.ix.kw.Search(ctx, kq)
	if err != nil || len(pl.exclude) == 0 {
		return hits, err
	}
	return without(hits, pl.exclude, func(h keyword.Hit) string { return h.ID }, pl.depth), nil
}

// hybridPartDocs is the fewest documents a part of a hybrid search's
// divided keyword list reads. The semantic list, beside it, ends first
// and leaves a core idle; a part pays on that core at 1M tools (one
// searcher's hybrid p99 49.0, 57.5 -> 36.8, 42.0 ms, quiet, answers
// byte for byte the same), not at 100k, where the parts' set-up and
// garbage (182 -> 337 KB a search) made one searcher's p99 8.7-9.5 ->
// 12.9-13.5 ms (docs/benchmarks/2026-12-06-session-end-quiet-5.md).
const hybridPartDocs = 250_000

// without returns the first n of hits whose ID is not in exclude.
func without[H any](hits []H, exclude map[string]bool, id func(H) string, n int) []H {
	out := hits[:0]
	for _, h := range hits {
		if !exclude[id(h)] && len(out) < n {
			out = append(out, h)
		}
	}
	return out
}

// keywordResults answers in keyword mode (and every fallback): BM25 with
// fuzzy matching.
func (e *Engine) keywordResults(ctx context.Context, pl plan) ([]Result, error) {
	hits, err := e.keywordHits(ctx, pl, true)
	if err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(hits))
	for i, h := range hits {
		t := pl.cat.Tool(h.ID)
		if t == nil {
			continue
		}
		r := Result{Tool: t, Score: h.Score, coverage: h.Coverage}
		if pl.req.Explain {
			r.Explanation = &Explanation{KeywordRank: i + 1, KeywordScore: h.Score, KeywordCoverage: h.Coverage, BM25: h.Terms}
		}
		out = append(out, r)
	}
	return e.withDomainText(pl, out), nil
}

// withDomainText adds to each keyword result the domain evidence:
// DomainText × the list's best score × how much of the request its
// domain covers (domaintext.go), and fills the list up to its depth with
// the tools of the covered domains it lacks, best covered first. With
// DomainText below 1 a tool no word of the request matches never rises
// above the list's best match, however well its domain is covered: a
// described server reaches the requests about its purpose, and cannot
// take those another tool matches better.
func (e *Engine) withDomainText(pl plan, out []Result) []Result {
	m := coverageMaps.Get().(map[string]float64)
	defer func() {
		clear(m)
		coverageMaps.Put(m)
	}()
	cov := e.domainCoverageInto(pl, m)
	if len(cov) == 0 {
		return out
	}
	ref, best := 1.0, 0.0
	if len(out) > 0 && out[0].Score > 0 {
		ref = out[0].Score
	}
	for _, r := range out {
		best = max(best, r.coverage)
	}
	w := pl.p.DomainText * ref
	// A domain counts for what it covers of the request beyond the best
	// keyword match (as in the learned fusion, domainExcess).
	have := make(map[string]bool, len(out))
	for i := range out {
		r := &out[i]
		have[r.Tool.QualifiedName] = true
		c := cov[r.Tool.Domain]
		r.Score += w * domainExcess(c, best)
		if r.Explanation != nil {
			r.Explanation.DomainCoverage = c
		}
	}
	for _, t := range domainFill(pl.cat, cov, have, pl.exclude, pl.req.Group, pl.depth-len(out)) {
		r := Result{Tool: t, Score: w * domainExcess(cov[t.Domain], best)}
		if pl.req.Explain {
			r.Explanation = &Explanation{DomainCoverage: cov[t.Domain]}
		}
		out = append(out, r)
	}
	// Ties keep the keyword list's order (then the fill's).
	slices.SortStableFunc(out, func(a, b Result) int { return cmp.Compare(b.Score, a.Score) })
	return out
}

// semanticResults answers in semantic mode.
func (e *Engine) semanticResults(ctx context.Context, pl plan) ([]Result, error) {
	l, err := e.semantic(ctx, pl, false)
	if err != nil {
		return nil, semanticError{err}
	}
	out := make([]Result, 0, len(l.hits))
	for i, h := range l.hits {
		t := pl.cat.Tool(h.ID)
		if t == nil {
			continue
		}
		r := Result{Tool: t, Score: float64(h.Similarity), similarity: l.similarity(i)}
		if pl.req.Explain {
			r.Explanation = &Explanation{SemanticRank: i + 1, SemanticScore: float64(h.Similarity)}
		}
		out = append(out, r)
	}
	return out, nil
}

// hybridResults answers in hybrid mode: both lists at once (on two cores
// the slower bounds the latency instead of their sum), then the fusion.
// The keyword list has no fuzzy matching here: the semantic list's
// character trigrams already catch misspellings, and fuzzy term expansion
// triples the keyword cost (BENCHMARKS.md).
func (e *Engine) hybridResults(ctx context.Context, pl plan) ([]Result, error) {
	kw, vec, err := e.hybridLists(ctx, pl)
	if err != nil {
		return nil, err
	}
	defer e.putDomainSims(vec)
	return e.fuse(pl, kw, vec), nil
}

// FusionInputs returns what the learned fusion reads of a hybrid request
// (learned.go): a fit ranks each request under many models from these,
// without searching again. req.Mode is ignored.
func (e *Engine) FusionInputs(ctx context.Context, req Request) (*FusionInputs, error) {
	req.Mode = Hybrid
	pl, err := e.plan(req)
	if err != nil {
		return nil, err
	}
	defer pl.ix.inflight.Done()
	kw, sl, err := e.hybridLists(ctx, pl)
	if err != nil {
		return nil, err
	}
	defer e.putDomainSims(sl)
	exact, named := e.fusionBoosts(pl)
	return e.fusionInputs(pl, kw, sl, exact, named), nil
}

// hybridLists returns the keyword and the semantic list of a hybrid
// request, searched at once.
func (e *Engine) hybridLists(ctx context.Context, pl plan) ([]keyword.Hit, semanticList, error) {
	var (
		vec    semanticList
		vecErr error
		wg     sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		wantDomains := pl.req.Domain == "" && pl.p.DomainWeight > 0
		vec, vecErr = e.semantic(ctx, pl, wantDomains)
	}()
	kwHits, kwErr := e.keywordHits(ctx, pl, false)
	wg.Wait()
	if vecErr != nil {
		return nil, semanticList{}, semanticError{vecErr}
	}
	if kwErr != nil {
		return nil, semanticList{}, kwErr
	}
	return kwHits, vec, nil
}

// semanticList is a semantic ranking: hits in rank order, their
// Similarity the score they rank by; sim, when not nil (the request's
// sentences were scaled), each hit's similarity to its best sentence,
// the evidence confidence judges instead of that score; and, when asked
// for, domSim, the similarity of the request to each domain's centroid,
// written into domBuf (kept by the engine, Engine.putDomainSims).
type semanticList struct {
	hits   []vector.Hit
	sim    map[string]float32
	domSim vector.DomainSims
	domBuf *[]float32
	// own, when not nil (and sim nil), is each hit's similarity before
	// the domain vectors moved it (withDomainVector), by place in hits.
	own []float32
}

// similarity returns the similarity of the i-th hit that confidence
// judges.
func (l semanticList) similarity(i int) float64 {
	if l.own != nil {
		return float64(l.own[i])
	}
	if l.sim != nil {
		return float64(l.sim[l.hits[i].ID])
	}
	return float64(l.hits[i].Similarity)
}

// semantic returns the depth nearest tools to q and, when domains is set,
// the similarity of q to each domain's centroid; with the domain vectors
// on (domainVectorWeight), each tool's score adds what its domain's own
// text matches of q beyond the domain's best tool (domainvector.go).
func (e *Engine) semantic(ctx context.Context, pl plan, domains bool) (semanticList, error) {
	l, v, err := e.semanticTools(ctx, pl, domains)
	if err != nil {
		return semanticList{}, err
	}
	if l, err = e.withPseudoFeedback(ctx, pl, l, v, pl.p.PseudoFeedback); err != nil {
		return semanticList{}, err
	}
	if l, err = e.withDomainFeedback(ctx, pl, l, v, pl.p.DomainFeedback); err != nil {
		return semanticList{}, err
	}
	if w := domainVectorWeight(pl); w > 0 {
		dv, err := e.domainVectorsOf(ctx, pl)
		if err != nil {
			return semanticList{}, err
		}
		l = withDomainVector(l, pl.cat, dv, v, w)
	}
	return l, nil
}

// semanticTools is semantic without the domain vectors, and the
// request's vector.
func (e *Engine) semanticTools(ctx context.Context, pl plan, domains bool) (semanticList, []float32, error) {
	if pl.emb == nil {
		return semanticList{}, nil, errors.New(pl.unavail)
	}
	emb, q, depth, domain, group := pl.emb, pl.q, pl.depth, pl.req.Domain, pl.req.Group
	hits, v, err := e.nearest(ctx, pl.ix, emb, q, depth, domain, group, pl.exclude)
	if err != nil {
		return semanticList{}, nil, err
	}
	l := semanticList{hits: hits}
	if domains {
		l.domBuf = e.domSimMem.take(newDomainSimBuf)
		if l.domSim, err = pl.ix.vs.DomainSimilaritiesInto(ctx, collectionOf(emb, len(v)), v, *l.domBuf); err != nil {
			e.putDomainSims(l)
			return semanticList{}, nil, err
		}
	}
	parts := Sentences(q)
	if len(parts) < 2 {
		return l, v, nil
	}
	if len(parts) > maxSentences {
		parts = parts[:maxSentences]
	}
	// A task of several sentences asks for several tools, and one vector
	// of the whole blurs them: each sentence is searched as well. A tool's
	// similarity is the mean of its similarity to the whole and to its
	// best sentence (chosen on metatool-dev over the best match alone,
	// which lost 0.004 nDCG@10 there; BENCHMARKS.md); a tool outside a
	// list counts 0 for it. A request of ScaledSentences sentences or more
	// ranks by the sentences scaled instead: each sentence's similarities
	// divided by its best match's, so that every step of the task counts
	// alike however well its words match, a tool scores SentenceShare of
	// its best scaled sentence and the rest of its similarity to the
	// whole (BENCHMARKS.md "Ranking v7"). The evidence that confidence
	// judges is then the tool's similarity to its best sentence.
	whole := map[string]float32{}
	for _, h := range hits {
		whole[h.ID] = h.Similarity
	}
	partBest, scaled := map[string]float32{}, map[string]float32{}
	for _, part := range parts {
		ph, _, err := e.nearest(ctx, pl.ix, emb, part, depth, domain, group, pl.exclude)
		if err != nil {
			return semanticList{}, nil, err
		}
		for _, h := range ph {
			if s, ok := partBest[h.ID]; !ok || h.Similarity > s {
				partBest[h.ID] = h.Similarity
			}
			if top := ph[0].Similarity; top > 0 {
				if s := h.Similarity / top; s > scaled[h.ID] {
					scaled[h.ID] = s
				}
			}
		}
	}
	sim := make(map[string]float32, len(whole)+len(partBest))
	for id, s := range whole {
		sim[id] = 0.5 * s
	}
	for id, s := range partBest {
		sim[id] += 0.5 * s
	}
	best := sim
	if share := float32(pl.p.SentenceShare); share > 0 && len(parts) >= pl.p.ScaledSentences {
		best = make(map[string]float32, len(sim))
		for id := range sim {
			best[id] = share*scaled[id] + (1-share)*whole[id]
		}
		l.sim = partBest
	}
	out := make([]vector.Hit, 0, len(best))
	for id, s := range best {
		out = append(out, vector.Hit{ID: id, Similarity: s})
	}
	slices.SortFunc(out, bySimilarity)
	if len(out) > depth {
		out = out[:depth]
	}
	l.hits = out
	return l, v, nil
}

// nearest embeds text (through the cache) and returns its depth nearest
// tools but those in exclude, and the text's vector.
func (e *Engine) nearest(ctx context.Context, ix *indexes, emb embed.Embedder, text string, depth int, domain, group string, exclude map[string]bool) ([]vector.Hit, []float32, error) {
	v, err := e.embedQuery(ctx, ix, emb, text)
	if err != nil {
		return nil, nil, err
	}
	hits, err := ix.vs.Query(ctx, collectionOf(emb, len(v)), v, depth+len(exclude), domain, group)
	if err != nil || len(exclude) == 0 {
		return hits, v, err
	}
	return without(hits, exclude, func(h vector.Hit) string { return h.ID }, depth), v, nil
}

// embedQuery embeds a query text through the cache.
func (e *Engine) embedQuery(ctx context.Context, ix *indexes, emb embed.Embedder, text string) ([]float32, error) {
	// The build (ix) is part of the key: after a swap (Live.Swap) another
	// embedder, fitted to the new build, embeds the same text differently,
	// and a search still on the old build may put its vector.
	key := fmt.Sprintf("%p\x00%s\x00%s", ix, emb.Info(), text)
	if v, ok := e.cache.get(key); ok {
		return v, nil
	}
	v, err := emb.EmbedQuery(ctx, text)
	if err != nil {
		return nil, err
	}
	e.cache.put(key, v)
	return v, nil
}

// Sentences splits a request into its sentences of three words or more
// (at . ! ? ; and line breaks), for requests that describe several steps.
func Sentences(q string) []string {
	var out []string
	for _, s := range strings.FieldsFunc(q, func(r rune) bool {
		return r == '.' || r == '!' || r == '?' || r == ';' || r == '\n' || r == '。'
	}) {
		if len(strings.Fields(s)) >= 3 {
			out = append(out, strings.TrimSpace(s))
		}
	}
	return out
}

// fusionBoosts returns the tools the request names exactly and the
// domains it names.
func (e *Engine) fusionBoosts(pl plan) (exact, named map[string]bool) {
	exact = exactMatches(pl.cat, pl.q, pl.req.Domain, pl.req.Group)
	for id := range pl.exclude {
		delete(exact, id)
	}
	if pl.req.Domain == "" && pl.p.DomainBoost > 0 { // else none: a nil map reads as empty
		named = e.namedDomains(pl.cat, pl.q)
	}
	return exact, named
}

func (e *Engine) fuse(pl plan, kw []keyword.Hit, sl semanticList) []Result {
	if pl.p.Fusion == FusionLearned {
		return e.fuseLearned(pl, kw, sl)
	}
	vec := sl.hits
	cat, req, p := pl.cat, pl.req, pl.p
	kwIDs := make([]string, len(kw))
	kwScores := make([]float64, len(kw))
	for i, h := range kw {
		kwIDs[i], kwScores[i] = h.ID, h.Score
	}
	vecIDs := make([]string, len(vec))
	vecScores := make([]float64, len(vec))
	for i, h := range vec {
		vecIDs[i], vecScores[i] = h.ID, float64(h.Similarity)
	}
	var fused []Fused
	if p.Fusion == FusionConvex {
		fused = FuseConvex(
			ScoredList{IDs: kwIDs, Scores: kwScores, Weight: p.KeywordWeight * keywordStrength(p, kw)},
			ScoredList{IDs: vecIDs, Scores: vecScores, Weight: p.SemanticWeight})
	} else {
		fused = FuseRRF(p.RRFK,
			RankedList{IDs: kwIDs, Weight: p.KeywordWeight},
			RankedList{IDs: vecIDs, Weight: p.SemanticWeight})
	}

	exact, named := e.fusionBoosts(pl)
	sc := e.fusionScratch()
	defer e.putFusionScratch(sc)
	// The ranks of the domains of the fused tools and of the exactly
	// named ones: the only ones read (domainRanks).
	for _, f := range fused {
		if t := cat.Tool(f.ID); t != nil {
			sc.doms = append(sc.doms, t.Domain)
		}
	}
	for id := range exact {
		if t := cat.Tool(id); t != nil {
			sc.doms = append(sc.doms, t.Domain)
		}
	}
	domRank := &sc.ranks
	domRank.rank(sl.domSim, sc.doms)
	if domRank.ranked() {
		// Domain-level ranking: the domains, ranked by how well each as a
		// whole (the centroid of its tools) matches the query, act as a
		// third RRF list in which every tool takes its domain's rank.
		for i := range fused {
			if t := cat.Tool(fused[i].ID); t != nil && domRank.of(t.Domain) > 0 {
				fused[i].Score += p.DomainWeight / (p.RRFK + float64(domRank.of(t.Domain)))
			}
		}
	}
	if len(exact) > 0 || len(named) > 0 || domRank.ranked() {
		seen := map[string]bool{}
		for i := range fused {
			if exact[fused[i].ID] {
				fused[i].Score += p.ExactBoost
				seen[fused[i].ID] = true
			}
			if t := cat.Tool(fused[i].ID); t != nil && named[t.Domain] {
				fused[i].Score += p.DomainBoost
			}
		}
		for _, id := range slices.Sorted(maps.Keys(exact)) { // map order would make ties random
			if !seen[id] {
				fused = append(fused, Fused{ID: id, Score: p.ExactBoost, Ranks: make([]int, 2), Parts: make([]float64, 2)})
			}
		}
		slices.SortStableFunc(fused, func(a, b Fused) int { return cmp.Compare(b.Score, a.Score) })
	}
	out := make([]Result, 0, len(fused))
	for _, f := range fused {
		t := cat.Tool(f.ID)
		if t == nil {
			continue
		}
		r := Result{Tool: t, Score: f.Score}
		if f.Ranks[0] > 0 {
			r.coverage = kw[f.Ranks[0]-1].Coverage
		}
		if f.Ranks[1] > 0 {
			r.similarity = sl.similarity(f.Ranks[1] - 1)
		}
		if req.Explain {
			x := &Explanation{KeywordRank: f.Ranks[0], SemanticRank: f.Ranks[1], ExactName: exact[f.ID], DomainNamed: named[t.Domain]}
			x.DomainRank = domRank.of(t.Domain)
			if f.Ranks[0] > 0 {
				x.KeywordScore, x.KeywordCoverage = kw[f.Ranks[0]-1].Score, r.coverage
				x.BM25 = kw[f.Ranks[0]-1].Terms
			}
			ft := &FusionTerms{Method: p.Fusion}
			if len(f.Parts) == 2 {
				ft.Keyword, ft.Semantic = f.Parts[0], f.Parts[1]
			}
			if x.DomainRank > 0 {
				ft.Domain = p.DomainWeight / (p.RRFK + float64(x.DomainRank))
			}
			if exact[f.ID] {
				ft.ExactBoost = p.ExactBoost
			}
			if named[t.Domain] {
				ft.DomainBoost = p.DomainBoost
			}
			x.Fusion = ft
			if f.Ranks[1] > 0 {
				x.SemanticScore = float64(vec[f.Ranks[1]-1].Similarity)
			}
			r.Explanation = x
		}
		out = append(out, r)
	}
	return out
}

// keywordStrength scales the keyword list's weight in a convex fusion by
// the coverage of its best match, up to KeywordFullCoverage: min-max
// normalisation gives a list's best tool 1 however weak its match, and a
// list whose best match is one common word of the request ("works" in
// "remember that Alice works at Acme", matching every filesystem tool's
// "only works within allowed directories") must count as weak as it is.
func keywordStrength(p Params, kw []keyword.Hit) float64 {
	if p.KeywordFullCoverage <= 0 || len(kw) == 0 {
		return 1
	}
	return min(1, kw[0].Coverage/p.KeywordFullCoverage)
}

func joinNotice(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// newDomainSimBuf makes an empty buffer for the similarities of a
// request to every domain's centroid (semanticList.domSim).
func newDomainSimBuf() *[]float32 { return new([]float32) }

// putDomainSims keeps the buffer of l's domain similarities
// (semanticList.domBuf; nil: none) for the next search, as the fusion's
// scratch is kept (kept): a []float32 of every domain, which keeps no
// name alive, instead of a map by name, which took about 70% of the
// similarities' 5.3-5.9 ms of CPU a hybrid search at 1M tools in 10,000
// domains (docs/benchmarks/2026-12-06-fusion-1m.md).
func (e *Engine) putDomainSims(l semanticList) {
	if l.domBuf == nil {
		return
	}
	if b := l.domSim.Buffer(); cap(b) > cap(*l.domBuf) { // grown for this search
		*l.domBuf = b[:0]
	}
	e.domSimMem.keep(l.domBuf)
}

// exactMatches returns the tools (inside the scope) whose name or
// qualified name the query is, ignoring case and the form of separators.
func exactMatches(cat *index.Catalog, q, domain, group string) map[string]bool {
	var out map[string]bool
	for _, t := range cat.ToolsNamed(q) {
		if domain != "" && t.Domain != domain || group != "" && t.Group != group {
			continue
		}
		if out == nil {
			out = map[string]bool{}
		}
		out[t.QualifiedName] = true
	}
	return out
}

// bySimilarity orders vector hits best first, equal similarities by ID:
// the one order of a semantic list, whatever made or re-scored it.
func bySimilarity(a, b vector.Hit) int {
	return bestFirst(a.Similarity, b.Similarity, a.ID, b.ID)
}

// bestFirst orders by similarity, greatest first, then by name.
func bestFirst(as, bs float32, an, bn string) int {
	switch {
	case as > bs:
		return -1
	case as < bs:
		return 1
	}
	return strings.Compare(an, bn)
}
