package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/toolscout/toolscout/search"
)

// Grid is a grid file: runs to compare and the baseline they are compared
// against.
type Grid struct {
	// Baseline is the label (or mode) of the run the others are compared
	// with; the first run when empty.
	Baseline string    `json:"baseline" yaml:"baseline"`
	Runs     []GridRun `json:"runs" yaml:"runs"`
}

// GridRun is one run of a grid file.
type GridRun struct {
	Label          string  `json:"label" yaml:"label"`
	Mode           string  `json:"mode" yaml:"mode"`
	Fusion         string  `json:"fusion" yaml:"fusion"`
	RRFK           float64 `json:"rrf_k" yaml:"rrf_k"`
	KeywordWeight  float64 `json:"keyword_weight" yaml:"keyword_weight"`
	SemanticWeight float64 `json:"semantic_weight" yaml:"semantic_weight"`
	ExactBoost     float64 `json:"exact_boost" yaml:"exact_boost"`
	DomainBoost    float64 `json:"domain_boost" yaml:"domain_boost"`
	DomainWeight   float64 `json:"domain_weight" yaml:"domain_weight"`
	DomainText     float64 `json:"domain_text" yaml:"domain_text"`
	// DomainVector is search.Params.DomainVector.
	DomainVector float64 `json:"domain_vector" yaml:"domain_vector"`
	Fuzzy        float64 `json:"fuzzy" yaml:"fuzzy"`
	// PseudoFeedback is search.Params.PseudoFeedback.
	PseudoFeedback float64 `json:"pseudo_feedback" yaml:"pseudo_feedback"`
	// DomainFeedback is search.Params.DomainFeedback.
	DomainFeedback float64            `json:"domain_feedback" yaml:"domain_feedback"`
	Candidates     int                `json:"candidates" yaml:"candidates"`
	Fields         map[string]float64 `json:"fields" yaml:"fields"`
	KeywordScoring string             `json:"keyword_scoring" yaml:"keyword_scoring"`
	StepDepth      int                `json:"step_depth" yaml:"step_depth"`
	StepWeight     float64            `json:"step_weight" yaml:"step_weight"`
	// FusionModel gives a learned fusion this model (the JSON shape
	// cmd/fusionfit prints).
	FusionModel *search.FusionModel `json:"fusion_model" yaml:"fusion_model"`
	// KeywordFullCoverage is search.Params.KeywordFullCoverage.
	KeywordFullCoverage float64 `json:"keyword_full_coverage" yaml:"keyword_full_coverage"`
	// SentenceShare and ScaledSentences are search.Params'.
	SentenceShare   float64 `json:"sentence_share" yaml:"sentence_share"`
	ScaledSentences int     `json:"scaled_sentences" yaml:"scaled_sentences"`
	// Embedder is "builtin", "ollama", or a research variant of the built-in
	// embedder: "builtin-hashed" (no learned vectors), "builtin-nolexicon"
	// (no hand-written lexicon). Empty: the command's --embedder.
	// Model names the Ollama model.
	Embedder string `json:"embedder" yaml:"embedder"`
	Model    string `json:"model" yaml:"model"`
}

// LoadGrid reads a grid file, JSON or YAML by extension (.yaml, .yml).
func LoadGrid(path string) (*Grid, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("grid: %w", err)
	}
	var g Grid
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&g); err != nil {
			return nil, fmt.Errorf("grid %s: %w", path, err)
		}
	default:
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&g); err != nil {
			return nil, fmt.Errorf("grid %s: %w", path, err)
		}
	}
	if len(g.Runs) == 0 {
		return nil, fmt.Errorf("grid %s: no runs", path)
	}
	labels := map[string]bool{}
	for i, r := range g.Runs {
		if _, err := search.ParseMode(r.Mode); (err != nil || r.Mode == "") && r.Mode != string(BM25) {
			return nil, fmt.Errorf("grid %s: runs[%d].mode %q: use bm25, keyword, semantic or hybrid", path, i, r.Mode)
		}
		switch r.Embedder {
		case "", "builtin", "builtin-hashed", "builtin-nolexicon", "ollama":
		default:
			return nil, fmt.Errorf("grid %s: runs[%d].embedder %q: use builtin, builtin-hashed, builtin-nolexicon or ollama", path, i, r.Embedder)
		}
		if err := r.Spec().Params.Check(); err != nil {
			return nil, fmt.Errorf("grid %s: runs[%d].%w", path, i, err)
		}
		if r.Label == "" {
			g.Runs[i].Label = fmt.Sprintf("%s#%d", r.Mode, i+1)
		}
		if labels[g.Runs[i].Label] {
			return nil, fmt.Errorf("grid %s: runs[%d].label %q is used twice", path, i, g.Runs[i].Label)
		}
		labels[g.Runs[i].Label] = true
	}
	if g.Baseline != "" && !labels[g.Baseline] {
		return nil, fmt.Errorf("grid %s: baseline %q is not the label of a run", path, g.Baseline)
	}
	return &g, nil
}

// EmbedderKey is the key of a grid run's embedder in Options.Embedders.
func (r GridRun) EmbedderKey() string {
	switch r.Embedder {
	case "":
		return ""
	case "ollama":
		return "ollama:" + r.Model
	}
	return r.Embedder
}

// Spec turns the grid run into a RunSpec.
func (r GridRun) Spec() RunSpec {
	return RunSpec{
		Label:    r.Label,
		Mode:     search.Mode(r.Mode),
		Embedder: r.EmbedderKey(),
		Params: search.Params{
			Fusion: r.Fusion, RRFK: r.RRFK, KeywordWeight: r.KeywordWeight, SemanticWeight: r.SemanticWeight,
			ExactBoost: r.ExactBoost, DomainBoost: r.DomainBoost, DomainWeight: r.DomainWeight, DomainText: r.DomainText, DomainVector: r.DomainVector, PseudoFeedback: r.PseudoFeedback, DomainFeedback: r.DomainFeedback, Fuzzy: r.Fuzzy, Candidates: r.Candidates, Fields: r.Fields, KeywordScoring: r.KeywordScoring, StepDepth: r.StepDepth, StepWeight: r.StepWeight, KeywordFullCoverage: r.KeywordFullCoverage,
			SentenceShare: r.SentenceShare, ScaledSentences: r.ScaledSentences, FusionModel: r.FusionModel,
		},
	}
}
