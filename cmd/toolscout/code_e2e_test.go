package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server"
	"github.com/toolscout/toolscout/server/codemode"
)

// codeProgram searches, reads a typed tool, and chains calls of two
// reference servers: it stores a fact in server-memory, reads the graph
// back and returns one field, and adds with server-everything's get-sum
// under its identifier get_sum.
const codeProgram = `const found = await toolscout.search("remember facts about a person", {limit: 5});
await tools.memory.create_entities({entities: [{name: "Alice", entityType: "person", observations: ["works at Acme"]}]});
const graph = await tools.memory.read_graph({});
const sum = await tools.everything.get_sum({a: 2, b: 3});
return {
  memoryFound: found.results.some(r => r.name.startsWith("memory__")),
  employer: graph.entities.find(e => e.name === "Alice").observations[0],
  sum,
};`

// TestCodeModeEndToEnd: toolscout serve --expose code in front of the
// npm reference servers, over stdio and HTTP (both protocol
// generations): the model's three steps (search, TypeScript types, one
// program) give the right result with its calls listed. The two HTTP
// sessions are served by one serve (and one set of reference servers):
// the program gives the same answer a second time (server-memory keeps
// one Alice; create_entities skips one it has).
func TestCodeModeEndToEnd(t *testing.T) {
	t.Parallel()
	nodeClient(t)
	root, _ := filepath.Abs("../..")
	bin := buildBinary(t)
	bins := filepath.Join(root, "node_modules", ".bin")
	serveArgs := func(t *testing.T) []string {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "servers.json")
		conf, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
			"memory":     map[string]any{"command": filepath.Join(bins, "mcp-server-memory"), "env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "m.jsonl")}},
			"everything": map[string]any{"command": filepath.Join(bins, "mcp-server-everything")},
		}})
		if err := os.WriteFile(cfg, conf, 0o644); err != nil {
			t.Fatal(err)
		}
		return []string{"serve", "--expose", "code", "--config", cfg, "--embedder", "builtin", "--data-dir", filepath.Join(dir, "data")}
	}
	t.Run("stdio", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.Command(bin, serveArgs(t)...)
		cmd.Env = append(os.Environ(), "OLLAMA_HOST=127.0.0.1:9")
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "code-e2e", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		checkCodeMode(ctx, t, cs)
	})
	s := startServeHTTP(t, bin, []string{"OLLAMA_HOST=127.0.0.1:9"}, append(serveArgs(t), "--http", "127.0.0.1:0")...)
	for _, protocol := range []string{"", "2025-11-25"} {
		name := "http"
		if protocol != "" {
			name += "-" + protocol
		}
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "code-e2e", Version: "1"}, nil).Connect(ctx,
				&mcp.StreamableClientTransport{Endpoint: s.base + "/mcp", HTTPClient: http.DefaultClient, MaxRetries: -1},
				&mcp.ClientSessionOptions{ProtocolVersion: protocol})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			checkCodeMode(ctx, t, cs)
		})
	}
}

// checkCodeMode takes the model's three steps in code mode through cs.
func checkCodeMode(ctx context.Context, t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	names := listedNames(ctx, t, cs)
	slices.Sort(names)
	if strings.Join(names, ",") != "discover_tools,get_tool_schema,run_code" {
		t.Fatalf("tools/list = %v", names)
	}
	// The types the model writes against.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: server.GetToolSchema, Arguments: map[string]any{"tool_name": "memory__create_entities", "format": "typescript"}})
	if err != nil || res.IsError {
		t.Fatalf("get_tool_schema typescript: %v %+v", err, res)
	}
	decl := contentText(res)
	if !strings.Contains(decl, "create_entities(") || !strings.Contains(decl, "entities:") {
		t.Errorf("declarations of memory__create_entities lack its function or parameter:\n%s", decl)
	}
	// Wait for both servers' tools (a gateway lists them as they come).
	var ans codemode.Answer
	for i := 0; ; i++ {
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: server.RunCode, Arguments: map[string]any{"code": codeProgram}})
		if err != nil {
			t.Fatal(err)
		}
		ans = codemode.Answer{}
		if err := json.Unmarshal([]byte(contentText(res)), &ans); err != nil {
			t.Fatalf("run_code answer: %v: %s", err, contentText(res))
		}
		if ans.Error == nil || i == 20 || !strings.Contains(ans.Error.Message, "connecting") {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if ans.Error != nil {
		t.Fatalf("run_code: %+v (calls %+v)", ans.Error, ans.Calls)
	}
	if got := string(ans.Result); got != `{"memoryFound":true,"employer":"works at Acme","sum":"The sum of 2 and 3 is 5."}` {
		t.Errorf("run_code result = %s", got)
	}
	var calls []string
	for _, c := range ans.Calls {
		if !c.OK {
			t.Errorf("call %s failed: %s", c.Tool, c.Error)
		}
		calls = append(calls, c.Tool)
	}
	if want := "toolscout.search,memory__create_entities,memory__read_graph,everything__get-sum"; strings.Join(calls, ",") != want {
		t.Errorf("calls = %v, want %s", calls, want)
	}
}

// contentText joins a result's text contents.
func contentText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// listedNames returns the names of the tools cs's tools/list answers.
func listedNames(ctx context.Context, t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
	}
	return names
}
