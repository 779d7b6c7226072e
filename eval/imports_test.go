package eval

import (
	"strings"
	"testing"

	"github.com/toolscout/toolscout/internal/srccheck"
)

// TestEvalReachesTheIndexesThroughSearch: eval measures what search
// ranks; the data dir and the indexes are search's (and index/store's)
// business, so no eval file imports index/store, index/keyword or
// index/vector (issue 49, item 4).
func TestEvalReachesTheIndexesThroughSearch(t *testing.T) {
	const module = "github.com/toolscout/toolscout/"
	imports := srccheck.Imports(t, ".")
	if len(imports) == 0 {
		t.Fatal("no import read: the check read no file")
	}
	searched := false
	for _, imp := range imports {
		rest, ok := strings.CutPrefix(imp.Path, module)
		switch {
		case !ok:
		case rest == "search":
			searched = true
		case rest == "index/store" || rest == "index/keyword" || rest == "index/vector":
			t.Errorf("%s imports %s: reach the store and the indexes through package search (search.OpenNamed, search.FeedbackEvent)", imp.File, imp.Path)
		}
	}
	if !searched {
		t.Error("no eval file imports search: the check looks at the wrong folder")
	}
}
