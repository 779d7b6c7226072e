package eval

import (
	"errors"
	"testing"

	"github.com/toolscout/toolscout/index"
)

func TestSpecsDataset(t *testing.T) {
	specs := []index.DomainSpec{{Name: "pagerduty", Description: "On-call", Tools: []index.ToolSpec{
		{Name: "list_oncalls", Description: "List who is on call.", InputSchema: []byte(`{"type":"object"}`)}}}}
	ds, err := SpecsDataset("oncall", "q.jsonl", []byte(`{"id":"q1","query":"who is on call","relevant":["pagerduty/list_oncalls"]}`), specs)
	if err != nil || ds.Name != "oncall" || len(ds.Queries) != 1 || ds.Queries[0].ID != "q1" || ds.Catalog.ToolByKey("pagerduty/list_oncalls") == nil {
		t.Fatalf("SpecsDataset = %+v, %v", ds, err)
	}
	tests := []struct {
		name      string
		specs     []index.DomainSpec
		queries   string
		wantBuild bool // the catalog's build fails, not the queries
	}{
		{"same domain twice", append(specs, specs...), `{"id":"q1","query":"x","relevant":["pagerduty/list_oncalls"]}`, true},
		{"tool without a name", []index.DomainSpec{{Name: "b", Tools: []index.ToolSpec{{}}}}, `{"id":"q1","query":"x","relevant":["b/x"]}`, true},
		{"tool not listed", specs, `{"id":"q1","query":"x","relevant":["pagerduty/none"]}`, false},
		{"no queries", specs, ``, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := SpecsDataset("x", "q.jsonl", []byte(tc.queries), tc.specs)
			var build *CatalogBuildError
			if err == nil || errors.As(err, &build) != tc.wantBuild {
				t.Fatalf("SpecsDataset(%s) = %v (a build error: %v), want a build error: %v", tc.name, err, build != nil, tc.wantBuild)
			}
			if tc.wantBuild {
				_, want := index.NewCatalog(tc.specs)
				if want == nil || err.Error() != want.Error() || !errors.Is(err, build.Err) {
					t.Errorf("SpecsDataset(%s) = %v, want it to read as the build's error %v", tc.name, err, want)
				}
			}
		})
	}
}
