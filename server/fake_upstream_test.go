package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// A fake upstream MCP server, run by re-executing the test binary with
// TOOLSCOUT_FAKE_UPSTREAM set. It is written by hand over newline-delimited
// JSON-RPC so that it can misbehave in ways an SDK server refuses to: never
// answer initialize, serve schemas that are not object schemas, crash in
// the middle of a call.
func TestMain(m *testing.M) {
	if mode := os.Getenv("TOOLSCOUT_FAKE_UPSTREAM"); mode != "" {
		fakeUpstream(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func fakeUpstream(mode string) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	var mu sync.Mutex
	out := json.NewEncoder(os.Stdout)
	send := func(v any) {
		mu.Lock()
		defer mu.Unlock()
		out.Encode(v)
	}
	tools := []map[string]any{
		{"name": "echo", "description": "Echo the text back.", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []string{"text"}}},
		{"name": "fail", "description": "Always fails with an error result.", "inputSchema": map[string]any{"type": "object"}},
		{"name": "crash", "description": "Crash the server in the middle of the call.", "inputSchema": map[string]any{"type": "object"}},
		{"name": "add_tool", "description": "Add a tool named second and announce it.", "inputSchema": map[string]any{"type": "object"}},
	}
	if mode == "big" {
		tools = append(tools,
			map[string]any{"name": "big", "description": "Answer with 20 MB of text.", "inputSchema": map[string]any{"type": "object"}},
			map[string]any{"name": "pid", "description": "The server's process ID.", "inputSchema": map[string]any{"type": "object"}},
		)
	}
	if mode == "broken" {
		tools = append(tools,
			map[string]any{"name": "no_type", "description": "Schema without a type.", "inputSchema": map[string]any{"properties": map[string]any{"x": map[string]any{"type": "string"}}}},
			map[string]any{"name": "no_schema", "description": "No schema at all."},
			map[string]any{"name": "string_schema", "description": "A schema that is not an object.", "inputSchema": map[string]any{"type": "string"}},
		)
	}
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string         `json:"protocolVersion"`
				Name            string         `json:"name"`
				Arguments       map[string]any `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue // notifications
		}
		if mode == "hang" {
			continue // never answer anything
		}
		reply := func(result any) { send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result}) }
		switch req.Method {
		case "initialize":
			reply(map[string]any{"protocolVersion": req.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{"listChanged": true}},
				"serverInfo": map[string]any{"name": "fake-" + mode, "version": "1"}})
		case "ping":
			reply(map[string]any{})
		case "tools/list":
			mu.Lock()
			list := append([]map[string]any{}, tools...)
			mu.Unlock()
			reply(map[string]any{"tools": list})
		case "tools/call":
			switch req.Params.Name {
			case "echo":
				reply(map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprint(req.Params.Arguments["text"])}},
					"structuredContent": map[string]any{"echoed": req.Params.Arguments["text"]}, "_meta": map[string]any{"fake": true}})
			case "fail":
				reply(map[string]any{"content": []any{map[string]any{"type": "text", "text": "upstream says no"}}, "isError": true})
			case "crash":
				os.Exit(3)
			case "big":
				reply(map[string]any{"content": []any{map[string]any{"type": "text", "text": strings.Repeat("x", 20<<20)}}})
			case "pid":
				reply(map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprint(os.Getpid())}}})
			case "add_tool":
				mu.Lock()
				tools = append(tools, map[string]any{"name": "second", "description": "A tool that appeared later: translate Klingon poetry.", "inputSchema": map[string]any{"type": "object"}})
				mu.Unlock()
				reply(map[string]any{"content": []any{map[string]any{"type": "text", "text": "added"}}})
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
			default:
				reply(map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}})
			}
		default:
			send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
		}
	}
}

// fakeConfig returns the upstream config that starts a fake in mode.
func fakeConfig(t *testing.T, domain, mode string) UpstreamConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return UpstreamConfig{Domain: domain, Command: exe, Args: []string{"-test.run=^$"}, Env: map[string]string{"TOOLSCOUT_FAKE_UPSTREAM": mode}}
}
