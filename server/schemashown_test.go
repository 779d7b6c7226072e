package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/server/arguments"
)

// TestSchemaAnswerBudget: get_tool_schema's answer for any one tool of
// the built-in catalog and of the three reference servers costs at most
// SchemaBudget tokens, counted as toolscout tokens counts it (the
// content a client that does not read structuredContent gets). Before
// the answers showed schemas for a model, the largest was 470
// (memory__open_nodes).
func TestSchemaAnswerBudget(t *testing.T) {
	t.Parallel()
	t.Run("builtin", func(t *testing.T) {
		checkSchemaBudget(t, builtinTokenReport(t))
	})
	t.Run("reference servers", func(t *testing.T) {
		env := referenceGateway(t, Exposure{Mode: ExposeMeta})
		waitFor(t, "the reference servers' tools", func() bool {
			return env.hasTool("memory__open_nodes") && env.hasTool("filesystem__read_media_file") && env.hasTool("everything__echo")
		})
		rep, err := env.srv.CountTokens(t.Context(), "create an issue for a bug")
		if err != nil {
			t.Fatal(err)
		}
		checkSchemaBudget(t, rep)
	})
}

func checkSchemaBudget(t *testing.T, rep *TokenReport) {
	t.Helper()
	t.Logf("largest get_tool_schema answer of %d tools: %s, %d tokens", rep.Tools, rep.SchemaMaxTool, rep.SchemaMax)
	if rep.SchemaMax == 0 || rep.SchemaMax > SchemaBudget {
		t.Errorf("get_tool_schema of %s = %d tokens, want at most %d", rep.SchemaMaxTool, rep.SchemaMax, SchemaBudget)
	}
}

// TestSchemaShown: what get_tool_schema shows of a schema leaves out
// "$schema" and, in an output schema, additionalProperties false; the
// tool keeps its schemas whole for validation.
func TestSchemaShown(t *testing.T) {
	t.Parallel()
	in := json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","additionalProperties":false,"properties":{"a":{"type":"string","description":"<b>"}},"type":"object"}`)
	if got := string(shownInput(in)); got != `{"additionalProperties":false,"properties":{"a":{"description":"<b>","type":"string"}},"type":"object"}` {
		t.Errorf("shownInput = %s", got)
	}
	out := json.RawMessage(`{"$schema":"x","additionalProperties":false,"properties":{"items":{"items":{"additionalProperties":false,"type":"object"},"type":"array"},"extra":{"additionalProperties":true}},"type":"object"}`)
	if got := string(shownOutput(out)); strings.Contains(got, "false") || strings.Contains(got, "$schema") || !strings.Contains(got, `"additionalProperties":true`) {
		t.Errorf("shownOutput = %s", got)
	}
	if got := string(shownInput(json.RawMessage(`{"type":"object"}`))); got != `{"type":"object"}` {
		t.Errorf("shownInput of a plain schema = %s", got)
	}
	ts := ToolSchema{Name: "memory__open_nodes", Title: "Open Nodes", RelatedTools: []RelatedTool{{Name: "x", Summary: "s"}}}
	fitBudget(&ts, "open_nodes")
	if ts.Title != "" || ts.RelatedTools[0].Summary != "s" {
		t.Errorf("fitBudget of a small answer = %+v, want the title that repeats the name gone, the summaries kept", ts)
	}
	// An answer whose definition is long: the related tools go, then the
	// examples that only restate the schema's defaults; an example of
	// the schema's own stays.
	long := ToolSchema{Name: "everything__x", Description: strings.Repeat("a long upstream description ", 60),
		RelatedTools: []RelatedTool{{Name: "everything__y", Summary: "s"}},
		Examples: []arguments.Example{{Description: "d", Arguments: map[string]any{"url": "https://acme.io"}, Source: "defaults"},
			{Description: "e", Arguments: map[string]any{"url": "https://example.org"}, Source: "schema"}}}
	fitBudget(&long, "x")
	if long.RelatedTools != nil || len(long.Examples) != 1 || long.Examples[0].Source != "schema" || long.Description == "" {
		t.Errorf("fitBudget of a long answer: related %v, examples %+v; want no related tools and only the schema's example, the description whole", long.RelatedTools, long.Examples)
	}
}

// TestNestedErrorThroughExecute: execute_tool of the memory server's
// create_entities with an entity's observations as a string answers with
// the path, what was expected and the right shape, not the validator's
// internals, and runs nothing.
func TestNestedErrorThroughExecute(t *testing.T) {
	t.Parallel()
	// The call is refused before it reaches the memory server: the
	// package's shared one (referenceGateway) is left as it was.
	env := referenceGateway(t, Exposure{Mode: ExposeMeta})
	res := call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "memory__create_entities",
		"arguments": map[string]any{"entities": []any{map[string]any{"name": "Alice", "entityType": "person", "observations": "likes tea"}}}})
	got := text(res)
	want := `invalid arguments for memory__create_entities: entities[0].observations must be an array; you sent "likes tea"; e.g. entities[0]: {"entityType":"person","name":"Alice Martin","observations":["Prefers morning meetings"]}`
	if !res.IsError || !strings.HasPrefix(got, want) {
		t.Errorf("execute_tool with a nested mistake = %v %q\nwant %q", res.IsError, got, want)
	}
}
