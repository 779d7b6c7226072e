// Package echoupstream is an MCP server (the go-sdk's, stateless
// Streamable HTTP) that echoes the Authorization header it was sent in
// every place a server can: for tests that what an upstream sends back
// never hands toolscout's credentials to its callers (issue 52).
package echoupstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Refusals: Handler's refuse, a server that refuses every request.
const (
	Refuse401 = "401"
	Refuse403 = "403"
)

// Handler returns the echoing server. It echoes the Authorization of
// each request in: its name and instructions; tool whoami's title,
// description and schema, and its result's text ("you sent X") and
// structuredContent; a JSON-RPC error of tools "rpc"; a 500 (tool
// "boom") or a 400 (tool "bad") whose body is a JSON-RPC error; a
// WWW-Authenticate with a 401 (error_description) or a 403 (scope),
// always when refuse is Refuse401 or Refuse403, else for the tools/call
// of "refuse401" and "refuse403". Each refusal's realm is "up" and its
// error code invalid_token (401) or insufficient_scope (403).
func Handler(refuse string) http.Handler {
	server := func(r *http.Request) *mcp.Server {
		got := r.Header.Get("Authorization")
		s := mcp.NewServer(&mcp.Implementation{Name: "echo " + got, Version: "1"}, &mcp.ServerOptions{Instructions: "I was sent " + got})
		schema := map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "string", "description": "sent " + got}}}
		s.AddTool(&mcp.Tool{Name: "whoami", Title: "Who " + got, Description: "Echoes what it was sent: " + got, InputSchema: schema},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				got := req.Extra.Header.Get("Authorization")
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "you sent " + got}},
					StructuredContent: map[string]any{"sent": got, "list": []any{got}}}, nil
			})
		for _, name := range []string{"rpc", "boom", "bad", "refuse401", "refuse403"} {
			s.AddTool(&mcp.Tool{Name: name, Description: "Fails.", InputSchema: map[string]any{"type": "object"}},
				func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return nil, &jsonrpc.Error{Code: -32000, Message: "bad credentials: " + req.Extra.Header.Get("Authorization")}
				})
		}
		return s
	}
	h := mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		json.Unmarshal(body, &msg)
		switch {
		case refuse == Refuse401 || msg.Params.Name == "refuse401":
			w.Header().Set("WWW-Authenticate", `Bearer realm="up", error="invalid_token", error_description="bad token `+got+`"`)
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, "refused %s", got)
		case refuse == Refuse403 || msg.Params.Name == "refuse403":
			w.Header().Set("WWW-Authenticate", `Bearer realm="up", error="insufficient_scope", scope="`+got+`"`)
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, "refused %s", got)
		case msg.Params.Name == "boom" || msg.Params.Name == "bad":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(map[string]int{"boom": http.StatusInternalServerError, "bad": http.StatusBadRequest}[msg.Params.Name])
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"internal error: got %s"}}`, msg.ID, got)
		default:
			h.ServeHTTP(w, r)
		}
	})
}
