package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/gateway"
)

// refusingUpstream is a go-sdk server over stateless HTTP (2026-07-28)
// whose tools refuse with a JSON-RPC error as the go-sdk's conformance
// fixture does: "sample" answers -32021 (SEP-2575) with the capability it
// needs in error.data to a client that did not declare sampling; "guarded"
// asks for input with requestState "sealed" and answers a retry whose
// state is not that -32602 (SEP-2322: a tampered state is rejected).
func refusingUpstream(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "refusing", Version: "1"}, nil)
	obj := &jsonschema.Schema{Type: "object"}
	s.AddTool(&mcp.Tool{Name: "sample", Description: "Summarize with the client's model.", InputSchema: obj},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if c := req.ClientCapabilities(); c != nil && c.Sampling != nil {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sampled"}}}, nil
			}
			data, _ := json.Marshal(mcp.MissingRequiredClientCapabilityData{RequiredCapabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}})
			return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "sampling capability required", Data: data}
		})
	s.AddTool(&mcp.Tool{Name: "guarded", Description: "Run after the user confirms.", InputSchema: obj},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			switch req.Params.RequestState {
			case "":
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{Message: "Go?",
					RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"ok": {Type: "boolean"}}}}},
					RequestState: "sealed"}, nil
			case "sealed":
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "confirmed"}}}, nil
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid requestState: tampered"}
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestUpstreamRefusalPassThrough: a direct call that the tool's server
// refuses with a JSON-RPC error gets that error through toolscout, code,
// message and data, as it would directly (over HTTP in 2026-07-28 with
// the status the code calls for): -32021 for a client that did not
// declare sampling, -32602 for a retry with a tampered requestState. Not
// a result, which would read as the tool having run. execute_tool, the
// model's, answers the refusal as a failed tool, saying what the server
// said.
func TestUpstreamRefusalPassThrough(t *testing.T) {
	t.Parallel()
	env := startGateway(t, []gateway.UpstreamConfig{{Domain: "refusing", URL: refusingUpstream(t)}}, Exposure{Mode: ExposeEager})
	waitFor(t, "refusing__guarded", func() bool { return env.hasTool("refusing__guarded") })
	hs := httptest.NewServer(env.srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{}, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: StatelessProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	t.Run("missing capability", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "refusing__sample"})
		var w *jsonrpc.Error
		if !errors.As(err, &w) || w.Code != mcp.CodeMissingRequiredClientCapabilities {
			t.Fatalf("refusing__sample = %v, %v; want the upstream's JSON-RPC error %d", res, err, mcp.CodeMissingRequiredClientCapabilities)
		}
		var data mcp.MissingRequiredClientCapabilityData
		if json.Unmarshal(w.Data, &data) != nil || data.RequiredCapabilities == nil || data.RequiredCapabilities.Sampling == nil {
			t.Errorf("error.data = %s, want the upstream's requiredCapabilities with sampling", w.Data)
		}
		if !strings.Contains(w.Message, "sampling capability required") {
			t.Errorf("error.message = %q, want the upstream's", w.Message)
		}
		// The HTTP status of SEP-2575 for -32021: 400.
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"refusing__sample","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", StatelessProtocol)
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "refusing__sample")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("HTTP status of the refused call = %d, want 400", resp.StatusCode)
		}
	})

	t.Run("tampered request state", func(t *testing.T) {
		first, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "refusing__guarded"})
		if err != nil || first.RequestState != "sealed" || first.InputRequests["confirm"] == nil {
			t.Fatalf("refusing__guarded = %+v, %v; want the upstream's input request with state sealed", first, err)
		}
		answer := mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "refusing__guarded", InputResponses: answer, RequestState: first.RequestState + "-TAMPERED"})
		var w *jsonrpc.Error
		if !errors.As(err, &w) || w.Code != jsonrpc.CodeInvalidParams {
			t.Fatalf("retry with a tampered state = %v, %v; want the upstream's JSON-RPC error %d", res, err, jsonrpc.CodeInvalidParams)
		}
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "refusing__guarded", InputResponses: answer, RequestState: first.RequestState})
		if err != nil || text(res) != "confirmed" {
			t.Errorf("retry with the state as it was = %v, %v; want the upstream's result", res, err)
		}
	})

	t.Run("execute_tool", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ExecuteTool, Arguments: map[string]any{"tool_name": "refusing__sample"}})
		if err != nil || !res.IsError || !strings.Contains(text(res), "sampling capability required") {
			t.Errorf("execute_tool refusing__sample = %v, %v; want a failed tool saying what the server said", res, err)
		}
	})
}
