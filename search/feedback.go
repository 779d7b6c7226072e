package search

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/internal/text"
)

// The feedback channel: what agents ran after their searches
// (store.FeedbackEvent) ranks those tools higher for later requests
// like theirs. Each recorded request counts for its tool by its
// similarity s to the new request (the larger of the embedder's cosine
// and that of their rarity-weighted words): nothing at or below
// MinSimilarity, ((s-MinSimilarity)/(1-MinSimilarity))^Sharpen above,
// faded by half every HalfLife. That is summed per caller and capped at
// 1 (one caller's runs, however many, count as one caller's; the events
// of MCP sessions are one caller's: store.FeedbackEvent.CountedCaller), then
// summed over callers and capped at ToolCap; divided by ToolCap and
// times Weight, it is added to the fused ranking's scores scaled from 0
// (the last candidate) to 1 (the first), and the list sorted again
// (ties keep the ranking's order). A tool no list found can come in; a
// tool one caller pushed rises by at most Weight/ToolCap, half the span
// of the scaled scores with the defaults; distinct callers raise it up to
// Weight.

// FeedbackParams shape the feedback channel; zero fields take the
// defaults (DefaultFeedbackParams).
type FeedbackParams struct {
	// Weight is what the channel adds at most to a score scaled to [0, 1].
	Weight float64 `json:"weight,omitempty"`
	// MinSimilarity is the similarity of two requests below which a
	// recorded one says nothing of the new one.
	MinSimilarity float64 `json:"min_similarity,omitempty"`
	// ToolCap is the number of distinct callers whose runs raise a tool
	// all the way: one caller raises it by at most Weight/ToolCap.
	ToolCap float64 `json:"tool_cap,omitempty"`
	// HalfLife is how long an event takes to count half.
	HalfLife time.Duration `json:"half_life,omitempty"`
	// Similarity picks what makes two requests similar: "vector" (the
	// embedder's vectors of both; words in keyword mode), "words" (the
	// weighted words they share), or "max" of both.
	Similarity string `json:"similarity,omitempty"`
	// Sharpen raises each event's scaled similarity to this power (1
	// when zero).
	Sharpen float64 `json:"sharpen,omitempty"`
}

// DefaultFeedbackParams are the defaults, chosen on the ten dev sets
// with eval --feedback-split 0.5 (BENCHMARKS.md, "Feedback channel";
// Weight lowered from 1.5 to 1 with the distilled word vectors, "Ranking
// v9").
var DefaultFeedbackParams = FeedbackParams{Weight: 1, MinSimilarity: 0.5, ToolCap: 2, HalfLife: 30 * 24 * time.Hour, Similarity: "max", Sharpen: 2}

func (p FeedbackParams) withDefaults() FeedbackParams {
	d := DefaultFeedbackParams
	if p.Weight > 0 {
		d.Weight = p.Weight
	}
	if p.MinSimilarity > 0 {
		d.MinSimilarity = p.MinSimilarity
	}
	if p.ToolCap > 0 {
		d.ToolCap = p.ToolCap
	}
	if p.HalfLife > 0 {
		d.HalfLife = p.HalfLife
	}
	if p.Similarity != "" {
		d.Similarity = p.Similarity
	}
	if p.Sharpen > 0 {
		d.Sharpen = p.Sharpen
	}
	return d
}

// FeedbackOptions configures a Feedback.
type FeedbackOptions struct {
	Params FeedbackParams
	// Cap is the most events held (store.DefaultFeedbackCap when zero):
	// the oldest go first.
	Cap int
	// Now is the clock events age by (time.Now when nil).
	Now func() time.Time
}

// Feedback holds the recorded events and ranks by them. It is safe for
// concurrent use: the server adds events while it searches.
type Feedback struct {
	p   FeedbackParams
	cap int
	now func() time.Time

	mu     sync.RWMutex
	events []fbEvent            // appended in place; replaced whole when trimmed
	post   map[string][]posting // each request word's events
	// vecs are the unit vectors of the events' requests, by request, as
	// the embedder and build vecKey made them; made again after either
	// changes.
	vecMu  sync.Mutex
	vecKey string
	vecs   map[string][]float32
}

// posting is an event whose request has a word, with the word's weight.
type posting struct {
	event int
	w     float64
}

// fbEvent is an event with its request's weighted words.
type fbEvent struct {
	store.FeedbackEvent
	words map[string]float64 // unit length
}

// FeedbackDepth is how many candidates the channel reorders: the
// engine's default candidate depth, so that asking for them costs no
// more than a plain request.
const FeedbackDepth = 50

// NewFeedback returns the channel over events (oldest first).
func NewFeedback(events []store.FeedbackEvent, o FeedbackOptions) *Feedback {
	if o.Cap <= 0 {
		o.Cap = store.DefaultFeedbackCap
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	f := &Feedback{p: o.Params.withDefaults(), cap: o.Cap, now: o.Now}
	f.Reset(events)
	return f
}

// Params returns the channel's parameters.
func (f *Feedback) Params() FeedbackParams { return f.p }

// Reset replaces the events (a newer build's).
func (f *Feedback) Reset(events []store.FeedbackEvent) {
	if len(events) > f.cap {
		events = events[len(events)-f.cap:]
	}
	evs := make([]fbEvent, 0, len(events))
	for _, ev := range events {
		evs = append(evs, fbEvent{FeedbackEvent: ev, words: requestWords(ev.Request)})
	}
	f.mu.Lock()
	f.events = evs
	f.indexLocked()
	f.mu.Unlock()
}

// indexLocked makes the postings of the events.
func (f *Feedback) indexLocked() {
	f.post = map[string][]posting{}
	for i := range f.events {
		for w, v := range f.events[i].words {
			f.post[w] = append(f.post[w], posting{i, v})
		}
	}
}

// Add records one more event, dropping the oldest past the cap.
func (f *Feedback) Add(ev store.FeedbackEvent) {
	e := fbEvent{FeedbackEvent: ev, words: requestWords(ev.Request)}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.events) >= f.cap {
		// The oldest tenth goes at once, into a new slice (a search may
		// be reading the old one), and the postings are made again.
		keep := f.events[len(f.events)-f.cap+max(1, f.cap/10):]
		f.events = append(make([]fbEvent, 0, f.cap), keep...)
		f.indexLocked()
	}
	f.events = append(f.events, e)
	for w, v := range e.words {
		f.post[w] = append(f.post[w], posting{len(f.events) - 1, v})
	}
}

// Len returns the number of events held.
func (f *Feedback) Len() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.events)
}

// requestWords returns a request's word stems, each weighted by how
// rare it is in general English (a common word says little of what a
// request is about), scaled to unit length.
func requestWords(q string) map[string]float64 {
	out := map[string]float64{}
	for _, w := range text.SplitIdentifier(q) {
		if text.Stopword(w) {
			continue
		}
		s := text.Stem(w)
		wt := 6.0 // unknown: rare
		if p, ok := embed.CorpusFrequency(s); ok && p > 0 {
			wt = min(6, max(0.5, -math.Log10(p)))
		}
		out[s] = wt
	}
	var n float64
	for _, v := range out {
		n += v * v
	}
	n = math.Sqrt(n)
	for k := range out {
		out[k] /= n
	}
	return out
}

// Search answers req as e does, with the feedback channel fused in.
func (f *Feedback) Search(ctx context.Context, e *Engine, req Request) (*Response, error) {
	limit := req.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	if f.Len() == 0 {
		return e.Search(ctx, req)
	}
	wide := req
	wide.Limit = max(limit, FeedbackDepth)
	if err := CheckLimit(limit); err != nil {
		return nil, err
	}
	resp, err := e.Search(ctx, wide)
	if err != nil {
		return nil, err
	}
	boost, err := f.boosts(ctx, e, resp)
	if err != nil {
		return nil, err
	}
	if len(boost) > 0 {
		resp.Results = f.fuse(e, req, resp.Results, boost)
	}
	if len(resp.Results) > limit {
		resp.Results = resp.Results[:limit]
	}
	emb, _ := e.embedder()
	if resp.Mode == Keyword {
		emb = nil
	}
	resp.Confidence = confidenceOf(resp.Mode, emb, resp.Results)
	return resp, nil
}

// boosts returns each tool's feedback for resp's request, from 0 to 1.
func (f *Feedback) boosts(ctx context.Context, e *Engine, resp *Response) (map[string]float64, error) {
	useWords := f.p.Similarity != "vector" || resp.Mode == Keyword
	useVecs := f.p.Similarity != "words" && resp.Mode != Keyword
	f.mu.RLock()
	events := f.events
	sims := make([]float64, len(events))
	if useWords {
		// The cosine of the weighted words, through the postings: only
		// the events that share a word with the request are touched.
		for w, qv := range requestWords(resp.Query) {
			for _, p := range f.post[w] {
				if p.event < len(sims) {
					sims[p.event] += qv * p.w
				}
			}
		}
	}
	f.mu.RUnlock()
	if useVecs {
		vs, err := f.vectorSimilarities(ctx, e, resp.Query, events)
		if err != nil {
			return nil, err
		}
		for i, s := range vs {
			sims[i] = max(sims[i], s)
		}
	}
	now := f.now()
	lo := f.p.MinSimilarity
	type key struct{ tool, caller string }
	perCaller := map[key]float64{}
	for i, s := range sims {
		if s <= lo {
			continue
		}
		ev := &events[i]
		age := now.Sub(ev.Time)
		fade := 1.0
		if age > 0 {
			fade = math.Exp2(-float64(age) / float64(f.p.HalfLife))
		}
		c := (s - lo) / (1 - lo)
		if f.p.Sharpen != 1 {
			c = math.Pow(c, f.p.Sharpen)
		}
		perCaller[key{ev.Tool, ev.CountedCaller()}] += fade * c
	}
	if len(perCaller) == 0 {
		return nil, nil
	}
	out := map[string]float64{}
	for k, v := range perCaller {
		out[k.tool] += min(1, v)
	}
	for t, v := range out {
		out[t] = min(f.p.ToolCap, v) / f.p.ToolCap
	}
	return out, nil
}

// Embedding budgets: the most event requests one search embeds. The
// built-in embedder embeds in process (2,000 take about 0.1 s, once);
// another embedder is a round trip per request, so the events' vectors
// come a few per search, and until then those events are judged by
// their words alone.
const (
	builtinEmbedBudget = 2000
	remoteEmbedBudget  = 8
)

// vectorSimilarities returns the cosine of q's vector to each event's
// request's, with the engine's embedder and build (0 for an event whose
// request has no vector yet).
func (f *Feedback) vectorSimilarities(ctx context.Context, e *Engine, q string, events []fbEvent) ([]float64, error) {
	ix, emb, _, _ := e.acquire()
	defer ix.inflight.Done()
	if emb == nil || ix.vs == nil {
		return nil, nil
	}
	qv, err := e.embedQuery(ctx, ix, emb, q)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%p\x00%s", ix, emb.Info())
	budget := remoteEmbedBudget
	if emb.Info().Provider == "builtin" {
		budget = builtinEmbedBudget
	}
	f.vecMu.Lock()
	if f.vecKey != key || len(f.vecs) > 2*f.cap {
		// Another build or embedder, or the vectors of many requests
		// whose events are gone.
		f.vecKey, f.vecs = key, map[string][]float32{}
	}
	var missing []string
	asked := map[string]bool{}
	for i := range events {
		r := events[i].Request
		if _, ok := f.vecs[r]; !ok && len(missing) < budget && !asked[r] {
			missing = append(missing, r)
			asked[r] = true
		}
	}
	f.vecMu.Unlock()
	made := make(map[string][]float32, len(missing))
	for _, r := range missing {
		v, err := emb.EmbedQuery(ctx, r)
		if err != nil {
			return nil, err
		}
		made[r] = unit(v)
	}
	f.vecMu.Lock()
	if f.vecKey == key {
		for r, v := range made {
			f.vecs[r] = v
		}
	}
	vecs := make([][]float32, len(events))
	for i := range events {
		if v, ok := f.vecs[events[i].Request]; ok {
			vecs[i] = v
		} else {
			vecs[i] = made[events[i].Request]
		}
	}
	f.vecMu.Unlock()
	qv = unit(qv)
	out := make([]float64, len(events))
	for i, v := range vecs {
		if len(v) != len(qv) {
			continue
		}
		var s float32
		for j := range v {
			s += v[j] * qv[j]
		}
		out[i] = float64(s)
	}
	return out, nil
}

func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return v
	}
	out := make([]float32, len(v))
	inv := float32(1 / math.Sqrt(n))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

// fuse adds the feedback of each tool (boost, 0 to 1) times Weight to
// the results' scores scaled to [0, 1], brings in the tools of boost
// that no list found (inside req's scope, not excluded), and sorts again.
func (f *Feedback) fuse(e *Engine, req Request, results []Result, boost map[string]float64) []Result {
	hi, lo := math.Inf(-1), math.Inf(1)
	for _, r := range results {
		hi, lo = max(hi, r.Score), min(lo, r.Score)
	}
	span := hi - lo
	out := make([]Result, 0, len(results)+len(boost))
	seen := make(map[string]bool, len(results))
	for _, r := range results {
		s := 0.0
		if span > 0 {
			s = (r.Score - lo) / span
		} else if len(results) > 0 {
			s = 1
		}
		r.Score = s + f.p.Weight*boost[r.Tool.QualifiedName]
		seen[r.Tool.QualifiedName] = true
		out = append(out, r)
	}
	cat := e.Catalog()
	excluded := map[string]bool{}
	for _, id := range req.Exclude {
		excluded[id] = true
	}
	for _, id := range sortedKeys(boost) {
		t := cat.Tool(id)
		if seen[id] || t == nil || excluded[id] || req.Domain != "" && t.Domain != req.Domain || req.Group != "" && t.Group != req.Group {
			continue
		}
		out = append(out, Result{Tool: t, Score: f.p.Weight * boost[id]})
	}
	slices.SortStableFunc(out, func(a, b Result) int { return cmp.Compare(b.Score, a.Score) })
	return out
}

func sortedKeys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
