package server

import (
	"strings"
	"testing"
)

// TestMetaToolArgumentErrors: a meta-tool call whose arguments fail its
// schema is answered in plain words, bounded, whatever the SDK's
// validator said; so is execute_tool's check of the tool's own schema.
func TestMetaToolArgumentErrors(t *testing.T) {
	t.Parallel()
	cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil), Executor: &fakeExecutor{}}))
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{DiscoverTools, map[string]any{"query": "weather", "limit": 500}, "invalid arguments for discover_tools: limit must be at most 100; you sent 500"},
		{DiscoverTools, map[string]any{"query": "weather", "search_mode": strings.Repeat("x", 100<<10)}, "invalid arguments for discover_tools: search_mode must be one of hybrid, keyword, semantic; you sent \"xxx"},
		{DiscoverTools, map[string]any{"query": 7}, "invalid arguments for discover_tools: query must be a string; you sent 7"},
		{ExecuteTool, map[string]any{"arguments": map[string]any{}}, "invalid arguments for execute_tool: tool_name is required"},
		{ExecuteTool, map[string]any{"tool_name": "github__create_issue", "arguments": map[string]any{"repo": "a/b", "title": ""}}, "invalid arguments for github__create_issue: title must be at least 1 character long; you sent \"\". Call get_tool_schema"},
	}
	for _, tc := range tests {
		res := call(t, cs, tc.tool, tc.args)
		got := text(res)
		if !res.IsError || !strings.HasPrefix(got, tc.want) || len(got) > 400 {
			t.Errorf("%s %.80v: %q (%d bytes), want an error starting %q", tc.tool, tc.args, got[:min(len(got), 300)], len(got), tc.want)
		}
	}
}
