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
// wrong tool.
type Confidence struct {
	// Value estimates, from 0 to 1, the chance that the catalog holds a
	// tool for the request, judged from the first result: a logistic model
	// of its evidence, fitted on requests with and without their tools
	// in the catalog (the shipped models, below).
	Value float64 `json:"value"`
	// Low is Value < Threshold: no tool fits well enough to call it
	// without a second look.
	Low bool `json:"low"`
	// Threshold is the model's: the value under which an answer is Low,
	// chosen so that few answers whose tool is in the catalog are
	// (ConfidenceModel.Threshold).
	Threshold float64 `json:"threshold"`
	// Coverage is the first result's keyword coverage (the share of the
	// request's attainable BM25 score it reaches), Similarity its semantic
	// similarity; 0 when it is not in that list.
	Coverage   float64 `json:"coverage"`
	Similarity float64 `json:"similarity"`
}

// ConfidenceModel is a logistic model of the evidence: Value =
// 1/(1+e^-(Coverage·Coverage + Similarity·Similarity + Bias)), and an
// answer is Low when its Value is under Threshold.
type ConfidenceModel struct {
	Coverage   float64 `json:"coverage,omitempty"`
	Similarity float64 `json:"similarity,omitempty"`
	Bias       float64 `json:"bias"`
	// Threshold is chosen with the model (eval.FitConfidence): the
	// highest at which, on the datasets it was fitted on, the mean over
	// the datasets of the share of requests flagged Low although their
	// tool is in the catalog stays within a budget (10%). A zero
	// Threshold flags only answers without results.
	Threshold float64 `json:"threshold"`
}

// Value is the model's estimate for a coverage and a similarity.
func (m ConfidenceModel) Value(coverage, similarity float64) float64 {
	return 1 / (1 + math.Exp(-(m.Coverage*coverage + m.Similarity*similarity + m.Bias)))
}

// Low says whether an answer of confidence v is low under the model.
func (m ConfidenceModel) Low(v float64) bool { return v < m.Threshold }

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
		if _, ok := m.Models[string(mode)]; !ok {
			return m, fmt.Errorf("confidence models: no model for %s", mode)
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

// confidenceOf judges a response's first result, answered in mode (the
// mode used, after any fallback) with emb's vectors, by the shipped model
// for them (nil when there is none).
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

// judge is m's confidence in the first of results; an answer without
// results has confidence 0, and is low.
func judge(m ConfidenceModel, results []Result) *Confidence {
	if len(results) == 0 {
		return &Confidence{Low: true, Threshold: m.Threshold}
	}
	r := results[0]
	v := m.Value(r.coverage, r.similarity)
	return &Confidence{Value: v, Low: m.Low(v), Threshold: m.Threshold, Coverage: r.coverage, Similarity: r.similarity}
}
