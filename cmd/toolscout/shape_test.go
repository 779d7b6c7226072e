package main

import (
	"path/filepath"
	"testing"

	"github.com/toolscout/toolscout/internal/srccheck"
)

// catalogBuilders are the index package's functions that build a
// catalog from domain specs or files.
var catalogBuilders = []string{"NewCatalog", "NewCatalogFrom", "NewCatalogFromLast", "NewCatalogSkipping", "LoadCatalogFiles"}

// inspectors are the functions of cmd that still build a catalog: each
// inspects what catalog files or upstream servers give now, with no data
// dir (doctor); a start never does (server/boot and
// the store own where a served catalog comes from).
var inspectors = map[string]bool{
	"loadCatalog":    true, // doctor's catalog files
	"runDoctor":      true, // doctor: the files' tools and the servers' together
	"checkUpstreams": true, // doctor: what the servers list now
}

// TestCmdBuildsNoCatalog fails when cmd/toolscout builds a catalog itself
// outside the inspecting commands: serve's start (its eager fallback
// included) gets its catalog from the store, through server/boot.
func TestCmdBuildsNoCatalog(t *testing.T) {
	for _, c := range srccheck.Calls(t, ".", "github.com/toolscout/toolscout/index", catalogBuilders...) {
		if !inspectors[c.Func] {
			t.Errorf("%s: %s calls index.%s: cmd does not build catalogs (the store and server/boot do)", filepath.Base(c.File), c.Func, c.Name)
		}
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
