package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/gateway"
)

// TestDeclaredIsAnswered: what initialize and server/discover declare
// and what is answered agree. A gateway whose upstreams have tools but
// no prompts and no resources declares neither and answers prompts/list,
// prompts/get, resources/list and completion/complete -32601 Method not
// found, in both protocol generations (the go-sdk would answer empty
// lists); with an upstream that has prompts, prompts are declared and
// listed.
func TestDeclaredIsAnswered(t *testing.T) {
	t.Parallel()
	tools := mcp.NewServer(&mcp.Implementation{Name: "tools", Version: "1"}, nil)
	tools.AddTool(&mcp.Tool{Name: "ping_host", Description: "Ping a host.", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	withPrompt := mcp.NewServer(&mcp.Implementation{Name: "prompts", Version: "1"}, nil)
	withPrompt.AddTool(&mcp.Tool{Name: "greet", Description: "Greet someone.", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	withPrompt.AddPrompt(&mcp.Prompt{Name: "welcome", Description: "A welcome."}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "welcome"}}}}, nil
	})
	for _, c := range []struct {
		name    string
		server  *mcp.Server
		tool    string
		prompts bool
	}{{"no prompts", tools, "up__ping_host", false}, {"prompts", withPrompt, "up__greet", true}} {
		t.Run(c.name, func(t *testing.T) {
			up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return c.server }, &mcp.StreamableHTTPOptions{Stateless: true}))
			t.Cleanup(up.Close)
			env := startGateway(t, []gateway.UpstreamConfig{{Domain: "up", URL: up.URL}}, Exposure{Mode: ExposeEager})
			waitFor(t, c.tool, func() bool { return env.hasTool(c.tool) })
			hs := httptest.NewServer(env.srv.HTTPHandler(HTTPOptions{}))
			t.Cleanup(hs.Close)
			for _, protocol := range []string{"2025-11-25", StatelessProtocol} {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "lister", Version: "1"}, nil).
					Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				caps := cs.InitializeResult().Capabilities
				if declared := caps != nil && caps.Prompts != nil; declared != c.prompts {
					t.Errorf("%s: prompts declared = %v, want %v", protocol, declared, c.prompts)
				}
				res, err := cs.ListPrompts(ctx, nil)
				var w *jsonrpc.Error
				switch {
				case c.prompts && (err != nil || len(res.Prompts) != 1):
					t.Errorf("%s: prompts/list = %v, %v; want the upstream's prompt", protocol, res, err)
				case !c.prompts && (!errors.As(err, &w) || w.Code != jsonrpc.CodeMethodNotFound):
					t.Errorf("%s: prompts/list = %v, %v; want -32601 (prompts not declared)", protocol, res, err)
				}
				if caps != nil && caps.Resources != nil {
					t.Errorf("%s: resources declared; no upstream has any", protocol)
				}
				if rl, err := cs.ListResources(ctx, nil); !errors.As(err, &w) || w.Code != jsonrpc.CodeMethodNotFound {
					t.Errorf("%s: resources/list = %v, %v; want -32601 (resources not declared)", protocol, rl, err)
				}
			}
		})
	}
}
