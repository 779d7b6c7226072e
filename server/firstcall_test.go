package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/gateway"
)

// TestEveryMetaToolAsFirstCall: each meta-tool, enable_domain included,
// and a direct call of a tool not listed, made as the model's first call
// before the gateway's server has listed its tools, waits for it and
// answers from its tools.
func TestEveryMetaToolAsFirstCall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode Mode
		tool string
		args map[string]any
		want string
	}{
		{ExposeMeta, DiscoverTools, map[string]any{"query": "echo the text back"}, "slow__echo"},
		{ExposeMeta, GetToolSchema, map[string]any{"tool_name": "slow__echo"}, `"name":"slow__echo"`},
		{ExposeMeta, ExecuteTool, map[string]any{"tool_name": "slow__echo", "arguments": map[string]any{"text": "hi"}}, "hi"},
		{ExposeDynamic, EnableDomain, map[string]any{"domain": "slow"}, "slow__echo"},
		{ExposeMeta, "slow__echo", map[string]any{"text": "hi"}, `call execute_tool with {"arguments":{"text":"hi"},"tool_name":"slow__echo"}`},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			t.Parallel()
			slow := fakeConfig(t, "slow", "ok")
			slow.Env["TOOLSCOUT_FAKE_DELAY"] = "1s"
			env := startGateway(t, []gateway.UpstreamConfig{slow}, Exposure{Mode: tc.mode})
			if res := call(t, env.cs, tc.tool, tc.args); !strings.Contains(text(res), tc.want) {
				t.Errorf("%s as the first call = %s, want %s in it", tc.tool, text(res), tc.want)
			}
		})
	}
}

// TestEnableDomainOfAServerStillConnecting: past the startup wait, a
// domain whose server is still connecting is enabled with a warning
// saying so (not "unknown domain" with an empty list of valid ones), and
// its tools are listed once the server lists them.
func TestEnableDomainOfAServerStillConnecting(t *testing.T) {
	t.Parallel()
	late := fakeConfig(t, "late", "ok")
	late.Env["TOOLSCOUT_FAKE_DELAY"] = "2s"
	env := startGatewayServer(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{late}}, Options{Expose: Exposure{Mode: ExposeDynamic}, StartupWait: 300 * time.Millisecond})
	res := call(t, env.cs, EnableDomain, map[string]any{"domain": "late"})
	var got EnableAnswer
	json.Unmarshal([]byte(structured(t, res)), &got)
	if res.IsError || strings.Join(got.Enabled, ",") != "late" || len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], `"late" is still connecting`) {
		t.Errorf("enable_domain of a server still connecting after the startup wait = %s, want it enabled with a warning", text(res))
	}
	waitFor(t, "late's tools listed", func() bool {
		res, err := env.cs.ListTools(context.Background(), nil)
		return err == nil && strings.Contains(strings.Join(toolNames(res), ","), "late__echo")
	})
	res = call(t, env.cs, EnableDomain, map[string]any{"domain": "nope"})
	if !res.IsError || !strings.Contains(text(res), "valid domains: late") {
		t.Errorf("enable_domain of an unknown domain = %s", text(res))
	}
}

// TestDirectCallOfAnUnlistedTool: a tools/call of a catalog tool by a
// qualified name that the client's tools/list does not hold (a tool's own
// name runs it: TestDirectCallByOwnName) answers with the execute_tool call
// to make (and, in dynamic mode, the enable_domain call), without
// running it; a disabled tool is said to be disabled; a name the
// catalog does not have stays an unknown tool.
func TestDirectCallOfAnUnlistedTool(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		exp  Exposure
		tool string
		want []string
	}{
		{"meta", Exposure{Mode: ExposeMeta}, "github__create_issue",
			[]string{`call execute_tool with {"arguments":{"repo":"a/b","title":"Crash"},"tool_name":"github__create_issue"}`, "get_tool_schema github__create_issue"}},
		{"core, not pinned", Exposure{Mode: ExposeCore, Pinned: []string{"weather__*"}}, "github__create_issue", []string{"call execute_tool with"}},
		{"dynamic, not enabled", Exposure{Mode: ExposeDynamic}, "github__create_issue", []string{"call execute_tool with", `call enable_domain with {"domain":"github"}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := &fakeExecutor{}
			cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil), Executor: ex, Expose: tc.exp}))
			res := call(t, cs, tc.tool, map[string]any{"repo": "a/b", "title": "Crash"})
			if !res.IsError {
				t.Fatalf("direct call of %s = %s, want an error saying how to call it", tc.tool, text(res))
			}
			for _, w := range tc.want {
				if !strings.Contains(text(res), w) {
					t.Errorf("direct call of %s = %s, want %q in it", tc.tool, text(res), w)
				}
			}
			if ex.calls != 0 {
				t.Error("the tool ran")
			}
		})
	}
	cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil), Executor: &fakeExecutor{}}))
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "nope__nothing", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("direct call of a name no catalog has: %v, want unknown tool", err)
	}
	// Arguments too long to quote back are not.
	res := call(t, cs, "weather__get_forecast", map[string]any{"city": strings.Repeat("x", 5000)})
	if !res.IsError || len(text(res)) > 1000 || !strings.Contains(text(res), `call execute_tool with tool_name "weather__get_forecast" and the same arguments`) {
		t.Errorf("direct call with long arguments = %.300s (%d bytes)", text(res), len(text(res)))
	}
	// A name longer than any tool's is not echoed whole.
	res = call(t, cs, strings.Repeat("n", 1<<20), map[string]any{})
	if !res.IsError || len(text(res)) > 400 || !strings.Contains(text(res), "no tool name is longer than") {
		t.Errorf("direct call of a 1 MiB name = %.300s (%d bytes)", text(res), len(text(res)))
	}
}
