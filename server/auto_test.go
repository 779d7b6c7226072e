package server

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestAutoModeDecides tests autoMode on its own: the whole catalog is
// decided once, with one log line, and again only when the catalog
// changes; a caller's view of it is decided by its own cost, without a
// log line.
func TestAutoModeDecides(t *testing.T) {
	t.Parallel()
	full := testLive(t, testCatalog, nil).Engine().Catalog()
	cost, _ := listingCost(full, 1<<30)
	sub := testLive(t, visibleCatalog, nil).Engine().Catalog() // stands for a caller's view
	subCost, _ := listingCost(sub, 1<<30)
	if subCost >= cost {
		t.Fatalf("the view costs %d tokens, the catalog %d: the test needs a cheaper view", subCost, cost)
	}
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	x := Exposure{Mode: ExposeAuto, Budget: (cost + subCost) / 2} // the view fits, the catalog does not

	var a autoMode
	if a.eager(full, full, x, log) {
		t.Errorf("eager(catalog of %d tokens) = true with a budget of %d", cost, x.Budget)
	}
	if !a.eager(sub, full, x, log) {
		t.Errorf("eager(view of %d tokens) = false with a budget of %d", subCost, x.Budget)
	}
	a.eager(full, full, x, log)
	if n := strings.Count(logged.String(), "expose auto"); n != 1 {
		t.Errorf("%d log lines for one catalog decided twice and a view, want 1:\n%s", n, logged.String())
	}
	if a.cur.cat != full || a.cur.cost < x.Budget || !a.sub[sub] {
		t.Errorf("kept %+v and views %v; want the catalog's decision and the view's", a.cur, a.sub)
	}

	// The catalog changes (here: becomes the smaller one): decided again,
	// and said, since the decision changed.
	if !a.eager(sub, sub, x, log) {
		t.Error("eager(new catalog within the budget) = false")
	}
	if n := strings.Count(logged.String(), "expose auto"); n != 2 {
		t.Errorf("%d log lines after the decision changed, want 2:\n%s", n, logged.String())
	}
	if got := (Exposure{}).budget(); got != DefaultAutoBudget {
		t.Errorf("budget() of no Budget = %d, want DefaultAutoBudget (%d)", got, DefaultAutoBudget)
	}
}
