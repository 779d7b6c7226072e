package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/embed"
)

func TestSchemaHasRelatedTools(t *testing.T) {
	t.Parallel()
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
