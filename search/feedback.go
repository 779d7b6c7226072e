package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
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
// tool one caller pushed rises by at most Weight/ToolCap; distinct
// callers raise it up to Weight.
//
// Near-alike tools (issue 46, item 5: list, get, create, update and
// delete of each service of a cloud) ask for more: a run of get_cluster
// after "the settings of cluster dev" must not take "delete cluster
// dev". So the engine's own ranking of each recorded request is made
// once (rank), and a run counts only as far as the two requests are
// alike in what tells the tools apart:
//   - by vectors, their cosine without the direction the recorded
//     request's first centroidDepth tools share (alikeness: the service
//     all siblings are of), at or below AlikeMin nothing, scaled as
//     above, and never more than the plain cosine; only when those tools
//     are siblings (SiblingTightness: the mean cosine of each to their
//     centroid), else the plain cosine;
//   - by words, their cosine without the words most of those tools have,
//     words no tool of the catalog has (a resource's name) weighing
//     OutsideWeight, never more than the plain one;
//   - and a boosted tool T rises above a tool S only when the engine
//     ranked S above T for a recorded request T was run after, by at
//     least as much (plus PassSlack) as it ranks S above T for the new
//     one: the run said the ranking was wrong about S there, and the new
//     request gives S no more reason. Else T stays below S (tied at
//     most): a run never pushes a tool above one that matches the
//     request better.
//
// What the recorded runs say of themselves counts too (issue 46, item
// 5, second round): a recorded request whose words and vector are as
// alike to other recorded requests that ran other tools as to those
// that ran its own tells little of which tool is meant, so its runs
// count by that agreement (FeedbackParams.Agreement, a leave-one-out
// check over the recorded runs, made once per request with its
// ranking); and when the recorded request's first tools are siblings,
// the two requests must be alike in their distinctive words as well as
// in their vectors (SiblingBy "words"): what the built-in embedder's
// vectors share between "the settings of cluster dev" and "change the
// node count of cluster dev" is the service and the name, not the
// action.

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
	// AlikeMin is the alikeness of two requests' vectors (their cosine
	// without the direction the first tools of the recorded one's
	// ranking share) at or below which the vectors say nothing.
	AlikeMin float64 `json:"alike_min,omitempty"`
	// SiblingTightness is how alike the recorded request's first tools
	// must be (the mean cosine of each to their centroid) for its
	// vectors to be compared without their direction: below, the tools
	// are not siblings and the plain cosine counts.
	SiblingTightness float64 `json:"sibling_tightness,omitempty"`
	// OutsideWeight is what a word no tool of the catalog has (a
	// resource's name, "k8s") weighs in comparing two requests by their
	// words, against 1 for the catalog's words: it tells no tool from
	// another.
	OutsideWeight float64 `json:"outside_weight,omitempty"`
	// PassSlack is how much more (in scores scaled to [0, 1]) the new
	// request may prefer a tool over a boosted one than the recorded
	// request did, for the boosted one to pass it (0 by default).
	PassSlack float64 `json:"pass_slack,omitempty"`
	// Agreement is the prior, in recorded requests, of how far a
	// recorded run's request says which tool is meant: a run counts
	// times (Agreement + agree) / (Agreement + all), where all sums the
	// scaled similarities of the other recorded requests alike to its
	// own and agree those of them that ran the same tool (a
	// leave-one-out check over the recorded runs: agreementLocked).
	// Negative: off (every run counts whole).
	Agreement float64 `json:"agreement,omitempty"`
	// SiblingBy is what compares two requests when the recorded one's
	// first tools are siblings (SiblingTightness): "words" (their
	// distinctive words, and their vectors' alikeness at most: both must
	// say alike) or "alikeness" (their vectors' alikeness, or their
	// words, whichever says more).
	SiblingBy string `json:"sibling_by,omitempty"`
}

// DefaultFeedbackParams are the defaults, chosen on the ten dev sets
// with eval --feedback-split 0.5 (BENCHMARKS.md, "Feedback channel";
// Weight lowered from 1.5 to 1 with the distilled word vectors, "Ranking
// v9"); AlikeMin, OutsideWeight and Weight back to 1.5 with the
// near-alike set beside them (docs/benchmarks/2026-12-06-feedback-near-alike.md:
// with the guards, 1.5 gained more than 1 and lost nowhere); Agreement
// and SiblingBy with all eleven sets again
// (docs/benchmarks/2026-12-06-feedback-never-hurts.md).
var DefaultFeedbackParams = FeedbackParams{Weight: 1.5, MinSimilarity: 0.5, ToolCap: 2, HalfLife: 30 * 24 * time.Hour, Similarity: "max", Sharpen: 2, AlikeMin: 0.5, OutsideWeight: 0.25, SiblingTightness: 0.85, Agreement: 3, SiblingBy: "words"}

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
	if p.AlikeMin > 0 {
		d.AlikeMin = p.AlikeMin
	}
	if p.OutsideWeight > 0 {
		d.OutsideWeight = p.OutsideWeight
	}
	if p.SiblingTightness > 0 {
		d.SiblingTightness = p.SiblingTightness
	}
	if p.PassSlack > 0 {
		d.PassSlack = p.PassSlack
	}
	if p.Agreement != 0 {
		d.Agreement = p.Agreement
	}
	if p.SiblingBy != "" {
		d.SiblingBy = p.SiblingBy
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
//
// A search pays per distinct request, not per event (issue 52, item 11:
// searches slowed from 3 to 10 ms as the log filled to its cap): each
// request's words and unit vector are kept once, made as events arrive,
// its vector without its zeros (the built-in embedder's hashed part is
// mostly zeros); only the events of the requests similar enough are
// visited, in the order they came, so that the sums are the same.
type Feedback struct {
	p   FeedbackParams
	cap int
	now func() time.Time

	mu     sync.RWMutex
	events []fbEvent            // oldest first
	reqs   []fbRequest          // the events' distinct requests, by first event
	reqOf  map[string]int32     // index in reqs by request
	post   map[string][]posting // each word's requests
	// vecs are the unit vectors of reqs (zero until made), as the
	// embedder and build vecKey made them; made again after either
	// changes. made counts those made.
	vecKey string
	vecs   []fbVec
	made   int
	// ranks are the engine's own rankings of the requests (their first
	// FeedbackDepth tools, best first) by mode and request, each under
	// the build, embedder and parameters its key names: made as searches
	// need them, or in the background once attached (bg); made again
	// after any of them changes.
	ranks map[rankOf]*ranking
	// gen counts the times the requests were indexed again (Reset, the
	// cap): an agreement made before is stale.
	gen int
	// bg, once Attach was called, makes in the background what
	// searches need of the requests (feedback_background.go): searches
	// then use what is ready and make nothing of the log themselves.
	bg *fbBackground
	// vocab are the words (stems) of the names, titles and descriptions
	// of the catalog vocabOf, made when a search first needs them.
	vocabOf *index.Catalog
	vocab   map[string]bool
}

// ranking is the engine's ranking of a recorded request: its tools, and
// the direction its first ones share (centroid, a unit vector; nil
// without vectors).
type ranking struct {
	// key names the build, embedder and parameters it was made under
	// (rankingKey); gen the requests' generation its rel was made in.
	key      string
	gen      int
	tools    []ranked
	centroid []float32
	// tight is how alike those first tools are: the mean cosine of
	// each to centroid.
	tight float64
	// shared are the words (stems) of most of its first tools' names
	// and descriptions: what siblings have in common.
	shared map[string]bool
	// rel is each tool run after the request by how far the recorded
	// requests like it agree (FeedbackParams.Agreement); nil: all 1.
	rel map[string]float64
}

// ranked is a tool of a ranking, with its score scaled from 0 (the
// ranking's last) to 1 (its first).
type ranked struct {
	tool  string
	score float64
}

// rankOf names a ranking of ranks: a request in a mode.
type rankOf struct {
	mode Mode
	req  string
}

// posting is a request that has a word, with the word's weight.
type posting struct {
	req int32
	w   float64
}

// fbEvent is an event with the index of its request.
type fbEvent struct {
	store.FeedbackEvent
	req int32
}

// fbRequest is a distinct request of the events: its weighted words
// (unit length) and its events, oldest first.
type fbRequest struct {
	text   string
	words  map[string]float64
	events []int32
}

// fbVec is a unit vector without its zeros (the zero fbVec: not made
// yet): val at the positions idx (nil: val is the whole vector) of a
// vector n long. Its dot product
// adds the products of the same positions in the same order as the
// whole vector's (a zero adds nothing), so it is the same to the bit.
type fbVec struct {
	made bool
	n    int
	idx  []int32
	val  []float32
}

func sparseOf(v []float32) fbVec {
	nz := 0
	for _, x := range v {
		if x != 0 {
			nz++
		}
	}
	if nz > len(v)/2 {
		return fbVec{made: true, n: len(v), val: v}
	}
	out := fbVec{made: true, n: len(v), idx: make([]int32, 0, nz), val: make([]float32, 0, nz)}
	for i, x := range v {
		if x != 0 {
			out.idx = append(out.idx, int32(i))
			out.val = append(out.val, x)
		}
	}
	return out
}

// dense returns v as a whole vector.
func (v *fbVec) dense() []float32 {
	if v.idx == nil {
		return v.val
	}
	out := make([]float32, v.n)
	for k, j := range v.idx {
		out[j] = v.val[k]
	}
	return out
}

// dot returns v·q; ok is false when v was not made, or is not as long.
func (v *fbVec) dot(q []float32) (s float32, ok bool) {
	if !v.made || v.n != len(q) {
		return 0, false
	}
	if v.idx == nil {
		q = q[:len(v.val)]
		for j, x := range v.val {
			s += x * q[j]
		}
		return s, true
	}
	for k, j := range v.idx {
		s += v.val[k] * q[j]
	}
	return s, true
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
	evs := make([]fbEvent, len(events))
	words := map[string]map[string]float64{}
	for i, ev := range events {
		evs[i].FeedbackEvent = ev
		if _, ok := words[ev.Request]; !ok {
			words[ev.Request] = requestWords(ev.Request)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.indexLocked(evs, words)
	f.wakeLocked(false)
}

// indexLocked makes the requests and postings of events, with the words
// of each request (requestWords: those of words, else those held), and
// keeps the vectors of the requests held.
func (f *Feedback) indexLocked(events []fbEvent, words map[string]map[string]float64) {
	old, oldVecs, oldOf := f.reqs, f.vecs, f.reqOf
	f.events, f.reqs, f.reqOf, f.post = events, nil, map[string]int32{}, map[string][]posting{}
	f.vecs, f.made = nil, 0
	f.gen++
	for i := range f.events {
		f.events[i].req = f.addRequestLocked(f.events[i].Request, words[f.events[i].Request], old, oldOf, oldVecs)
		r := &f.reqs[f.events[i].req]
		r.events = append(r.events, int32(i))
	}
	for k := range f.ranks {
		if _, ok := f.reqOf[k.req]; !ok {
			delete(f.ranks, k)
		}
	}
}

// addRequestLocked returns the index of request q, adding it with its
// words (nil: those of old, else requestWords) and its vector of old
// when it has one.
func (f *Feedback) addRequestLocked(q string, words map[string]float64, old []fbRequest, oldOf map[string]int32, oldVecs []fbVec) int32 {
	if id, ok := f.reqOf[q]; ok {
		return id
	}
	var vec fbVec
	if o, ok := oldOf[q]; ok {
		if words == nil {
			words = old[o].words
		}
		if int(o) < len(oldVecs) {
			vec = oldVecs[o]
		}
	}
	if words == nil {
		words = requestWords(q)
	}
	id := int32(len(f.reqs))
	f.reqs = append(f.reqs, fbRequest{text: q, words: words})
	f.reqOf[q] = id
	for w, v := range words {
		f.post[w] = append(f.post[w], posting{id, v})
	}
	f.vecs = append(f.vecs, vec)
	if vec.made {
		f.made++
	}
	return id
}

// Add records one more event, dropping the oldest past the cap.
func (f *Feedback) Add(ev store.FeedbackEvent) {
	f.mu.RLock()
	_, known := f.reqOf[ev.Request]
	f.mu.RUnlock()
	var words map[string]float64
	if !known {
		words = requestWords(ev.Request)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.events) >= f.cap {
		// The oldest tenth goes at once, and the requests and postings
		// are made again (the vectors kept).
		keep := f.events[len(f.events)-f.cap+max(1, f.cap/10):]
		f.indexLocked(append(make([]fbEvent, 0, f.cap), keep...), nil)
	}
	id := f.addRequestLocked(ev.Request, words, nil, nil, nil)
	f.events = append(f.events, fbEvent{FeedbackEvent: ev, req: id})
	f.reqs[id].events = append(f.reqs[id].events, int32(len(f.events)-1))
	// Its vector and rankings are made now, in the background.
	f.wakeLocked(false)
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
	boost, passes, err := f.boosts(ctx, e, req, resp)
	if err != nil {
		return nil, err
	}
	if len(boost) > 0 {
		resp.Results = f.fuse(e, req, resp.Results, boost, passes)
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

// boosts returns each tool's feedback for resp's request, from 0 to 1,
// and the tools it may pass (passes: see rankings).
func (f *Feedback) boosts(ctx context.Context, e *Engine, req Request, resp *Response) (map[string]float64, map[string]map[string]float64, error) {
	useWords := f.p.Similarity != "vector" || resp.Mode == Keyword
	useVecs := f.p.Similarity != "words" && resp.Mode != Keyword
	f.mu.RLock()
	attached := f.bg != nil
	f.mu.RUnlock()
	var qv []float32
	if useVecs {
		// Attached, the events' vectors are made in the background.
		budget := -1
		if attached {
			budget = 0
		}
		var err error
		if qv, err = f.makeVectors(ctx, e, resp.Query, budget); err != nil {
			return nil, nil, err
		}
	}
	var qw map[string]float64
	if useWords {
		qw = requestWords(resp.Query)
	}
	key := f.rankingKey(e, req.Params)
	vocab := f.vocabulary(e.Catalog())
	boost, passes, missing := f.boostsOnce(qw, qv, resp.Mode, key, vocab)
	if attached {
		// What is not ready counts from a later search: the background
		// makes it (the mode, its parameters and the build are those
		// it keeps, from now on).
		f.want(resp.Mode, req.Params, key, len(missing) > 0)
		return boost, passes, nil
	}
	if len(missing) == 0 {
		return boost, passes, nil
	}
	if err := f.rank(ctx, e, req, resp.Mode, key, len(qv), missing); err != nil {
		return nil, nil, err
	}
	boost, passes, _ = f.boostsOnce(qw, qv, resp.Mode, key, vocab)
	return boost, passes, nil
}

// boostsOnce sums the events of the requests similar to the new one
// (words qw, vector qv) that have their ranking in mode under key, and
// returns the requests similar enough that have none yet (the most a
// search ranks: rankBudget).
func (f *Feedback) boostsOnce(qw map[string]float64, qv []float32, mode Mode, key string, vocab map[string]bool) (boost map[string]float64, passes map[string]map[string]float64, missing []string) {
	now := f.now()
	lo := f.p.MinSimilarity
	f.mu.RLock()
	defer f.mu.RUnlock()
	// The cosine of the weighted words, through the postings: only the
	// requests that share a word with the new one are touched (by words
	// alone, nothing else is).
	cos := map[int32]float64{}
	for w, v := range qw {
		for _, p := range f.post[w] {
			cos[p.req] += v * p.w
		}
	}
	// A ranking made under another key is used only once attached
	// (the background makes it again; until then the older build's
	// ranking stands); else it is made again before it counts.
	usable := func(rk *ranking) bool { return rk != nil && (rk.key == key || f.bg != nil) }
	// sims are the requests' similarities scaled from 0 (at lo) to 1;
	// by words, those similar enough count without the words their
	// ranking's first tools share.
	sims := make(map[int32]float64, len(cos))
	for i, s := range cos {
		if s <= lo {
			continue
		}
		if rk := f.ranks[rankOf{mode, f.reqs[i].text}]; usable(rk) {
			s = min(s, cosineWithout(qw, f.reqs[i].words, rk.shared, vocab, f.p.OutsideWeight))
		}
		if s > lo {
			sims[i] = (s - lo) / (1 - lo)
		}
	}
	if qv != nil {
		// Each request's vector: a dot product of its nonzero parts;
		// then, for those similar enough, their alikeness without the
		// direction the first tools of their ranking share: what every
		// sibling tool has in common says nothing of which one is meant.
		alo := f.p.AlikeMin
		for i := range f.vecs {
			s, ok := f.vecs[i].dot(qv)
			if !ok || float64(s) <= lo {
				continue
			}
			c := (float64(s) - lo) / (1 - lo)
			if rk := f.ranks[rankOf{mode, f.reqs[i].text}]; usable(rk) && len(rk.centroid) == len(qv) && rk.tight >= f.p.SiblingTightness {
				rc, _ := f.vecs[i].dot(rk.centroid)
				a := alikeness(float64(s), float64(rc), float64(dense(qv, rk.centroid)))
				c = min(c, max(0, (a-alo)/(1-alo)))
				if f.p.SiblingBy != "alikeness" && qw != nil {
					// Both must say alike: the words (sims, from
					// above) too.
					c = min(c, sims[int32(i)])
				}
			}
			sims[int32(i)] = max(sims[int32(i)], c)
		}
	}
	// The events of the requests similar enough, in the order they
	// came (the sums per caller add in that order).
	type hit struct {
		event int32
		c     float64
	}
	var hits []hit
	for i, c := range sims {
		if rk := f.ranks[rankOf{mode, f.reqs[i].text}]; !usable(rk) || rk.key != key {
			missing = append(missing, f.reqs[i].text)
			if !usable(rk) {
				continue
			}
		}
		if c <= 0 {
			continue
		}
		if f.p.Sharpen != 1 {
			c = math.Pow(c, f.p.Sharpen)
		}
		for _, ev := range f.reqs[i].events {
			hits = append(hits, hit{ev, c})
		}
	}
	// The most similar first, so that a search's budget goes to them.
	slices.SortFunc(missing, func(a, b string) int {
		return cmp.Or(cmp.Compare(sims[f.reqOf[b]], sims[f.reqOf[a]]), cmp.Compare(a, b))
	})
	if len(missing) > rankBudget {
		missing = missing[:rankBudget]
	}
	if len(hits) == 0 {
		return nil, nil, missing
	}
	slices.SortFunc(hits, func(a, b hit) int { return cmp.Compare(a.event, b.event) })
	type toolCaller struct{ tool, caller string }
	perCaller := map[toolCaller]float64{}
	passes = map[string]map[string]float64{}
	for _, h := range hits {
		ev := &f.events[h.event]
		age := now.Sub(ev.Time)
		fade := 1.0
		if age > 0 {
			fade = math.Exp2(-float64(age) / float64(f.p.HalfLife))
		}
		rel := 1.0
		if r, ok := f.ranks[rankOf{mode, ev.Request}].rel[ev.Tool]; ok {
			rel = r
		}
		perCaller[toolCaller{ev.Tool, ev.CountedCaller()}] += fade * h.c * rel
		// The tools the engine ranked above ev.Tool for the recorded
		// request, by how much: the run said they were wrong there.
		p := passes[ev.Tool]
		if p == nil {
			p = map[string]float64{}
			passes[ev.Tool] = p
		}
		rk := f.ranks[rankOf{mode, ev.Request}].tools
		at := 0.0 // ev.Tool's scaled score there (0: not listed)
		for _, r := range rk {
			if r.tool == ev.Tool {
				at = r.score
				break
			}
		}
		for _, r := range rk {
			if r.tool == ev.Tool {
				break
			}
			if m, ok := p[r.tool]; !ok || r.score-at > m {
				p[r.tool] = r.score - at
			}
		}
	}
	boost = map[string]float64{}
	for k, v := range perCaller {
		boost[k.tool] += min(1, v)
	}
	for t, v := range boost {
		boost[t] = min(f.p.ToolCap, v) / f.p.ToolCap
	}
	return boost, passes, missing
}

// rankBudget is the most recorded requests one search ranks (rank): the
// others similar enough wait for the next searches and count nothing
// until then. Each is a search of its own (about a millisecond with the
// built-in embedder): 16 bound what a search adds; 64 ranked the same
// on all eleven eval sets (docs/benchmarks/2026-12-06-feedback-near-alike.md).
const rankBudget = 16

// rankingKey names what the engine's rankings depend on: its build, its
// embedder and the request's parameters (by value: the background makes
// rankings with the parameters a search gave, not the same pointer).
func (f *Feedback) rankingKey(e *Engine, params *Params) string {
	ix, emb, _, _ := e.acquire()
	defer ix.inflight.Done()
	info := ""
	if emb != nil {
		info = fmt.Sprint(emb.Info())
	}
	p := "nil"
	if params != nil {
		p = fmt.Sprintf("%+v", *params)
	}
	return fmt.Sprintf("%p\x00%s\x00%s", ix, info, p)
}

// centroidDepth is how many of a recorded request's first tools make
// the direction they share (ranking.centroid).
const centroidDepth = 5

// rank makes the engine's rankings of the recorded requests reqs in
// mode (without the new request's domain, group and exclusions: as the
// recorded request was most likely made), with the centroid of their
// first tools' vectors of dims dimensions (none when dims is 0), and
// keeps them under key.
func (f *Feedback) rank(ctx context.Context, e *Engine, req Request, mode Mode, key string, dims int, reqs []string) error {
	made := make([]*ranking, len(reqs))
	for i, q := range reqs {
		resp, err := e.Search(ctx, Request{Query: q, Mode: mode, Limit: FeedbackDepth, Params: req.Params})
		if err != nil {
			var bad *RequestError
			if errors.As(err, &bad) { // a recorded request the engine refuses ranks nothing
				made[i] = &ranking{}
				continue
			}
			return err
		}
		made[i] = &ranking{tools: scaled(resp.Results), shared: sharedWords(resp.Results[:min(centroidDepth, len(resp.Results))])}
		if dims > 0 && resp.Mode != Keyword {
			var ids []string
			for _, r := range resp.Results[:min(centroidDepth, len(resp.Results))] {
				ids = append(ids, r.Tool.QualifiedName)
			}
			if made[i].centroid, made[i].tight, err = f.centroid(ctx, e, dims, ids); err != nil {
				return err
			}
		}
	}
	for _, m := range made {
		m.key = key
	}
	if f.p.Agreement >= 0 {
		f.mu.RLock()
		buf := make([]float64, len(f.reqs))
		for i, q := range reqs {
			if id, ok := f.reqOf[q]; ok {
				made[i].rel = f.agreementLocked(id, f.p.Similarity != "words" && mode != Keyword, buf)
			}
			made[i].gen = f.gen
		}
		f.mu.RUnlock()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ranks == nil {
		f.ranks = map[rankOf]*ranking{}
	}
	for i, q := range reqs {
		if _, ok := f.reqOf[q]; ok {
			f.ranks[rankOf{mode, q}] = made[i]
		}
	}
	return nil
}

// agreementVectors is the most recorded requests whose vectors one
// agreement compares: those that share the most words with it.
const agreementVectors = 256

// agreementLocked returns, for each tool run after recorded request id,
// how far the other recorded requests alike to it ran it too: a
// leave-one-out check of what its runs say, (a + agree) / (a + all),
// where a is Agreement (the prior, in requests), all sums the scaled
// similarities (as a search scales them) of the other recorded requests
// that share a word with it (their similarity: that of their words, or
// of their vectors when vecs, whichever is more), and agree those of
// them that ran the tool. A request as alike to requests that ran
// other tools says little of which one is meant; one alike to none
// keeps its weight (a/a). buf holds a similarity per request (zero,
// and zeroed again on return).
func (f *Feedback) agreementLocked(id int32, vecs bool, buf []float64) map[string]float64 {
	lo := f.p.MinSimilarity
	var touched []int32
	for w, v := range f.reqs[id].words {
		for _, p := range f.post[w] {
			if p.req == id {
				continue
			}
			if buf[p.req] == 0 {
				touched = append(touched, p.req)
			}
			buf[p.req] += v * p.w
		}
	}
	// The vectors of those that share the most of its words with it
	// (agreementVectors at most: a request of common words shares one
	// with most of the log).
	if v := &f.vecs[id]; vecs && v.made {
		d := v.dense()
		near := touched
		if len(near) > agreementVectors {
			// The same set a sort would put first (the order is
			// total), picked without sorting the rest: the sort was
			// half of what loading a log of distinct requests cost.
			near = slices.Clone(touched)
			selectFirst(near, agreementVectors, func(a, b int32) bool { return buf[a] > buf[b] || buf[a] == buf[b] && a < b })
			near = near[:agreementVectors]
		}
		for _, j := range near {
			if s, ok := f.vecs[j].dot(d); ok {
				buf[j] = max(buf[j], float64(s))
			}
		}
	}
	own := map[string]float64{}
	for _, e := range f.reqs[id].events {
		own[f.events[e].Tool] = 0
	}
	var all float64
	for _, j := range touched {
		s := buf[j]
		buf[j] = 0
		if s <= lo {
			continue
		}
		c := math.Pow((s-lo)/(1-lo), f.p.Sharpen)
		all += c
		// Each tool of j once, however many runs.
		for k, e := range f.reqs[j].events {
			t := f.events[e].Tool
			if _, ok := own[t]; !ok || slices.ContainsFunc(f.reqs[j].events[:k], func(o int32) bool { return f.events[o].Tool == t }) {
				continue
			}
			own[t] += c
		}
	}
	a := f.p.Agreement
	for t, agree := range own {
		own[t] = 1
		if a+all > 0 {
			own[t] = (a + agree) / (a + all)
		}
	}
	return own
}

// selectFirst reorders xs so that its first k are the k first of xs
// in the order before (a strict total order), in any order among
// themselves: a quickselect, linear on average.
func selectFirst(xs []int32, k int, before func(a, b int32) bool) {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		// The median of three as the pivot, moved to hi.
		mid := lo + (hi-lo)/2
		if before(xs[mid], xs[lo]) {
			xs[mid], xs[lo] = xs[lo], xs[mid]
		}
		if before(xs[hi], xs[lo]) {
			xs[hi], xs[lo] = xs[lo], xs[hi]
		}
		if before(xs[mid], xs[hi]) {
			xs[mid], xs[hi] = xs[hi], xs[mid]
		}
		pivot, p := xs[hi], lo
		for i := lo; i < hi; i++ {
			if before(xs[i], pivot) {
				xs[i], xs[p] = xs[p], xs[i]
				p++
			}
		}
		xs[p], xs[hi] = xs[hi], xs[p]
		switch {
		case p == k || p == k-1:
			return
		case p < k:
			lo = p + 1
		default:
			hi = p - 1
		}
	}
}

// sharedWords returns the words (stems) that most of results have in
// their names, titles and descriptions (none for fewer than 3 results).
func sharedWords(results []Result) map[string]bool {
	if len(results) < 3 {
		return nil
	}
	n := map[string]int{}
	for _, r := range results {
		t := r.Tool
		for w := range requestWords(t.Name + " " + t.Title + " " + t.Description) {
			n[w]++
		}
	}
	out := map[string]bool{}
	for w, c := range n {
		if 2*c > len(results) {
			out[w] = true
		}
	}
	return out
}

// cosineWithout is the cosine of the word weights a and b without the
// words of drop, those outside vocab weighing outside times theirs.
func cosineWithout(a, b map[string]float64, drop, vocab map[string]bool, outside float64) float64 {
	k := func(w string) float64 {
		if vocab != nil && !vocab[w] {
			return outside
		}
		return 1
	}
	var ab, aa, bb float64
	for w, x := range a {
		if drop[w] {
			continue
		}
		x *= k(w)
		aa += x * x
		ab += x * b[w] * k(w)
	}
	for w, y := range b {
		if !drop[w] {
			y *= k(w)
			bb += y * y
		}
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// vocabulary returns the words of cat's tools (their names, titles and
// descriptions), made once per catalog.
func (f *Feedback) vocabulary(cat *index.Catalog) map[string]bool {
	f.mu.RLock()
	v, of := f.vocab, f.vocabOf
	f.mu.RUnlock()
	if of == cat && v != nil {
		return v
	}
	v = map[string]bool{}
	for _, t := range cat.Tools() {
		for w := range requestWords(t.Name + " " + t.Title + " " + t.Description) {
			v[w] = true
		}
	}
	f.mu.Lock()
	f.vocab, f.vocabOf = v, cat
	f.mu.Unlock()
	return v
}

// centroid returns the unit mean of the stored vectors of tools ids, and
// how tight they are: the mean cosine of each to it.
func (f *Feedback) centroid(ctx context.Context, e *Engine, dims int, ids []string) ([]float32, float64, error) {
	ix, emb, _, _ := e.acquire()
	defer ix.inflight.Done()
	if emb == nil || ix.vs == nil {
		return nil, 0, nil
	}
	col := collectionOf(emb, dims)
	c, err := ix.vs.Centroid(ctx, col, ids)
	if err != nil || c == nil {
		return nil, 0, err
	}
	sims, err := ix.vs.Similarities(ctx, col, c, ids)
	if err != nil {
		return nil, 0, err
	}
	var tight float64
	for _, s := range sims {
		tight += float64(s)
	}
	return c, tight / float64(len(sims)), nil
}

// alikeness is the cosine of two unit vectors r and q (of cosine rq)
// without their parts along a unit vector c (their cosines with it rc
// and qc): how alike they are in what c does not say. Near 0 when one
// of them is all along c.
func alikeness(rq, rc, qc float64) float64 {
	n := (1 - rc*rc) * (1 - qc*qc)
	if n < 1e-9 {
		return 0
	}
	return (rq - rc*qc) / math.Sqrt(n)
}

// dense is the dot product of two vectors of the same length.
func dense(a, b []float32) float32 {
	var s float32
	for i, x := range a {
		s += x * b[i]
	}
	return s
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

// makeVectors returns the unit vector of q with the engine's embedder
// and build (nil without vectors), after making those of the requests
// that have none yet with them, up to budget (-1: the embedder's
// builtinEmbedBudget or remoteEmbedBudget), oldest first.
func (f *Feedback) makeVectors(ctx context.Context, e *Engine, q string, budget int) ([]float32, error) {
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
	if budget < 0 {
		budget = remoteEmbedBudget
		if emb.Info().Provider == "builtin" {
			budget = builtinEmbedBudget
		}
	}
	f.mu.Lock()
	if f.vecKey != key {
		// Another build or embedder.
		f.vecKey = key
		clear(f.vecs)
		f.made = 0
	}
	var missing []string
	if f.made < len(f.vecs) && budget > 0 {
		for i := range f.vecs {
			if !f.vecs[i].made {
				if missing = append(missing, f.reqs[i].text); len(missing) == budget {
					break
				}
			}
		}
	}
	f.mu.Unlock()
	if len(missing) > 0 {
		made := make([]fbVec, len(missing))
		for i, r := range missing {
			v, err := emb.EmbedQuery(ctx, r)
			if err != nil {
				return nil, err
			}
			made[i] = sparseOf(unit(v))
		}
		f.mu.Lock()
		if f.vecKey == key {
			for i, r := range missing {
				if id, ok := f.reqOf[r]; ok && !f.vecs[id].made {
					f.vecs[id] = made[i]
					f.made++
				}
			}
		}
		f.mu.Unlock()
	}
	return unit(qv), nil
}

func unit(v []float32) []float32 { return unitInto(v, nil) }

// unitInto is unit written into buf when it is long enough (v itself
// when v is zero).
func unitInto(v, buf []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return v
	}
	out := slices.Grow(buf[:0], len(v))[:len(v)]
	inv := float32(1 / math.Sqrt(n))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

// scaled returns the tools of results with their scores scaled from 0
// (the last) to 1 (the first; all 1 when they score alike).
func scaled(results []Result) []ranked {
	hi, lo := math.Inf(-1), math.Inf(1)
	for _, r := range results {
		hi, lo = max(hi, r.Score), min(lo, r.Score)
	}
	out := make([]ranked, len(results))
	for i, r := range results {
		out[i] = ranked{tool: r.Tool.QualifiedName, score: 1}
		if hi > lo {
			out[i].score = (r.Score - lo) / (hi - lo)
		}
	}
	return out
}

// fuse adds the feedback of each tool (boost, 0 to 1) times Weight to
// the results' scores scaled to [0, 1], brings in the tools of boost
// that no list found (inside req's scope, not excluded), and sorts again.
// A boosted tool T rises above a tool S only as far as the recorded
// requests it was run after were like this one in what tells S from T:
// when the engine ranked S above T for one of them (passes[T][S], by how
// much, in scaled scores) by at least as much as it does for this one.
// Else T stays below S, tied at most (ties keep the order).
func (f *Feedback) fuse(e *Engine, req Request, results []Result, boost map[string]float64, passes map[string]map[string]float64) []Result {
	base := scaled(results)
	out := make([]Result, 0, len(results)+len(boost))
	seen := make(map[string]bool, len(results))
	// capped is the score of a tool of scaled score s boosted by b, at
	// most that of each tool above it it may not pass.
	capped := func(above []Result, name string, s, b float64) float64 {
		v := s + f.p.Weight*b
		if b > 0 {
			for j, a := range above {
				if m, ok := passes[name][a.Tool.QualifiedName]; !ok || base[j].score-s > m+f.p.PassSlack {
					v = min(v, a.Score)
				}
			}
		}
		return v
	}
	for i, r := range results {
		r.Score = capped(out, r.Tool.QualifiedName, base[i].score, boost[r.Tool.QualifiedName])
		seen[r.Tool.QualifiedName] = true
		out = append(out, r)
	}
	cat := e.Catalog()
	excluded := map[string]bool{}
	for _, id := range req.Exclude {
		excluded[id] = true
	}
	listed := len(out)
	for _, id := range sortedKeys(boost) {
		t := cat.Tool(id)
		if seen[id] || t == nil || excluded[id] || req.Domain != "" && t.Domain != req.Domain || req.Group != "" && t.Group != req.Group {
			continue
		}
		// Below the listed tools it may not pass.
		out = append(out, Result{Tool: t, Score: capped(out[:listed], id, 0, boost[id])})
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
