package search

import (
	"fmt"

	"github.com/toolscout/toolscout/index"
)

// Params are the ranking parameters.
//
// Presence is explicit in one way for every field: zero means the field's
// default (DefaultParams), and Off turns off the feature of ExactBoost,
// DomainBoost, DomainWeight and Fuzzy. Other negative values are errors
// (Check); grid files follow the same rule.
type Params struct {
	// RRFK is the k of Reciprocal Rank Fusion: 1/(k+rank).
	RRFK float64 `json:"rrf_k,omitempty"`
	// KeywordWeight and SemanticWeight weight the two lists in the fusion.
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
	// domain's rank.
	DomainWeight float64 `json:"domain_weight,omitempty"`
	// Fuzzy is the boost of edit-distance-1 matches in keyword mode.
	// Hybrid ranking does not use them.
	Fuzzy float64 `json:"fuzzy,omitempty"`
	// Fusion is how hybrid mode fuses the two lists: "rrf" (weighted
	// Reciprocal Rank Fusion, the default) or "convex" (min-max normalised
	// scores, weighted by KeywordWeight and SemanticWeight).
	Fusion string `json:"fusion,omitempty"`
	// Fields are the keyword index's field boosts.
	Fields index.FieldWeights `json:"fields,omitempty"`
}

// Off, as the value of ExactBoost, DomainBoost, DomainWeight or Fuzzy,
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
		{"candidates", float64(p.Candidates), false},
		{"exact_boost", p.ExactBoost, true}, {"domain_boost", p.DomainBoost, true}, {"domain_weight", p.DomainWeight, true}, {"fuzzy", p.Fuzzy, true},
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
	switch p.Fusion {
	case "", FusionRRF, FusionConvex:
	default:
		return fmt.Errorf("fusion %q: use %s or %s", p.Fusion, FusionRRF, FusionConvex)
	}
	return nil
}

// DefaultParams returns the shipped parameters, chosen by the grid run in
// BENCHMARKS.md.
func DefaultParams() Params {
	return Params{
		RRFK:           10,
		KeywordWeight:  1,
		SemanticWeight: 1.5,
		Candidates:     50,
		ExactBoost:     1,
		DomainBoost:    0.02,
		DomainWeight:   0.5,
		Fuzzy:          0.2,
		Fusion:         FusionRRF,
		Fields:         index.DefaultFieldWeights(),
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
	if p.Fusion == "" {
		p.Fusion = d.Fusion
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

// The fusion methods of hybrid mode.
const (
	FusionRRF    = "rrf"
	FusionConvex = "convex"
)
