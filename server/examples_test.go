package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/embed"
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
			"defaults", map[string]any{"city": "Oslo", "units": "metric", "days": float64(1)}},
		{"synthesized from types",
			`{"type":"object","properties":{"to":{"type":"string","format":"email"},"when":{"type":"string","format":"date-time"},"count":{"type":"integer","minimum":3,"maximum":9},"kind":{"enum":["a","b"]},"opts":{"type":"object","properties":{"deep":{"type":"boolean"}},"required":["deep"]},"tags":{"type":"array","items":{"type":"string"},"minItems":1},"note":{"type":"string"}},"required":["to","when","count","kind","opts","tags"]}`,
			"synthesized", map[string]any{"to": "user@example.com", "when": "2026-01-01T00:00:00Z", "count": float64(3), "kind": "a"}},
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
				if err := ValidateArguments(tool, ex.Arguments); err != nil {
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

func TestSchemaHasRelatedTools(t *testing.T) {
	live := testLive(t, testCatalog, embed.NewBuiltin(embed.BuiltinOptions{}))
	cs := connect(t, New(Options{Live: live}))
	var ans SchemaAnswer
	if err := json.Unmarshal([]byte(structured(t, call(t, cs, GetToolSchema, map[string]any{"tool_name": "github__create_issue"}))), &ans); err != nil {
		t.Fatal(err)
	}
	rel := ans.Tools[0].RelatedTools
	if len(rel) == 0 || len(rel) > maxRelated {
		t.Fatalf("related_tools = %+v", rel)
	}
	for _, r := range rel {
		if !strings.HasPrefix(r.Name, "github__") || r.Name == "github__create_issue" || r.Summary == "" {
			t.Errorf("related tool %+v: want another github tool with its summary", r)
		}
	}
	if rel[0].Name != "github__list_issues" {
		t.Errorf("nearest tool = %s, want github__list_issues", rel[0].Name)
	}
	// Without vectors, related tools come from the keyword index.
	kwOnly := testLive(t, testCatalog, nil)
	tools, err := kwOnly.Engine().Related(context.Background(), kwOnly.Engine().Catalog().Tool("github__create_issue"), 3)
	if err != nil || len(tools) == 0 || tools[0].Domain != "github" {
		t.Errorf("keyword related = %v, %v", tools, err)
	}
}
