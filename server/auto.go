package server

import (
	"encoding/json"
	"log/slog"

	"github.com/tiktoken-go/tokenizer"

	"github.com/toolscout/toolscout/index"
)

// Auto mode lists every tool directly, as eager mode does, while their
// entries in tools/list cost fewer tokens than a budget, and only the
// meta-tools above it: a small catalog costs the client little and
// saves it a round of discovery, a large one would crowd its context.
// Claude Code defers MCP tools the same way once their definitions pass
// a share of the context. The decision is made again whenever the
// catalog changes.

// ExposeAuto lists every tool, as eager does, while their listing costs
// fewer tokens than Exposure.Budget, and none above it.
const ExposeAuto Mode = "auto"

var autoPolicy = modePolicy{mode: ExposeAuto, lists: listsWithinBudget, gated: true, workflow: listedWorkflow}

// listsWithinBudget lists every tool the caller may see when their
// listing fits the budget, none when it does not.
func listsWithinBudget(in listInput, _ *index.Tool) bool {
	if in.fits == nil {
		return in.expose.fits(in.cat)
	}
	return in.fits(in.cat)
}

// fits reports whether cat's listing, as x lists it, costs fewer tokens
// than x's budget.
func (x Exposure) fits(cat *index.Catalog) bool {
	_, under := listingCostAs(cat, x.budget(), x.listing())
	return under
}

// DefaultAutoBudget is auto mode's token budget when none is given: 5%
// of a 200k-token context.
const DefaultAutoBudget = 10000

// autoDecision is auto mode's decision for one catalog.
type autoDecision struct {
	cat   *index.Catalog
	eager bool
	cost  int // tokens counted: the whole listing's when eager
}

// listingCost counts, with o200k_base, the tokens of cat's enabled tools
// as eager mode lists them (the JSON of each tools/list entry), stopping
// once the count reaches limit. It reports the count and whether the
// listing costs less than limit. A catalog of any size costs at most
// about limit tokens of counting.
func listingCost(cat *index.Catalog, limit int) (int, bool) {
	return listingCostAs(cat, limit, listing{})
}

// listingCostAs is listingCost with the tools listed as l says (with
// condensed descriptions, under --condense).
func listingCostAs(cat *index.Catalog, limit int, l listing) (int, bool) {
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return 0, false
	}
	n := 0
	for _, t := range cat.Tools() {
		if t.Disabled {
			continue
		}
		b, err := json.Marshal(listedTool(t, l))
		if err != nil {
			continue
		}
		c, err := enc.Count(string(b))
		if err != nil {
			c = len(b) // no tokenizer error is known; bytes bound tokens
		}
		if n += c; n >= limit {
			return n, false
		}
	}
	return n, true
}

// autoMode keeps auto mode's decisions: one for the whole catalog, logged
// when it changes, and one per caller's view of a catalog. Guarded by
// exposure.mu.
type autoMode struct {
	cur autoDecision
	sub map[*index.Catalog]bool
}

// budget returns auto mode's budget.
func (x Exposure) budget() int {
	if x.Budget > 0 {
		return x.Budget
	}
	return DefaultAutoBudget
}

// eager reports whether auto mode, exposing as x, lists cat's tools
// directly, deciding once per catalog; full is the whole catalog now, of
// which cat may be a caller's view. exposure.mu is held.
func (a *autoMode) eager(cat, full *index.Catalog, x Exposure, log *slog.Logger) bool {
	if a.cur.cat == cat {
		return a.cur.eager
	}
	if cat != full {
		// A caller's view (visibility.go): decided for its own tools,
		// once per view of each catalog, without a log line each.
		if eager, ok := a.sub[cat]; ok {
			return eager
		}
		_, under := listingCostAs(cat, x.budget(), x.listing())
		if len(a.sub) >= 256 {
			clear(a.sub) // views of older catalogs
		}
		if a.sub == nil {
			a.sub = map[*index.Catalog]bool{}
		}
		a.sub[cat] = under
		return under
	}
	cost, under := listingCostAs(cat, x.budget(), x.listing())
	prev := a.cur
	a.cur = autoDecision{cat: cat, eager: under, cost: cost}
	if cat.Len() > 0 && (prev.cat == nil || prev.cat.Len() == 0 || prev.eager != under) {
		if under {
			log.Info("expose auto: listing every tool directly", "tokens", cost, "budget", x.budget())
		} else {
			log.Info("expose auto: the tools cost more than the budget; listing the meta-tools only", "tokens_counted", cost, "budget", x.budget())
		}
	}
	return under
}
