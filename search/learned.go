package search

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/keyword"
	"github.com/toolscout/toolscout/index/vector"
	"github.com/toolscout/toolscout/internal/text"
)

// FusionLearned fuses the two lists by a linear model of each candidate's
// evidence (FusionModel) whose keyword and semantic weights are scaled,
// per request, by what the two lists say of it: how well the keyword list
// covers the request, how much the lists agree, how far each list's best
// stands out, the request's length. The models are fitted on the dev sets
// by cmd/fusionfit (BENCHMARKS.md "Ranking v8"), one for the built-in
// embedder and one for Ollama models.
const FusionLearned = "learned"

// The evidence of one candidate tool, in FusionModel.Weights' order.
const (
	evKeyword      = iota // the keyword score, min-max normalised over the list
	evSemantic            // the similarity, min-max normalised over the list
	evCoverage            // the keyword coverage (keyword.Hit), at most 2
	evSimilarity          // the similarity itself
	evKeywordRank         // (k+1)/(k+rank) in the keyword list, k = RRFK
	evSemanticRank        // (k+1)/(k+rank) in the semantic list
	evDomain              // (k+1)/(k+rank) of the tool's domain by centroid
	evBoth                // 1 when both lists hold the tool
	evName                // the share of the tool name's words the request has
	evDomainText          // how much of the request the tool's domain covers (domaintext.go)
	numEvidence
)

// EvidenceNames name the evidence, in FusionModel.Weights' order.
var EvidenceNames = [numEvidence]string{"keyword", "semantic", "coverage", "similarity", "keyword_rank", "semantic_rank", "domain", "both", "name", "domain_text"}

// The shape of a request as the two lists see it, in the order of
// FusionModel's Center, Keyword and Semantic.
const (
	shCoverage     = iota // the keyword list's best coverage, at most 2
	shWords               // log(1 + words of the request)
	shSentences           // log(1 + its sentences of three words or more)
	shAgree10             // the share of the top 10s the two lists share
	shAgree1              // 1 when both lists rank the same tool first
	shKeywordPeak         // how far the keyword list's best stands out: (best − mean)/std
	shSemanticPeak        // the same of the semantic list
	shKeywordDepth        // the keyword list's length over the depth asked for
	numShape
)

// ShapeNames name the request shape features, in FusionModel's order.
var ShapeNames = [numShape]string{"coverage", "words", "sentences", "agree10", "agree1", "keyword_peak", "semantic_peak", "keyword_depth"}

// FusionModel is a learned fusion. A candidate's score is
//
//	Σ_j Weights[j]·m_j·evidence_j + the exact-name and named-domain boosts
//
// where m_j is, for the keyword evidence (keyword, coverage,
// keyword_rank), keywordStrength·exp(Keyword·(shape − Center)); for the
// semantic evidence (semantic, similarity, semantic_rank)
// exp(Semantic·(shape − Center)); 1 for domain and both. With Keyword and
// Semantic zero, Weights {1.5, 1, 0, 0, 0, 0, 0.5/11, 0} is the convex
// fusion of DefaultParams.
type FusionModel struct {
	Weights  [numEvidence]float64 `json:"weights"`
	Center   [numShape]float64    `json:"center"`
	Keyword  [numShape]float64    `json:"keyword"`
	Semantic [numShape]float64    `json:"semantic"`
	// KeywordPower raises keywordStrength to a power (1 when zero): above
	// 1, a keyword list whose best match covers little of the request
	// counts less still.
	KeywordPower float64 `json:"keyword_power,omitempty"`
}

// ConvexModel is the learned fusion's form of p's convex fusion: the model
// a fit starts from.
func ConvexModel(p Params) FusionModel {
	p = p.withDefaults()
	var m FusionModel
	m.Weights[evKeyword] = p.KeywordWeight
	m.Weights[evSemantic] = p.SemanticWeight
	m.Weights[evDomain] = p.DomainWeight / (p.RRFK + 1)
	return m
}

// modelFor returns the fusion model for an embedder's lists: p's own when
// it has one, else the shipped model of the embedder's kind.
func modelFor(p Params, emb embed.Embedder) *FusionModel {
	if p.FusionModel != nil {
		return p.FusionModel
	}
	if emb != nil && emb.Info().Provider == "builtin" {
		return &builtinFusion
	}
	return &ollamaFusion
}

// FusionInputs are what the learned fusion of one request reads: its
// candidates (the union of the two lists, in order of first appearance,
// then the exactly named tools) with their evidence and boosts, and the
// request's shape. Engine.FusionInputs returns them so that a fit can rank
// one request under many models without searching again.
type FusionInputs struct {
	ids      []string
	ranks    [][2]int // 1-based keyword and semantic ranks, 0: absent
	ev       [][numEvidence]float64
	boost    []float64
	shape    [numShape]float64
	strength float64
	// Each candidate's tool (nil: not in the catalog), its domain's rank
	// by centroid (0: not ranked) and coverage of the request.
	tools   []*index.Tool
	domRank []int
	domCov  []float64
}

// IDs returns the candidates' qualified names.
func (in *FusionInputs) IDs() []string { return in.ids }

// Shape returns the request's shape features, in ShapeNames' order.
func (in *FusionInputs) Shape() []float64 { return in.shape[:] }

// multipliers returns the keyword and semantic multipliers of m for this
// request.
func (in *FusionInputs) multipliers(m *FusionModel) (mk, ms float64) {
	var ak, as float64
	for i, s := range in.shape {
		d := s - m.Center[i]
		ak += m.Keyword[i] * d
		as += m.Semantic[i] * d
	}
	strength := in.strength
	if m.KeywordPower > 0 && m.KeywordPower != 1 {
		strength = math.Pow(strength, m.KeywordPower)
	}
	return strength * math.Exp(clamp(ak, -20, 20)), math.Exp(clamp(as, -20, 20))
}

func clamp(x, lo, hi float64) float64 { return min(hi, max(lo, x)) }

// parts returns what the keyword evidence, the semantic evidence and the
// rest (domain, both) of candidate i add to its score under m.
func (in *FusionInputs) parts(i int, m *FusionModel, mk, ms float64) (kw, sem, rest float64) {
	e, w := &in.ev[i], &m.Weights
	kw = mk * (w[evKeyword]*e[evKeyword] + w[evCoverage]*e[evCoverage] + w[evKeywordRank]*e[evKeywordRank])
	sem = ms * (w[evSemantic]*e[evSemantic] + w[evSimilarity]*e[evSimilarity] + w[evSemanticRank]*e[evSemanticRank])
	rest = w[evDomain]*e[evDomain] + w[evBoth]*e[evBoth] + w[evName]*e[evName] + w[evDomainText]*e[evDomainText]
	return kw, sem, rest
}

// Scores returns each candidate's score under m, into buf when it is
// long enough.
func (in *FusionInputs) Scores(m *FusionModel, buf []float64) []float64 {
	mk, ms := in.multipliers(m)
	out := buf[:0]
	for i := range in.ids {
		kw, sem, rest := in.parts(i, m, mk, ms)
		out = append(out, kw+sem+rest+in.boost[i])
	}
	return out
}

// order returns the candidates' indexes by descending score, ties in
// order of first appearance.
func order(scores []float64) []int { return orderInto(scores, nil) }

// orderInto is order written into buf when it is long enough.
func orderInto(scores []float64, buf []int) []int {
	idx := slices.Grow(buf[:0], len(scores))[:len(scores)]
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	return idx
}

// fusionInputs gathers the evidence of the keyword list kw, the semantic
// list sl, the domains' ranks and coverage and the boosts into a new
// FusionInputs (what Engine.FusionInputs hands a fit).
func (e *Engine) fusionInputs(pl plan, kw []keyword.Hit, sl semanticList, exact, named map[string]bool) *FusionInputs {
	sc := e.fusionScratch()
	defer e.putFusionScratch(sc)
	in := new(FusionInputs)
	e.fusionInputsInto(in, sc, pl, kw, sl, exact, named)
	return in
}

// fusionInputsInto is fusionInputs written into in, its lists emptied
// first and their memory kept, with sc's scratch.
func (e *Engine) fusionInputsInto(in *FusionInputs, sc *fusionScratch, pl plan, kw []keyword.Hit, sl semanticList, exact, named map[string]bool) {
	p := pl.p
	vec := sl.hits
	// Sized for every candidate at once: growing them by appends left
	// about as much garbage again per hybrid query (issue 48 item 3).
	n := len(kw) + len(vec) + len(exact)
	in.reset(n)
	in.strength = keywordStrength(p, kw)
	pos := sc.pos
	add := func(id string) int {
		if i, ok := pos[id]; ok {
			return i
		}
		pos[id] = len(in.ids)
		in.ids = append(in.ids, id)
		in.ev = append(in.ev, [numEvidence]float64{})
		in.ranks = append(in.ranks, [2]int{})
		in.boost = append(in.boost, 0)
		return len(in.ids) - 1
	}
	kLo, kSpan := minSpan(len(kw), func(i int) float64 { return kw[i].Score })
	sLo, sSpan := minSpan(len(vec), func(i int) float64 { return float64(vec[i].Similarity) })
	rr := func(rank int) float64 { return (p.RRFK + 1) / (p.RRFK + float64(rank)) }
	inKw := sc.inKw
	for r := 0; r < max(len(kw), len(vec)); r++ {
		if r < len(kw) && !inKw[kw[r].ID] {
			i := add(kw[r].ID)
			inKw[kw[r].ID] = true
			e := &in.ev[i]
			e[evKeyword] = norm(kw[r].Score, kLo, kSpan)
			e[evCoverage] = min(kw[r].Coverage, 2)
			e[evKeywordRank] = rr(r + 1)
			in.ranks[i][0] = r + 1
		}
		if r < len(vec) {
			i := add(vec[r].ID)
			e := &in.ev[i]
			if e[evSemanticRank] == 0 {
				e[evSemantic] = norm(float64(vec[r].Similarity), sLo, sSpan)
				e[evSimilarity] = float64(vec[r].Similarity)
				e[evSemanticRank] = rr(r + 1)
				in.ranks[i][1] = r + 1
			}
		}
	}
	if len(exact) > 0 {
		for _, id := range slices.Sorted(maps.Keys(exact)) { // map order would make ties random
			add(id)
		}
	}
	// The candidates' tools and domains, then the domains' ranks and
	// coverage of the request: only the candidates' domains are read
	// (domainRanks, domainText.coverageOf), not a map of every domain.
	sc.doms = sc.doms[:0]
	for _, id := range in.ids {
		t := pl.cat.Tool(id)
		in.tools = append(in.tools, t)
		if t != nil {
			sc.doms = append(sc.doms, t.Domain)
		}
	}
	sc.ranks.rank(sl.domSim, sc.doms)
	in.domCov = e.domainCoverageOf(pl, in.tools, in.domCov)
	qWords := stemsInto(pl.q, sc.qWords)
	best := 0.0
	if len(kw) > 0 {
		best = kw[0].Coverage
	}
	for i, t := range in.tools {
		e := &in.ev[i]
		if e[evKeywordRank] > 0 && e[evSemanticRank] > 0 {
			e[evBoth] = 1
		}
		in.domRank = append(in.domRank, 0)
		if t == nil {
			continue
		}
		if nw := nameStems(t.Name); len(nw) > 0 {
			had := 0
			for _, w := range nw {
				if qWords[w] {
					had++
				}
			}
			e[evName] = float64(had) / float64(len(nw))
		}
		if r := sc.ranks.of(t.Domain); r > 0 {
			e[evDomain] = rr(r)
			in.domRank[i] = r
		}
		e[evDomainText] = domainExcess(in.domCov[i], best)
		if exact[in.ids[i]] {
			in.boost[i] += p.ExactBoost
		}
		if named[t.Domain] {
			in.boost[i] += p.DomainBoost
		}
	}
	in.shape = shapeOf(pl.q, kw, vec)
}

// reset empties in's lists, keeping their memory, and makes room for n
// candidates.
func (in *FusionInputs) reset(n int) {
	clear(in.ids) // no names kept alive
	clear(in.tools)
	in.ids = slices.Grow(in.ids[:0], n)
	in.tools = slices.Grow(in.tools[:0], n)
	in.ev = slices.Grow(in.ev[:0], n)
	in.ranks = slices.Grow(in.ranks[:0], n)
	in.boost = slices.Grow(in.boost[:0], n)
	in.domRank = slices.Grow(in.domRank[:0], n)
	in.domCov = in.domCov[:0]
	in.shape, in.strength = [numShape]float64{}, 0
}

// fusionScratch is what a learned fusion reads and writes besides its
// answer: the inputs of one request and the maps and lists that gather
// them, kept between searches (Engine.fusionMem) so that a fusion leaves
// its answer and little else behind.
type fusionScratch struct {
	in     FusionInputs
	pos    map[string]int  // a candidate's place in in
	inKw   map[string]bool // the keyword list's tools seen
	qWords map[string]bool // the request's stems
	doms   []string        // the candidates' domains
	ranks  domainRanks
	scores []float64
	order  []int
}

func newFusionScratch() *fusionScratch {
	return &fusionScratch{pos: map[string]int{}, inKw: map[string]bool{}, qWords: map[string]bool{}}
}

// fusionScratch returns a fusion's scratch, one the engine kept or a new
// one.
func (e *Engine) fusionScratch() *fusionScratch { return e.fusionMem.take(newFusionScratch) }

// putFusionScratch empties sc, keeping its memory but no names alive, and
// keeps it for the next fusion.
func (e *Engine) putFusionScratch(sc *fusionScratch) {
	sc.in.reset(0)
	clear(sc.pos)
	clear(sc.inKw)
	clear(sc.qWords)
	clear(sc.doms)
	sc.doms = sc.doms[:0]
	sc.ranks.reset()
	e.fusionMem.keep(sc)
}

// stems returns the stems of s's words (identifiers split), stopwords
// aside.
func stems(s string) map[string]bool {
	return stemsInto(s, map[string]bool{})
}

// stemsInto is stems written into dst, which it returns.
func stemsInto(s string, dst map[string]bool) map[string]bool {
	for _, w := range text.SplitIdentifier(s) {
		if !text.Stopword(w) {
			dst[text.Stem(w)] = true
		}
	}
	return dst
}

// nameCache keeps tool names' distinct stems: stemming the names of a
// request's hundred candidates took a tenth of a hybrid request's time.
// Cleared whole when it holds maxNames (a catalog's names are few).
var nameCache = struct {
	sync.RWMutex
	m map[string][]string
}{m: map[string][]string{}}

const maxNames = 1 << 18

// nameStems returns the distinct stems of a tool name's words, stopwords
// aside.
func nameStems(name string) []string {
	nameCache.RLock()
	out, ok := nameCache.m[name]
	nameCache.RUnlock()
	if ok {
		return out
	}
	for w := range stems(name) {
		out = append(out, w)
	}
	nameCache.Lock()
	if len(nameCache.m) >= maxNames {
		nameCache.m = map[string][]string{}
	}
	nameCache.m[name] = out
	nameCache.Unlock()
	return out
}

// shapeOf measures the request's shape from its text and its two lists.
func shapeOf(q string, kw []keyword.Hit, vec []vector.Hit) [numShape]float64 {
	var s [numShape]float64
	if len(kw) > 0 {
		s[shCoverage] = min(kw[0].Coverage, 2)
	}
	s[shWords] = math.Log1p(float64(len(strings.Fields(q))))
	s[shSentences] = math.Log1p(float64(len(Sentences(q))))
	// The top 10s compared by a scan, not through a map of one.
	shared := 0
	for i := 0; i < min(10, len(vec)); i++ {
		for j := 0; j < min(10, len(kw)); j++ {
			if kw[j].ID == vec[i].ID {
				shared++
				break
			}
		}
	}
	s[shAgree10] = float64(shared) / 10
	if len(kw) > 0 && len(vec) > 0 && kw[0].ID == vec[0].ID {
		s[shAgree1] = 1
	}
	s[shKeywordPeak] = peak(len(kw), func(i int) float64 { return kw[i].Score })
	s[shSemanticPeak] = peak(len(vec), func(i int) float64 { return float64(vec[i].Similarity) })
	s[shKeywordDepth] = min(1, float64(len(kw))/float64(max(1, len(vec))))
	return s
}

// peak is how far the first of n scores stands above their mean, in
// standard deviations (0 for fewer than two, or all equal), at most 10.
func peak(n int, score func(int) float64) float64 {
	if n < 2 {
		return 0
	}
	var sum, sq float64
	for i := 0; i < n; i++ {
		sum += score(i)
	}
	mean := sum / float64(n)
	for i := 0; i < n; i++ {
		d := score(i) - mean
		sq += d * d
	}
	sd := math.Sqrt(sq / float64(n))
	if sd == 0 {
		return 0
	}
	return min(10, (score(0)-mean)/sd)
}

// minSpan returns the least of n scores and their range.
func minSpan(n int, score func(int) float64) (lo, span float64) {
	if n == 0 {
		return 0, 0
	}
	lo, hi := score(0), score(0)
	for i := 1; i < n; i++ {
		lo, hi = min(lo, score(i)), max(hi, score(i))
	}
	return lo, hi - lo
}

// norm min-max normalises s; a list whose scores are all equal counts 1.
func norm(s, lo, span float64) float64 {
	if span <= 0 {
		return 1
	}
	return (s - lo) / span
}

// fuseLearned ranks a hybrid request by the learned fusion.
func (e *Engine) fuseLearned(pl plan, kw []keyword.Hit, sl semanticList) []Result {
	sc := e.fusionScratch()
	defer e.putFusionScratch(sc)
	exact, named := e.fusionBoosts(pl)
	in := &sc.in
	e.fusionInputsInto(in, sc, pl, kw, sl, exact, named)
	m := modelFor(pl.p, pl.emb)
	mk, ms := in.multipliers(m)
	sc.scores = in.Scores(m, sc.scores)
	scores := sc.scores
	sc.order = orderInto(scores, sc.order)
	out := make([]Result, 0, len(in.ids))
	for _, i := range sc.order {
		t := in.tools[i]
		if t == nil {
			continue
		}
		r := Result{Tool: t, Score: scores[i]}
		kr, sr := in.ranks[i][0], in.ranks[i][1]
		if kr > 0 {
			r.coverage = kw[kr-1].Coverage
		}
		if sr > 0 {
			r.similarity = sl.similarity(sr - 1)
		}
		if pl.req.Explain {
			x := &Explanation{KeywordRank: kr, SemanticRank: sr, ExactName: exact[t.QualifiedName], DomainNamed: named[t.Domain], DomainRank: in.domRank[i], DomainCoverage: in.domCov[i]}
			if kr > 0 {
				x.KeywordScore, x.KeywordCoverage, x.BM25 = kw[kr-1].Score, r.coverage, kw[kr-1].Terms
			}
			if sr > 0 {
				x.SemanticScore = float64(sl.hits[sr-1].Similarity)
			}
			k, s, rest := in.parts(i, m, mk, ms)
			x.Fusion = &FusionTerms{Method: FusionLearned, Keyword: k, Semantic: s, Domain: rest}
			if x.ExactName {
				x.Fusion.ExactBoost = pl.p.ExactBoost
			}
			if x.DomainNamed {
				x.Fusion.DomainBoost = pl.p.DomainBoost
			}
			r.Explanation = x
		}
		out = append(out, r)
	}
	return out
}

// The shipped fusion models, fitted by cmd/fusionfit on the ten dev sets
// (BENCHMARKS.md "Ranking v8"; builtinFusion refitted in "Ranking v9" for
// the distilled word vectors): builtinFusion on the built-in embedder's
// lists, ollamaFusion on those of an Ollama model (fitted on the Universal
// Sentence Encoder Lite; any Ollama model uses it, so its raw-similarity
// weight is held at 0: it reads only evidence that does not depend on a
// model's scale of similarities). Read from the fits: the
// semantic list counts less the better the keyword list covers the
// request; the keyword list counts more in a long request, less in one of
// many sentences and when the two lists agree (it adds little then).
var (
	builtinFusion = FusionModel{
		Weights:      [numEvidence]float64{1.25, 1, 0.2813, 0.0313, 0.0235, 0.125, 0.1412, 0.0626, 0.25, 0.1367},
		Center:       [numShape]float64{0.2682, 3.0275, 0.9839, 0.4833, 0.5307, 3.437, 3.2808, 0.7312},
		Keyword:      [numShape]float64{-0.5079, 0.2813, -0.375, -0.5, -0.1406, 0.125, 0, 0},
		Semantic:     [numShape]float64{-0.7773, 0, 0.125, -0.1563, 0.0156, -0.0313, 0.125, 0.125},
		KeywordPower: 1.25,
	}
	ollamaFusion = FusionModel{
		Weights:      [numEvidence]float64{1.7344, 1, 0.2656, 0, 0.2656, 0.0625, 0.0064, 0.0234, 0.4922, 0},
		Center:       [numShape]float64{0.2682, 3.0275, 0.9839, 0.368, 0.3492, 3.437, 2.7723, 0.7312},
		Keyword:      [numShape]float64{1.25, 0.375, 0, -0.2813, 0, 0, -0.125, 0.25},
		Semantic:     [numShape]float64{-1.625, -0.125, 0.25, -0.125, 0.125, 0.125, 0.25, -0.4063},
		KeywordPower: 0.875,
	}
)
