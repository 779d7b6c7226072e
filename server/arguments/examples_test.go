package arguments

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/index"
)

func TestExamples(t *testing.T) {
	tests := []struct {
		name, schema, source string
		want                 map[string]any // a subset of the first example
	}{
		{"schema examples, the invalid one skipped",
			`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"examples":[{"q":7},{"q":"weather in Oslo"}]}`,
			"schema", map[string]any{"q": "weather in Oslo"}},
		{"defaults and property examples",
			`{"type":"object","properties":{"city":{"type":"string","examples":["Oslo"]},"units":{"type":"string","enum":["metric","imperial"],"default":"metric"},"days":{"type":"integer","minimum":1}},"required":["city","days"]}`,
			"defaults", map[string]any{"city": "Oslo", "units": "metric", "days": float64(30)}},
		{"synthesized from types",
			`{"type":"object","properties":{"to":{"type":"string","format":"email"},"when":{"type":"string","format":"date-time"},"count":{"type":"integer","minimum":3,"maximum":9},"kind":{"enum":["a","b"]},"opts":{"type":"object","properties":{"deep":{"type":"boolean"}},"required":["deep"]},"tags":{"type":"array","items":{"type":"string"},"minItems":1},"note":{"type":"string"}},"required":["to","when","count","kind","opts","tags"]}`,
			"synthesized", map[string]any{"to": "alice@acme.test", "when": "2026-03-14T09:30:00Z", "count": float64(9), "kind": "a"}},
		{"named by the properties' names and descriptions",
			`{"type":"object","properties":{"repo":{"type":"string"},"file_path":{"type":"string"},"per_page":{"type":"integer","maximum":5},"city":{"type":"string","description":"City name, e.g. Lyon"},"branch":{"type":"string","description":"for example: 'develop'"},"issue_number":{"type":"integer"},"labels":{"type":"array","items":{"type":"string"},"minItems":1},"zzz":{"type":"string"}},"required":["repo","file_path","per_page","city","branch","issue_number","labels","zzz"]}`,
			"synthesized", map[string]any{"repo": "octocat/hello-world", "file_path": "/home/alice/projects/notes.md", "per_page": float64(5), "city": "Lyon", "branch": "develop", "issue_number": float64(42), "labels": "[bug]", "zzz": "sample text"}},
		{"no properties", `{"type":"object"}`, "synthesized", map[string]any{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			specs := []index.DomainSpec{{Name: "d", Tools: []index.ToolSpec{{Name: "t", InputSchema: json.RawMessage(tc.schema)}}}}
			cat, err := index.NewCatalog(specs)
			if err != nil {
				t.Fatal(err)
			}
			tool := cat.Tool("d__t")
			exs := Examples(tool)
			if len(exs) == 0 || exs[0].Source != tc.source {
				t.Fatalf("examples = %+v, want a first one from %s", exs, tc.source)
			}
			for _, ex := range exs {
				if err := Validate(tool, ex.Arguments); err != nil {
					t.Errorf("example %v does not validate: %v", ex.Arguments, err)
				}
			}
			got, _ := json.Marshal(exs[0].Arguments)
			var back map[string]any
			json.Unmarshal(got, &back)
			for k, v := range tc.want {
				if fmt.Sprint(back[k]) != fmt.Sprint(v) {
					t.Errorf("%s = %v, want %v (example %s)", k, back[k], v, got)
				}
			}
			if tc.source == "synthesized" && strings.Contains(tc.schema, `"note"`) {
				if _, ok := back["note"]; ok {
					t.Errorf("optional property in a synthesized example: %s", got)
				}
			}
		})
	}
}

// TestBuiltinExamples: every example of the built-in catalog validates,
// and none is the placeholder word "example".
func TestBuiltinExamples(t *testing.T) {
	cat, err := index.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tool := range cat.Tools() {
		for _, ex := range Examples(tool) {
			n++
			if err := Validate(tool, ex.Arguments); err != nil {
				t.Errorf("%s: example %v does not validate: %v", tool.QualifiedName, ex.Arguments, err)
			}
			data, _ := json.Marshal(ex.Arguments)
			if strings.Contains(strings.ToLower(string(data)), "example") {
				t.Errorf("%s: example %s says \"example\"", tool.QualifiedName, data)
			}
		}
	}
	if n < cat.Len() {
		t.Errorf("%d examples for %d tools, want one at least for each", n, cat.Len())
	}
}
