package search

import (
	"context"
	"math"
	"slices"

	"github.com/toolscout/toolscout/index/vector"
)

// pseudoFeedbackDepth is how many of the semantic list's first tools
// stand for what the request is about in pseudo-relevance feedback.
const pseudoFeedbackDepth = 3

// withPseudoFeedback re-orders the semantic list l by Rocchio's
// pseudo-relevance feedback: the request's vector q moves towards the
// centroid of the list's first pseudoFeedbackDepth tools by weight w
// (q/|q| + w × centroid), and each tool of the list is scored by its
// similarity to the moved vector (for a request of several sentences, its
// score adds w × its similarity to the centroid, over the same norm). A short everyday request ("what do you
// remember about me?") is near the right server's tools but orders them
// by chance; the centroid adds what those tools share. It re-scores the
// list within its depth (no second scan); the similarity that confidence
// and the learned fusion's similarity evidence read stays the tool's own
// to the request (l.sim), as with the domain vectors.
func (e *Engine) withPseudoFeedback(ctx context.Context, pl plan, l semanticList, q []float32, w float64) (semanticList, error) {
	if w <= 0 || len(l.hits) < 2 || len(q) == 0 {
		return l, nil
	}
	col := collectionOf(pl.emb, len(q))
	top := make([]string, 0, pseudoFeedbackDepth)
	for _, h := range l.hits[:min(pseudoFeedbackDepth, len(l.hits))] {
		top = append(top, h.ID)
	}
	c, err := pl.ix.vs.Centroid(ctx, col, top)
	if err != nil || len(c) != len(q) {
		return l, err
	}
	return e.movedTowards(ctx, pl, l, q, c, w)
}

// withDomainFeedback is pseudo-relevance feedback on the domain level:
// the request's vector moves by weight w towards the domain vector (the
// embedding of the domain's name, description and what the server says
// of itself: domainvector.go) of the semantic list's first tool, and the
// list is ordered again by the moved vector (movedTowards). Off in the
// cases the domain vectors are (a request confined to a domain, a
// catalog of one domain).
func (e *Engine) withDomainFeedback(ctx context.Context, pl plan, l semanticList, q []float32, w float64) (semanticList, error) {
	if w <= 0 || len(l.hits) < 2 || len(q) == 0 || pl.req.Domain != "" || pl.cat == nil || len(pl.cat.Domains()) < 2 {
		return l, nil
	}
	t := pl.cat.Tool(l.hits[0].ID)
	if t == nil {
		return l, nil
	}
	dv, err := e.domainVectorsOf(ctx, pl)
	if err != nil {
		return l, err
	}
	c := dv.vec[t.Domain]
	if len(c) != len(q) {
		return l, nil
	}
	return e.movedTowards(ctx, pl, l, q, c, w)
}

// movedTowards orders l again by each tool's similarity to q/|q| + w·c
// (c of unit length).
func (e *Engine) movedTowards(ctx context.Context, pl plan, l semanticList, q, c []float32, w float64) (semanticList, error) {
	col := collectionOf(pl.emb, len(q))
	ids := make([]string, len(l.hits))
	for i, h := range l.hits {
		ids[i] = h.ID
	}
	// cos(q + w·c, t) = (cos(q, t) + w·cos(c, t)) / |q/|q| + w·c|: the
	// feedback adds to each tool's score, so that a request of several
	// sentences keeps its per-sentence scores (semanticTools) and a
	// request of one is ranked by Rocchio's moved vector exactly.
	toC, err := pl.ix.vs.Similarities(ctx, col, c, ids)
	if err != nil {
		return l, err
	}
	qc := float64(dotf(unit(q), c))
	norm := float32(math.Sqrt(1 + 2*w*qc + w*w))
	if l.sim == nil {
		l.sim = make(map[string]float32, len(l.hits))
		for _, h := range l.hits {
			l.sim[h.ID] = h.Similarity
		}
	}
	out := make([]vector.Hit, len(l.hits))
	for i, h := range l.hits {
		out[i] = h
		out[i].Similarity = (h.Similarity + float32(w)*toC[i]) / norm
	}
	slices.SortStableFunc(out, bySimilarity)
	l.hits = out
	return l, nil
}
