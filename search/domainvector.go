package search

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/vector"
)

// domainVectors are the embeddings of what each domain says it is for
// (domainVectorText), one vector a domain, for the semantic channel: a
// tool's semantic score adds DomainVector × how much nearer the request
// is to its domain's vector than to the best of the domain's tools in the
// list (withDomainVector), so that a server's description reaches a
// request about its purpose in semantic and hybrid mode as the domain
// text (domaintext.go) does in keyword mode. They are built once per
// build of the indexes and embedder (the built-in embedder is fitted to
// each build), in memory, on the first request that needs them: a catalog
// has far fewer domains than tools.
type domainVectors struct {
	ix  *indexes
	emb embed.Info // the embedder, by its Info as embedQuery keys it: an interface compare panics on an embedder of a non-comparable type
	cat *index.Catalog
	vec map[string][]float32 // unit length (zero for a zero vector)
	// scratch keeps withDomainVector's memory between searches.
	scratch kept[domainVectorScratch]
}

// domainVectorText is what a domain's vector embeds: its name's words,
// its description and what the server says of itself beside a
// configured description (index.Domain.About). The tools' own texts are
// in their own vectors already.
func domainVectorText(d *index.Domain) string {
	parts := []string{strings.Join(d.Words(), " ")}
	for _, s := range []string{d.Description, d.About} {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ". ")
}

// domainVectorsOf returns the domain vectors of the build pl searches,
// embedding them on first use (one build at a time: a newer one replaces
// them).
func (e *Engine) domainVectorsOf(ctx context.Context, pl plan) (*domainVectors, error) {
	info := pl.emb.Info()
	if d := e.domVec.Load(); d != nil && d.ix == pl.ix && d.emb == info && d.cat == pl.cat {
		return d, nil
	}
	e.domVecMu.Lock()
	defer e.domVecMu.Unlock()
	if d := e.domVec.Load(); d != nil && d.ix == pl.ix && d.emb == info && d.cat == pl.cat {
		return d, nil
	}
	doms := pl.cat.Domains()
	texts := make([]string, len(doms))
	for i, d := range doms {
		texts[i] = domainVectorText(d)
	}
	vs, err := pl.emb.EmbedDocuments(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed the text of %d domains: %w", len(doms), err)
	}
	if len(vs) != len(doms) {
		return nil, fmt.Errorf("embed the text of %d domains: the embedder returned %d vectors", len(doms), len(vs))
	}
	d := &domainVectors{ix: pl.ix, emb: info, cat: pl.cat, vec: make(map[string][]float32, len(doms))}
	for i, dom := range doms {
		d.vec[dom.Name] = unit(vs[i]) // feedback.go
	}
	e.domVec.Store(d)
	return d, nil
}

// domainVectorWeight returns the weight of the domain vectors in pl's
// semantic list: p.DomainVector when set, else the value fitted for the
// embedder's kind (DefaultDomainVector); 0 when off, when the request is
// confined to a domain or when the catalog has one domain (a shift of
// every tool alike ranks nothing).
func domainVectorWeight(pl plan) float64 {
	if pl.req.Domain != "" || pl.cat == nil || len(pl.cat.Domains()) < 2 || pl.emb == nil {
		return 0
	}
	switch w := pl.p.DomainVector; {
	case w == Off:
		return 0
	case w > 0:
		return w
	}
	return DefaultDomainVector(pl.emb.Info().Provider)
}

// DefaultDomainVector is the shipped weight of the domain vectors for an
// embedder's provider ("builtin", "ollama"), fitted on the ten dev sets
// (docs/benchmarks/2026-12-06-ranking-server-text.md).
func DefaultDomainVector(provider string) float64 {
	if provider == "builtin" {
		return builtinDomainVector
	}
	return ollamaDomainVector
}

// The fitted domain vector weights (the built-in embedder's chosen on the
// ten dev sets and a development half of the agent-view set; Ollama's not
// fitted: off).
const (
	builtinDomainVector = 0.5
	ollamaDomainVector  = 0
)

// withDomainVector adds to each hit of l w × how much nearer the
// request's vector q is to its tool's domain vector than to the domain's
// best tool in l (max(0, domain − best): a domain whose own text says no
// more of the request than its tools do adds nothing, as domainExcess in
// keyword mode), and sorts the list again. The similarity that confidence
// and the learned fusion judge stays the tool's own (l.sim): the domain
// only moves the order, every tool of a domain by the same amount, and
// by at most w times the excess, so a described server lifts its tools
// above another server's only where its description is nearer to the
// request than any of its tools and the other server's tool leads by
// less than that.
func withDomainVector(l semanticList, cat *index.Catalog, dv *domainVectors, q []float32, w float64) semanticList {
	if len(l.hits) == 0 {
		return l
	}
	sc := dv.scratch.take(newDomainVectorScratch)
	defer sc.put(dv)
	sc.q = unitInto(q, sc.q)
	qu := sc.q
	// A domain counts for what its text is nearer to the request than
	// the best of its tools in the list (as the domain text counts
	// beyond the best keyword match, domainExcess).
	// Only the domains of the list's tools are compared with the
	// request: a map of every domain's similarity was about 220 KB of
	// each semantic and hybrid search's garbage at 100k tools in 2,500
	// domains (docs/benchmarks/2026-12-06-latency-100k.md).
	doms := sc.doms
	for _, h := range l.hits {
		if t := cat.Tool(h.ID); t != nil {
			if d, ok := doms[t.Domain]; !ok || h.Similarity > d.best {
				doms[t.Domain] = domainNearness{best: h.Similarity}
			}
		}
	}
	for name, d := range doms {
		if v := dv.vec[name]; len(v) == len(qu) {
			d.sim = dotf(qu, v)
			doms[name] = d
		}
	}
	// Each hit shifted with its own similarity beside it (the evidence
	// judged, semanticList.own, unless the sentences' map holds it),
	// sorted together: no map of the list's similarities by name.
	shifted := sc.shifted[:0]
	for _, h := range l.hits {
		own := h.Similarity
		if t := cat.Tool(h.ID); t != nil {
			d := doms[t.Domain]
			h.Similarity += float32(w) * max(0, d.sim-d.best)
		}
		shifted = append(shifted, shiftedHit{h, own})
	}
	slices.SortStableFunc(shifted, func(a, b shiftedHit) int { return bySimilarity(a.hit, b.hit) })
	out := make([]vector.Hit, len(shifted))
	var own []float32
	if l.sim == nil && l.own == nil {
		own = make([]float32, len(shifted))
	}
	for i, s := range shifted {
		out[i] = s.hit
		if own != nil {
			own[i] = s.own
		}
	}
	sc.shifted = shifted
	l.hits = out
	if own != nil {
		l.own = own
	}
	return l
}

// shiftedHit is a hit of a semantic list with its domain's shift added,
// and its similarity before.
type shiftedHit struct {
	hit vector.Hit
	own float32
}

// domainVectorScratch is withDomainVector's memory, kept between
// searches (domainVectors.scratch): the request's unit vector, the
// list's domains and its hits shifted.
type domainVectorScratch struct {
	q       []float32
	doms    map[string]domainNearness
	shifted []shiftedHit
}

func newDomainVectorScratch() *domainVectorScratch {
	return &domainVectorScratch{doms: map[string]domainNearness{}}
}

// put empties sc, keeping its memory but no names alive, and keeps it
// in dv for the next search.
func (sc *domainVectorScratch) put(dv *domainVectors) {
	clear(sc.doms)
	clear(sc.shifted)
	sc.shifted = sc.shifted[:0]
	dv.scratch.keep(sc)
}

// domainNearness is, for a domain of a semantic list, its tools' best
// similarity in the list and its domain vector's similarity to the
// request.
type domainNearness struct{ best, sim float32 }

// dotf is the dot product of two vectors of one length.
func dotf(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
