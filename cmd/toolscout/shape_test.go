package main

import (
	"path/filepath"
	"testing"

	"github.com/toolscout/toolscout/internal/srccheck"
)

// catalogBuilders are the index package's functions that build a
// catalog from domain specs or files (the built-in catalog included).
var catalogBuilders = []string{"NewCatalog", "NewCatalogFrom", "NewCatalogFromLast", "NewCatalogSkipping", "LoadCatalogFiles", "BuiltinCatalog"}

// TestCmdBuildsNoCatalog fails when cmd/toolscout builds a catalog
// itself, in any command: serve's start (its eager fallback included)
// gets its catalog from the store, through server/boot; doctor's look at
// the catalog files and the upstream servers gets it from the store
// (store.InspectCatalog) and the gateway (Catalog).
func TestCmdBuildsNoCatalog(t *testing.T) {
	for _, c := range srccheck.Calls(t, ".", "github.com/toolscout/toolscout/index", catalogBuilders...) {
		t.Errorf("%s: %s calls index.%s: cmd does not build catalogs (the store, the gateway and server/boot do)", filepath.Base(c.File), c.Func, c.Name)
	}
}

// complexityCeiling is the most cyclomatic complexity a function of cmd
// may have.
const complexityCeiling = 25

// TestCmdFunctionsStaySimple holds every function of cmd/toolscout at
// cyclomatic complexity 25 or less (counted as gocyclo counts it).
func TestCmdFunctionsStaySimple(t *testing.T) {
	for _, f := range srccheck.Complexities(t, ".") {
		if f.Complexity > complexityCeiling {
			t.Errorf("%s: %s has cyclomatic complexity %d, over %d: split it", filepath.Base(f.File), f.Name, f.Complexity, complexityCeiling)
		}
	}
}
