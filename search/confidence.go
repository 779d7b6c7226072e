package search

import (
	"math"

	"github.com/toolscout/toolscout/embed"
)

// Confidence says how well a response's first result fits its request,
// so that an agent can stop searching instead of calling a plausible
// wrong tool.
type Confidence struct {
	// Value estimates, from 0 to 1, the chance that the catalog holds a
	// tool for the request, judged from the first result: a logistic model
	// of its evidence, fitted on requests with and without their tools
	// in the catalog (the shipped models, below).
	Value float64 `json:"value"`
	// Low is Value < 0.5: more likely than not, no tool fits well.
	Low bool `json:"low"`
	// Coverage is the first result's keyword coverage (the share of the
	// request's attainable BM25 score it reaches), Similarity its semantic
	// similarity; 0 when it is not in that list.
	Coverage   float64 `json:"coverage"`
	Similarity float64 `json:"similarity"`
}

// ConfidenceModel is a logistic model of the evidence: Value =
// 1/(1+e^-(Coverage·Coverage + Similarity·Similarity + Bias)).
type ConfidenceModel struct {
	Coverage   float64 `json:"coverage,omitempty"`
	Similarity float64 `json:"similarity,omitempty"`
	Bias       float64 `json:"bias"`
}

// Value is the model's estimate for a coverage and a similarity.
func (m ConfidenceModel) Value(coverage, similarity float64) float64 {
	return 1 / (1 + math.Exp(-(m.Coverage*coverage + m.Similarity*similarity + m.Bias)))
}

// The shipped confidence models, by the evidence they use.
// Similarities are on the scale of the built-in embedder, so a model with
// a similarity term serves only that embedder; with another, hybrid
// answers are judged by keyword coverage alone and semantic ones not at
// all. Fitted by `toolscout eval --confidence-fit` on sealtools-dev and
// metatool-dev, each query with and without its relevant tools
// (BENCHMARKS.md, Ranking v7).
const (
	// bothCoverage, bothSimilarity and bothBias judge a hybrid answer of
	// the built-in embedder.
	bothCoverage, bothSimilarity, bothBias = 2.6872, 2.8213, -1.8305
	// keywordCoverage and keywordBias judge keyword answers, and hybrid
	// answers of other embedders, by coverage.
	keywordCoverage, keywordBias = 4.4489, -0.8127
	// semanticSimilarity and semanticBias judge semantic answers of the
	// built-in embedder.
	semanticSimilarity, semanticBias = 4.1683, -2.0653
)

// The models of those coefficients.
var (
	bothModel     = ConfidenceModel{Coverage: bothCoverage, Similarity: bothSimilarity, Bias: bothBias}
	keywordModel  = ConfidenceModel{Coverage: keywordCoverage, Bias: keywordBias}
	semanticModel = ConfidenceModel{Similarity: semanticSimilarity, Bias: semanticBias}
)

// confidenceOf judges a response's first result, answered in mode (the
// mode used, after any fallback) with emb's vectors; an answer without
// results has confidence 0.
func confidenceOf(mode Mode, emb embed.Embedder, results []Result) *Confidence {
	builtin := emb != nil && emb.Info().Provider == "builtin"
	var m ConfidenceModel
	switch {
	case mode == Keyword || mode == Hybrid && !builtin:
		m = keywordModel
	case mode == Hybrid:
		m = bothModel
	case mode == Semantic && builtin:
		m = semanticModel
	default:
		return nil
	}
	if len(results) == 0 {
		return &Confidence{Low: true}
	}
	r := results[0]
	v := m.Value(r.coverage, r.similarity)
	return &Confidence{Value: v, Low: v < 0.5, Coverage: r.coverage, Similarity: r.similarity}
}
