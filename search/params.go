package search

import (
	"fmt"

	"github.com/toolscout/toolscout/index/keyword"
)

// Params are the ranking parameters.
//
// Presence is explicit in one way for every field: zero means the field's
// default (DefaultParams), and Off turns off the feature of ExactBoost,
// DomainBoost, DomainWeight, DomainVector, Fuzzy, KeywordFullCoverage and
// StepDepth.
// Other negative values are errors (Check); grid files follow the same
// rule.
type Params struct {
	// RRFK is the k of Reciprocal Rank Fusion: 1/(k+rank).
	RRFK float64 `json:"rrf_k,omitempty"`
	// KeywordWeight and SemanticWeight weight the two lists in the convex
	// and rrf fusions (the learned fusion's weights are its model's).
	KeywordWeight  float64 `json:"keyword_weight,omitempty"`
	SemanticWeight float64 `json:"semantic_weight,omitempty"`
	// Candidates is how deep each list is read before fusion.
	Candidates int `json:"candidates,omitempty"`
	// ExactBoost is added to the fused score of a tool the query names
	// exactly (its name or qualified name).
	ExactBoost float64 `json:"exact_boost,omitempty"`
	// DomainBoost is added to the fused score of the tools of a domain the
	// query names ("reopen gitlab issue 14").
	DomainBoost float64 `json:"domain_boost,omitempty"`
	// DomainWeight is the weight, in hybrid mode, of the domain ranking: the
	// domains ranked by the similarity of the query to the centroid of each
	// domain's tool vectors, a third RRF list in which a tool takes its
	// domain's rank (convex and rrf; the learned fusion weighs the
	// domain's rank by its model; Off turns the ranking off in all).
	DomainWeight float64 `json:"domain_weight,omitempty"`
	// DomainText weighs, in keyword mode, how much of the request a
	// tool's domain covers as a whole (its name, description, and its
	// tools' names and summaries: domaintext.go), in units of the keyword
	// list's best score; the learned fusion weighs the same coverage by
	// its model. Off turns the domain text off in every mode.
	DomainText float64 `json:"domain_text,omitempty"`
	// DomainVector weighs, in the semantic list (semantic mode and
	// hybrid's), how much nearer the request is to an embedding of the
	// tool's domain's own text (its name, description and what the
	// server says of itself) than to the domain's best tool in the list,
	// added to the tool's similarity (domainvector.go). Zero: the value
	// fitted for the embedder's kind (DefaultDomainVector); Off turns it
	// off.
	DomainVector float64 `json:"domain_vector,omitempty"`
	// PseudoFeedback is the weight of Rocchio's pseudo-relevance
	// feedback in the semantic list (semantic mode and hybrid's): the
	// request's vector moves by this weight towards the centroid of the
	// list's first three tools and the list is ordered again by the
	// moved vector (pseudofeedback.go). Zero: off (measured, not
	// shipped: docs/benchmarks/2026-12-06-agent-view-2.md).
	PseudoFeedback float64 `json:"pseudo_feedback,omitempty"`
	// DomainFeedback is the weight of pseudo-relevance feedback on the
	// domain level: the request's vector moves by this weight towards
	// the domain vector of the semantic list's first tool
	// (pseudofeedback.go). Zero: off (measured, not shipped).
	DomainFeedback float64 `json:"domain_feedback,omitempty"`
	// Fuzzy is the boost of edit-distance-1 matches in keyword mode.
	// Hybrid ranking does not use them.
	Fuzzy float64 `json:"fuzzy,omitempty"`
	// Fusion is how hybrid mode fuses the two lists: "learned" (the
	// default: a fitted linear model of each tool's evidence whose weights
	// follow the request, FusionModel, learned.go), "convex" (min-max
	// normalised scores, weighted by KeywordWeight and SemanticWeight) or
	// "rrf" (weighted Reciprocal Rank Fusion). Rank fusion
	// gives a list's first tool full credit however weak its match;
	// normalised scores keep a near tie a near tie.
	Fusion string `json:"fusion,omitempty"`
	// KeywordFullCoverage is, in convex fusion, the coverage of the keyword
	// list's best match (keyword.Hit.Coverage) from which that list
	// counts in full; below it, its weight shrinks in proportion
	// (keywordStrength). Off: always in full.
	KeywordFullCoverage float64 `json:"keyword_full_coverage,omitempty"`
	// StepDepth, when > 0, is how many of each step's best tools lead the
	// answer to a request of several steps (steps.go); 0 only labels the
	// whole request's ranking with the steps; Off ranks such a request
	// whole only, without steps.
	StepDepth int `json:"step_depth,omitempty"`
	// StepWeight, when > 0, fuses the steps' rankings with the whole
	// request's by RRF instead, each step weighing StepWeight against
	// the whole's 1.
	StepWeight float64 `json:"step_weight,omitempty"`
	// SentenceShare is, in a request of ScaledSentences sentences or
	// more, the weight of a tool's best scaled sentence similarity in its
	// semantic score (each sentence's similarities divided by its best
	// match's; the whole request's similarity has the rest). Off: such a
	// request ranks as one of two sentences does, by the mean of the
	// tool's similarity to the whole and to its best sentence.
	SentenceShare float64 `json:"sentence_share,omitempty"`
	// ScaledSentences is the fewest sentences of a request whose sentences
	// are scaled (SentenceShare).
	ScaledSentences int `json:"scaled_sentences,omitempty"`
	// KeywordScoring is how keyword scores are summed: "bm25" (the
	// default: field weight × BM25, summed over terms and fields), or
	// with Bleve's own additions, for measurement: "coord" (each sum times
	// the share of its clauses matched), "idf2" (each term weighted by its
	// IDF once more), "bleve-lengths" (Bleve's estimate of the fields'
	// average lengths) or "bleve" (all three, as Bleve's match queries
	// score).
	KeywordScoring string `json:"keyword_scoring,omitempty"`
	// FusionModel is the learned fusion's model (learned.go); nil: the
	// shipped model of the embedder's kind.
	FusionModel *FusionModel `json:"fusion_model,omitempty"`
	// Fields are the keyword index's field boosts.
	Fields keyword.FieldWeights `json:"fields,omitempty"`
}

// Off, as the value of ExactBoost, DomainBoost, DomainWeight, DomainText,
// DomainVector, Fuzzy, KeywordFullCoverage, StepDepth or SentenceShare,
// turns that feature off.
const Off = -1.0

// Check reports a parameter out of range: a negative value other than
// Off, or Off where it means nothing.
func (p Params) Check() error {
	for _, f := range []struct {
		name string
		v    float64
		off  bool
	}{
		{"rrf_k", p.RRFK, false}, {"keyword_weight", p.KeywordWeight, false}, {"semantic_weight", p.SemanticWeight, false},
		{"candidates", float64(p.Candidates), false}, {"step_depth", float64(p.StepDepth), true},
		{"step_weight", p.StepWeight, false}, {"sentence_share", p.SentenceShare, true},
		{"scaled_sentences", float64(p.ScaledSentences), false},
		{"keyword_full_coverage", p.KeywordFullCoverage, true},
		{"exact_boost", p.ExactBoost, true}, {"domain_boost", p.DomainBoost, true}, {"domain_weight", p.DomainWeight, true}, {"domain_text", p.DomainText, true}, {"domain_vector", p.DomainVector, true}, {"pseudo_feedback", p.PseudoFeedback, false}, {"domain_feedback", p.DomainFeedback, false}, {"fuzzy", p.Fuzzy, true},
	} {
		switch {
		case f.v >= 0:
		case f.off && f.v == Off:
		case f.off:
			return fmt.Errorf("%s %g: use a value ≥ 0, or %g to turn it off", f.name, f.v, Off)
		default:
			return fmt.Errorf("%s %g: use a value ≥ 0 (0: the default)", f.name, f.v)
		}
	}
	if err := p.Fields.Check(); err != nil {
		return fmt.Errorf("fields: %w", err)
	}
	if p.DomainText >= 1 {
		return fmt.Errorf("domain_text %g: use a value below 1 (a tool the request's words do not match must stay below the best keyword match), or %g to turn it off", p.DomainText, Off)
	}
	if p.SentenceShare > 1 {
		return fmt.Errorf("sentence_share %g: use a value from 0 to 1, or %g to turn it off", p.SentenceShare, Off)
	}
	switch p.Fusion {
	case "", FusionRRF, FusionConvex, FusionLearned:
	default:
		return fmt.Errorf("fusion %q: use %s, %s or %s", p.Fusion, FusionLearned, FusionConvex, FusionRRF)
	}
	if _, ok := keywordScorings[p.KeywordScoring]; !ok && p.KeywordScoring != "" {
		return fmt.Errorf("keyword_scoring %q: use bm25, coord, idf2, bleve-lengths or bleve", p.KeywordScoring)
	}
	return nil
}

// DefaultParams returns the shipped parameters, chosen by the grid run in
// BENCHMARKS.md.
func DefaultParams() Params {
	return Params{
		RRFK:                10,
		KeywordWeight:       1.5,
		SemanticWeight:      1,
		KeywordFullCoverage: 0.2,
		Candidates:          50,
		ExactBoost:          1,
		DomainBoost:         0.02,
		DomainWeight:        0.5,
		DomainText:          0.25,
		Fuzzy:               0.2,
		Fusion:              FusionLearned,
		SentenceShare:       0.95,
		ScaledSentences:     3,
		KeywordScoring:      "bm25",
		Fields:              keyword.DefaultFieldWeights(),
	}
}

// withDefaults fills zero fields from DefaultParams and turns Off into 0.
// Params are checked (Check) where they come in: grid files and Options.
func (p Params) withDefaults() Params {
	d := DefaultParams()
	if p.RRFK <= 0 {
		p.RRFK = d.RRFK
	}
	if p.KeywordWeight == 0 && p.SemanticWeight == 0 {
		p.KeywordWeight, p.SemanticWeight = d.KeywordWeight, d.SemanticWeight
	}
	if p.Candidates <= 0 {
		p.Candidates = d.Candidates
	}
	if p.ExactBoost == 0 {
		p.ExactBoost = d.ExactBoost
	}
	if p.Fuzzy == 0 {
		p.Fuzzy = d.Fuzzy
	}
	if p.Fuzzy == Off {
		p.Fuzzy = 0
	}
	if p.ExactBoost == Off {
		p.ExactBoost = 0
	}
	if p.DomainBoost == 0 {
		p.DomainBoost = d.DomainBoost
	}
	if p.DomainBoost == Off {
		p.DomainBoost = 0
	}
	if p.DomainWeight == 0 {
		p.DomainWeight = d.DomainWeight
	}
	if p.DomainWeight == Off {
		p.DomainWeight = 0
	}
	if p.DomainText == 0 {
		p.DomainText = d.DomainText
	}
	if p.DomainText == Off {
		p.DomainText = 0
	}
	if p.Fusion == "" {
		p.Fusion = d.Fusion
	}
	if p.KeywordFullCoverage == 0 {
		p.KeywordFullCoverage = d.KeywordFullCoverage
	}
	if p.KeywordFullCoverage == Off {
		p.KeywordFullCoverage = 0
	}
	if p.SentenceShare == 0 {
		p.SentenceShare = d.SentenceShare
	}
	if p.SentenceShare == Off {
		p.SentenceShare = 0
	}
	if p.ScaledSentences <= 0 {
		p.ScaledSentences = d.ScaledSentences
	}
	if p.KeywordScoring == "" {
		p.KeywordScoring = d.KeywordScoring
	}
	if p.Fields == nil {
		p.Fields = d.Fields
	} else {
		merged := d.Fields
		for k, v := range p.Fields {
			merged[k] = v
		}
		p.Fields = merged
	}
	return p
}

// keywordScorings maps KeywordScoring's values to the index's options.
var keywordScorings = map[string]keyword.Scoring{
	"bm25":          {},
	"coord":         {Coord: true},
	"idf2":          {IDFWeight: true},
	"bleve-lengths": {BleveLengths: true},
	"bleve":         {Coord: true, IDFWeight: true, BleveLengths: true},
}

// scoring returns the index's scoring options of p.KeywordScoring.
func (p Params) scoring() keyword.Scoring { return keywordScorings[p.KeywordScoring] }

// The fusion methods of hybrid mode.
const (
	FusionRRF    = "rrf"
	FusionConvex = "convex"
)
