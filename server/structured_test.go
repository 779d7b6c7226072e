package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/embed"
)

// TestStructuredAnswers: discover_tools and get_tool_schema send their
// answer as structuredContent to every client, and the same JSON as the
// content text to a client not known to read structuredContent (as the
// specification asks, for backwards compatibility); a client known to
// read it (Claude Code by its name, or one declaring
// StructuredCapability, over a session or the stateless protocol) gets
// a one-line text instead.
func TestStructuredAnswers(t *testing.T) {
	t.Parallel()
	srv := New(Options{Live: testLive(t, testCatalog, embed.NewBuiltin(embed.BuiltinOptions{}))})
	hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	capable := &mcp.ClientCapabilities{Experimental: map[string]any{StructuredCapability: map[string]any{}}}
	connectHTTP := func(name string, caps *mcp.ClientCapabilities, protocol string) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ClientOptions{Capabilities: caps}).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	tests := []struct {
		name  string
		cs    *mcp.ClientSession
		short bool
	}{
		{"another client, in memory", connect(t, srv), false},
		{"another client, session", connectHTTP("cursor", nil, "2025-11-25"), false},
		{"another client, stateless", connectHTTP("cursor", nil, ""), false},
		{"claude-code, session", connectHTTP("claude-code", nil, "2025-11-25"), true},
		{"claude-code, stateless", connectHTTP("claude-code", nil, ""), true},
		{"declares the capability, session", connectHTTP("my-agent", capable, "2025-06-18"), true},
		{"declares the capability, stateless", connectHTTP("my-agent", capable, ""), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range []struct {
				tool string
				args map[string]any
				want string
			}{
				{GetToolSchema, map[string]any{"tool_name": "github__create_issue"}, "Schemas of github__create_issue (the answer is in structuredContent)"},
				{DiscoverTools, map[string]any{"query": "open an issue", "limit": 2}, `2 tools for "open an issue": `},
			} {
				res := call(t, tt.cs, c.tool, c.args)
				if res.IsError || res.StructuredContent == nil {
					t.Fatalf("%s = %s, want a structured answer", c.tool, text(res))
				}
				full, _ := json.Marshal(res.StructuredContent)
				got := text(res)
				if tt.short {
					if !strings.HasPrefix(got, c.want) || len(got) > 200 {
						t.Errorf("%s content = %q, want one line starting %q", c.tool, got, c.want)
					}
					continue
				}
				if normalize(t, got) != normalize(t, string(full)) {
					t.Errorf("%s content = %s\nwant the structuredContent's JSON %s", c.tool, got, full)
				}
			}
		})
	}
}

// TestStructuredAnswersTypeScript: the same with the TypeScript SDK's
// client: one that names itself otherwise gets the whole JSON as its
// content text; claude-code, or a client declaring the capability, a
// line; structuredContent either way.
func TestStructuredAnswersTypeScript(t *testing.T) {
	t.Parallel()
	script, _ := filepath.Abs(filepath.Join("testdata", "structured_client.mjs"))
	if _, err := exec.LookPath("node"); err != nil {
		needNodeModules(t, "node is not installed")
	}
	if _, err := os.Stat(filepath.Join("..", "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		needNodeModules(t, "npm packages are missing: run npm ci (make test does)")
	}
	srv := New(Options{Live: testLive(t, testCatalog, embed.NewBuiltin(embed.BuiltinOptions{}))})
	hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	cases := []struct {
		client string // the script's CLIENT: a name, ":capable" after it for the capability
		short  bool
	}{
		{"cursor", false},
		{"claude-code", true},
		{"my-agent:capable", true},
	}
	// One node process for all the clients, each its own session: a node
	// start with the SDK loaded is most of this test's CPU.
	args := []string{script, hs.URL}
	for _, tc := range cases {
		args = append(args, tc.client)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "node", args...).Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("node printed %d lines, want one a client (%d):\n%s", len(lines), len(cases), out)
	}
	for i, tc := range cases {
		t.Run(tc.client, func(t *testing.T) {
			var got struct {
				Content    []struct{ Text string } `json:"content"`
				Structured map[string]any          `json:"structured"`
			}
			if err := json.Unmarshal([]byte(lines[i]), &got); err != nil || len(got.Content) != 1 || got.Structured == nil {
				t.Fatalf("answer %s (%v): want one text and structuredContent", lines[i], err)
			}
			full, _ := json.Marshal(got.Structured)
			if tc.short != (got.Content[0].Text == "Schemas of github__create_issue (the answer is in structuredContent)") ||
				!tc.short && normalize(t, got.Content[0].Text) != normalize(t, string(full)) {
				t.Errorf("content text = %q (short: want %v)", got.Content[0].Text, tc.short)
			}
		})
	}
}

// needNodeModules skips outside CI, fails in it.
func needNodeModules(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
}
