package search

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"

	"github.com/toolscout/toolscout/embed"
)

// Confidence says how well a response's first result fits its request,
// so that an agent can stop searching instead of calling a plausible
// wrong tool. Each result has its own (Result.Confidence), on the same
// scale.
type Confidence struct {
	// Value is the first result's Result.Confidence: the estimated
	// chance, from 0 to 1, that it is a tool the request needs.
	Value float64 `json:"value"`
	// Answerable is the estimated chance that the catalog holds a tool
	// for the request, judged from the first result
	// (ConfidenceModel.Answerable): no result's Confidence is above it.
	Answerable float64 `json:"answerable"`
	// Low is Answerable < Threshold: no tool fits well enough to call
	// it without a second look (and no result's Value reaches
	// Threshold).
	Low bool `json:"low"`
	// Threshold is the model's: the Answerable under which an answer is Low,
	// chosen so that few answers whose tool is in the catalog are
	// (ConfidenceModel.Threshold).
	Threshold float64 `json:"threshold"`
	// Coverage is the first result's keyword coverage (the share of the
	// request's attainable BM25 score it reaches), Similarity its semantic
	// similarity; 0 when it is not in that list.
	Coverage   float64 `json:"coverage"`
	Similarity float64 `json:"similarity"`
}

// ConfidenceModel judges the results of an answer. The chance that the
// result at rank r (from 1) is a tool the request needs is the chance
// that the catalog holds one, judged from the first result's evidence,
// times the chance that it is this result if the catalog holds one
// (Result): ValueAt. The first factor is a logistic model, 1/(1+e^-(
// Coverage·coverage + Similarity·similarity + Bias)) of the first
// result's evidence, fitted on requests with and without their tools in
// the catalog (Answerable). An answer is Low when that chance is under
// Threshold: then no result's confidence reaches it either.
type ConfidenceModel struct {
	Coverage   float64 `json:"coverage,omitempty"`
	Similarity float64 `json:"similarity,omitempty"`
	Bias       float64 `json:"bias"`
	// Result is the chance that a result is a tool the request needs
	// when the catalog holds one.
	Result ResultModel `json:"result"`
	// Threshold is chosen with the model (eval.FitConfidence): the
	// highest Answerable at which, on the datasets it was fitted on, the
	// mean over the datasets of the share of requests flagged Low
	// although their tool is in the catalog stays within a budget (10%).
	// A zero Threshold flags only answers without results.
	Threshold float64 `json:"threshold"`
}

// ResultModel is a logistic model of a result's evidence, fitted on
// requests whose tools are in the catalog: the chance that the result
// at rank r is one of them is 1/(1+e^-z), z = Coverage·coverage +
// Similarity·similarity + CoverageGap·(first's coverage − coverage) +
// SimilarityGap·(first's similarity − similarity) + Rank·ln r + Bias.
// The gaps and the rank say how far the result falls behind the first:
// a close second keeps much of the first's chance, a result far behind
// it little.
type ResultModel struct {
	Coverage      float64 `json:"coverage,omitempty"`
	Similarity    float64 `json:"similarity,omitempty"`
	CoverageGap   float64 `json:"coverage_gap,omitempty"`
	SimilarityGap float64 `json:"similarity_gap,omitempty"`
	Rank          float64 `json:"rank,omitempty"`
	Bias          float64 `json:"bias"`
}

// Value is the model's confidence in a first result of a coverage and a
// similarity.
func (m ConfidenceModel) Value(coverage, similarity float64) float64 {
	e := Evidence{Coverage: coverage, Similarity: similarity}
	return m.ValueAt(1, e, e)
}

// Answerable is the chance that the catalog holds a tool for a request
// whose first result has evidence first.
func (m ConfidenceModel) Answerable(first Evidence) float64 {
	return logistic(m.Coverage*first.Coverage + m.Similarity*first.Similarity + m.Bias)
}

// ValueAt is the model's confidence in the result at rank (from 1) of
// evidence e in an answer whose first result has evidence first.
func (m ConfidenceModel) ValueAt(rank int, e, first Evidence) float64 {
	return m.Answerable(first) * m.Result.Value(rank, e, first)
}

// Value is the chance that the result at rank of evidence e is a tool
// the request needs, when the catalog holds one and the first result
// has evidence first.
func (m ResultModel) Value(rank int, e, first Evidence) float64 {
	return logistic(m.Coverage*e.Coverage + m.Similarity*e.Similarity +
		m.CoverageGap*(first.Coverage-e.Coverage) + m.SimilarityGap*(first.Similarity-e.Similarity) +
		m.Rank*math.Log(float64(max(rank, 1))) + m.Bias)
}

func logistic(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// Evidence is what a result's confidence is judged from: its keyword
// coverage (the share of the request's attainable BM25 score it
// reaches) and its semantic similarity, 0 when it is not in that list.
type Evidence struct {
	Coverage   float64 `json:"coverage"`
	Similarity float64 `json:"similarity"`
}

// Evidence returns r's evidence.
func (r Result) Evidence() Evidence {
	return Evidence{Coverage: r.coverage, Similarity: r.similarity}
}

// Low says whether an answer whose catalog holds a tool for it with
// chance answerable (Answerable) is low under the model.
func (m ConfidenceModel) Low(answerable float64) bool { return answerable < m.Threshold }

// ConfidenceModels is the file of record of the shipped models
// (confidence_models.json), keyed by mode: "keyword" judges keyword
// answers, and hybrid answers of embedders other than the built-in one,
// by coverage alone; "hybrid" and "semantic" judge the built-in
// embedder's answers (its similarities are on its own scale, so these
// serve it only; semantic answers of other embedders have no
// confidence). `toolscout eval --confidence-fit --confidence-models
// FILE` writes it.
type ConfidenceModels struct {
	// Datasets are the datasets the models were fitted on.
	Datasets []string `json:"datasets"`
	// MaxFlagged is the budget the thresholds were chosen for: the mean
	// over Datasets of the share of answerable requests flagged Low.
	MaxFlagged float64                    `json:"max_flagged"`
	Models     map[string]ConfidenceModel `json:"models"`
}

// confidenceModelsFile is the shipped ConfidenceModels.
//
//go:embed confidence_models.json
var confidenceModelsFile []byte

// ShippedConfidenceModels returns the models that judge answers
// (confidence_models.json).
func ShippedConfidenceModels() ConfidenceModels {
	m, err := parseConfidenceModels(confidenceModelsFile)
	if err != nil {
		panic(err) // TestShippedConfidenceModels keeps this from shipping
	}
	return m
}

// parseConfidenceModels reads a ConfidenceModels file: it must have a
// model for each mode.
func parseConfidenceModels(data []byte) (ConfidenceModels, error) {
	var m ConfidenceModels
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("confidence models: %w", err)
	}
	for _, mode := range Modes {
		mm, ok := m.Models[string(mode)]
		if !ok {
			return m, fmt.Errorf("confidence models: no model for %s", mode)
		}
		if mm.Result == (ResultModel{}) {
			return m, fmt.Errorf("confidence models: the %s model has no result model (refit with toolscout eval --confidence-fit --confidence-models)", mode)
		}
	}
	return m, nil
}

// The shipped models, by the evidence they use.
var (
	shippedModels = ShippedConfidenceModels().Models
	bothModel     = shippedModels[string(Hybrid)]
	keywordModel  = shippedModels[string(Keyword)]
	semanticModel = shippedModels[string(Semantic)]
)

// confidenceOf judges a response's results, answered in mode (the mode
// used, after any fallback) with emb's vectors, by the shipped model for
// them: it sets each result's Confidence and returns the answer's (nil,
// and no result's, when there is no model).
func confidenceOf(mode Mode, emb embed.Embedder, results []Result) *Confidence {
	builtin := emb != nil && emb.Info().Provider == "builtin"
	switch {
	case mode == Keyword || mode == Hybrid && !builtin:
		return judge(keywordModel, results)
	case mode == Hybrid:
		return judge(bothModel, results)
	case mode == Semantic && builtin:
		return judge(semanticModel, results)
	}
	return nil
}

// judge sets the Confidence of each of results by m, each at most the
// one before it (the ranking put it there), and returns the answer's:
// the first result's, low when the chance that the catalog holds a tool
// is under m's threshold (then so is every result's confidence, which
// that chance bounds); an answer without results has confidence 0, and
// is low.
func judge(m ConfidenceModel, results []Result) *Confidence {
	if len(results) == 0 {
		return &Confidence{Low: true, Threshold: m.Threshold}
	}
	first := results[0].Evidence()
	for i := range results {
		v := m.ValueAt(i+1, results[i].Evidence(), first)
		if i > 0 {
			v = min(v, results[i-1].Confidence)
		}
		results[i].Confidence = v
	}
	a := m.Answerable(first)
	return &Confidence{Value: results[0].Confidence, Answerable: a, Low: m.Low(a), Threshold: m.Threshold, Coverage: first.Coverage, Similarity: first.Similarity}
}
