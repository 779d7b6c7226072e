package server

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/gateway"
)

// TestToolNamesListing: with tool_names server, eager mode lists each
// tool under its own name, and both tools of a name two domains share
// (create_issue) under their qualified names; the default lists every
// tool qualified. A call by a qualified name that is listed under the
// own name says which name to call.
func TestToolNamesListing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		names string
		want  []string
	}{
		{"default", "", []string{"github__create_issue", "github__get_file_contents", "github__list_issues", "jira__create_issue", "weather__get_forecast"}},
		{"qualified", ToolNamesQualified, []string{"github__create_issue", "github__get_file_contents", "github__list_issues", "jira__create_issue", "weather__get_forecast"}},
		{"server", ToolNamesServer, []string{"get_file_contents", "get_forecast", "github__create_issue", "jira__create_issue", "list_issues"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := &fakeExecutor{}
			cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil), Executor: ex, Expose: Exposure{Mode: ExposeEager, Names: tc.names}}))
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range toolNames(res) {
				if !ownTool(n) {
					got = append(got, n)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("tools/list = %v, want %v", got, tc.want)
			}
			// Each listed name runs its tool (the fake executor runs
			// github's, says weather's server is down, and has no server
			// for jira's).
			for _, n := range got {
				before := ex.calls
				r := call(t, cs, n, map[string]any{"repo": "a/b", "title": "t", "city": "Oslo"})
				switch {
				case strings.HasSuffix(n, "get_forecast"):
					if !strings.Contains(text(r), "weather__get_forecast failed: upstream weather is unavailable") {
						t.Errorf("call of listed %s = %s, want weather's tool run", n, text(r))
					}
				case n == "jira__create_issue":
					if !strings.Contains(text(r), "jira__create_issue is listed from a catalog and cannot run here") {
						t.Errorf("call of listed %s = %s, want jira's tool tried", n, text(r))
					}
				case r.IsError || ex.calls != before+1:
					t.Errorf("call of listed %s = %s (ran %d times), want it run once", n, text(r), ex.calls-before)
				}
			}
		})
	}
	cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil), Executor: &fakeExecutor{}, Expose: Exposure{Mode: ExposeEager, Names: ToolNamesServer}}))
	if r := call(t, cs, "github__list_issues", map[string]any{}); !r.IsError || !strings.Contains(text(r), `"github__list_issues" is listed as list_issues: call it by that name`) {
		t.Errorf("call by the qualified name of a tool listed under its own = %s", text(r))
	}
}

// TestDirectCallByOwnName: in every mode, a tools/call by a tool's own
// name runs it when exactly one tool has that name, listed or not; a
// name two domains share answers with both qualified names and runs
// neither; a disabled tool's name does not run.
func TestDirectCallByOwnName(t *testing.T) {
	t.Parallel()
	for _, exp := range []Exposure{
		{Mode: ExposeMeta},
		{Mode: ExposeEager},
		{Mode: ExposeEager, Names: ToolNamesServer},
		{Mode: ExposeCore, Pinned: []string{"weather__*"}},
		{Mode: ExposeDynamic},
		{Mode: ExposeAuto},
		{Mode: ExposeCompact, Names: ToolNamesServer},
		{Mode: ExposeCode},
	} {
		t.Run(string(exp.Mode)+"/"+exp.Names, func(t *testing.T) {
			ex := &fakeExecutor{}
			cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil), Executor: ex, Expose: exp}))
			res := call(t, cs, "list_issues", map[string]any{"repo": "a/b"})
			if res.IsError || ex.calls != 1 {
				t.Errorf("call of list_issues by its own name = %s (ran %d times), want it run once", text(res), ex.calls)
			}
			res = call(t, cs, "create_issue", map[string]any{"repo": "a/b", "title": "t"})
			if !res.IsError || !strings.Contains(text(res), `tool name "create_issue" is ambiguous: 2 servers have a tool of that name. Call one of github__create_issue, jira__create_issue`) {
				t.Errorf("call of create_issue, which two domains have = %s, want the candidates", text(res))
			}
			if ex.calls != 1 {
				t.Errorf("an ambiguous call ran a tool (%d runs)", ex.calls-1)
			}
		})
	}
	disabled := strings.Replace(testCatalog, `{"name":"list_issues",`, `{"name":"list_issues","enabled":false,`, 1)
	ex := &fakeExecutor{}
	cs := connect(t, New(Options{Live: testLive(t, disabled, nil), Executor: ex}))
	if r := call(t, cs, "list_issues", map[string]any{}); !r.IsError || ex.calls != 0 || !strings.Contains(text(r), "github__list_issues is disabled") {
		t.Errorf("call of a disabled tool by its own name = %s (ran %d times), want an error", text(r), ex.calls)
	}
}

// TestToolNamesServerGateway: behind real servers, tool_names server
// lists a tool one server has under its own name (memory's
// create_entities) and runs it there when called by it; echo, which the
// everything server and the fake both have, is listed qualified for
// both, and a call by its own name lists the two; the everything
// server's prompts, which no other server has, are listed and got under
// their own names.
func TestToolNamesServerGateway(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	env := startGateway(t, []gateway.UpstreamConfig{
		{Domain: "memory", Command: npmBin(t, "mcp-server-memory"), Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(root, "memory.jsonl")}},
		{Domain: "everything", Command: npmBin(t, "mcp-server-everything")},
		fakeConfig(t, "fake", "ok"),
	}, Exposure{Mode: ExposeEager, Names: ToolNamesServer})
	var names []string
	waitFor(t, "the tools of all three servers listed", func() bool {
		res, err := env.cs.ListTools(context.Background(), nil)
		if err != nil {
			return false
		}
		names = toolNames(res)
		return slices.Contains(names, "create_entities") && slices.Contains(names, "everything__echo") && slices.Contains(names, "fake__echo")
	})
	for _, n := range []string{"echo", "memory__create_entities"} {
		if slices.Contains(names, n) {
			t.Errorf("tools/list has %s: %v", n, names)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := env.cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_entities", Arguments: map[string]any{
		"entities": []any{map[string]any{"name": "toolscout", "entityType": "project", "observations": []any{"names tools"}}}}})
	if err != nil || res.IsError {
		t.Fatalf("create_entities by its own name: %v %s", err, text(res))
	}
	res, err = env.cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_graph", Arguments: map[string]any{}})
	if err != nil || res.IsError || !strings.Contains(text(res), `"toolscout"`) {
		t.Fatalf("read_graph after create_entities: %v %s, want the entity the memory server stored", err, text(res))
	}
	res = call(t, env.cs, "echo", map[string]any{"message": "hi", "text": "hi"})
	if !res.IsError || !strings.Contains(text(res), "Call one of everything__echo, fake__echo") {
		t.Errorf("echo by its own name, which two servers have = %s, want both qualified names", text(res))
	}
	var prompts []string
	waitFor(t, "the everything server's prompts", func() bool {
		pr, err := env.cs.ListPrompts(ctx, nil)
		if err != nil || len(pr.Prompts) == 0 {
			return false
		}
		prompts = prompts[:0]
		for _, p := range pr.Prompts {
			prompts = append(prompts, p.Name)
		}
		return true
	})
	for _, p := range prompts {
		if strings.Contains(p, "__") {
			t.Errorf("prompts/list has %s: one server's prompt is listed under its own name (all: %v)", p, prompts)
		}
	}
	if _, err := env.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompts[0], Arguments: promptArgs(t, env.cs, prompts[0])}); err != nil {
		t.Errorf("prompts/get %s: %v", prompts[0], err)
	}
}

// promptArgs returns a value for each required argument of the prompt.
func promptArgs(t *testing.T, cs *mcp.ClientSession, name string) map[string]string {
	t.Helper()
	pr, err := cs.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]string{}
	for _, p := range pr.Prompts {
		if p.Name == name {
			for _, a := range p.Arguments {
				if a.Required {
					args[a.Name] = "x"
				}
			}
		}
	}
	return args
}
