package search

import (
	"slices"
	"testing"

	"github.com/toolscout/toolscout/internal/srccheck"
)

// liveMethods are the exported methods Live may have (issue 36, item
// 1): the goal is Open (a function), Update, Swap and Follow, with the
// typed state (State and the channels derived from it) and Close. The
// others are still here and leave one by one; a method is taken off
// this list when it goes, so that it does not come back.
var liveMethods = []string{
	"Close", "Engine", "Follow", "Load", "Loaded", "Ready",
	"Settled", "State", "Subscribe", "Swap", "Update", "UseCatalog",
}

// TestLiveHasFewMethods fails when Live gains an exported method not in
// liveMethods: a new way to change its state, or an accessor that lets
// callers reach below it (its store).
func TestLiveHasFewMethods(t *testing.T) {
	var found []string
	for _, m := range srccheck.Methods(t, ".", "Live", true) {
		found = append(found, m.Name)
		if !slices.Contains(liveMethods, m.Name) {
			t.Errorf("%s: Live.%s is new: Live changes state through Open, Update, Swap and Follow only; give the job to one of them (or to the store), or say why in liveMethods", m.File, m.Name)
		}
	}
	if !slices.Contains(found, "Follow") {
		t.Fatalf("Live.Follow not found among %v: the count is broken", found)
	}
	for _, m := range liveMethods {
		if !slices.Contains(found, m) {
			t.Errorf("Live.%s is gone: take it off liveMethods so that it does not come back", m)
		}
	}
}
