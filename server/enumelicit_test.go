package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/gateway"
)

// enumSchema is the requested schema of the go-sdk conformance fixture's
// test_elicitation_sep1330_enums: the enum forms of SEP-1330, the legacy
// enumNames among them.
const enumSchema = `{"type":"object","properties":{
 "untitledSingle":{"type":"string","enum":["option1","option2","option3"]},
 "titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"}]},
 "legacyEnum":{"type":"string","enum":["opt1","opt2"],"enumNames":["Option One","Option Two"]},
 "untitledMulti":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2"]}},
 "titledMulti":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"string","anyOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"}]}}}}`

// TestElicitationEnumsPassThrough: an upstream's elicitation with the
// enum schemas of SEP-1330 reaches the client through toolscout with its
// schema as the upstream wrote it: toolscout's go-sdk client does not
// refuse it first.
func TestElicitationEnumsPassThrough(t *testing.T) {
	t.Parallel()
	var schema map[string]any
	if err := json.Unmarshal([]byte(enumSchema), &schema); err != nil {
		t.Fatal(err)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "enums", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "choose", Description: "Let the user choose options.", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Choose", RequestedSchema: schema})
			if err != nil {
				return nil, err
			}
			b, _ := json.Marshal(res.Content)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action + " " + string(b)}}}, nil
		})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(up.Close)
	env := startGateway(t, []gateway.UpstreamConfig{{Domain: "enums", URL: up.URL}}, Exposure{Mode: ExposeEager})
	waitFor(t, "enums__choose", func() bool { return env.hasTool("enums__choose") })
	hs := httptest.NewServer(env.srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got json.RawMessage
	// The client answers as the TypeScript SDK's (the suite's) does: the
	// go-sdk's own client refuses this schema before its handler runs
	// (the titled multi-select whose items say "type": "string"), so the
	// answer is given in a receiving middleware, ahead of that check.
	client := mcp.NewClient(&mcp.Implementation{Name: "chooser", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("not reached")
		},
	})
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			er, ok := req.(*mcp.ElicitRequest)
			if !ok {
				return next(ctx, method, req)
			}
			got, _ = json.Marshal(er.Params.RequestedSchema)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"untitledSingle": "option1", "titledSingle": "value1", "legacyEnum": "opt1",
				"untitledMulti": []any{"option1", "option2"}, "titledMulti": []any{"value1"}}}, nil
		}
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// The call itself fails whatever toolscout does: the go-sdk's
	// ServerSession.Elicit, the upstream's as toolscout's, checks the
	// answer against the schema it refuses. The go-sdk's conformance
	// server fails it so too when called directly; the suite checks that
	// the client was asked, and with what.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "enums__choose"})
	if got == nil {
		t.Fatalf("the client was not asked; enums__choose = %v, %v", res, err)
	}
	var sent, want any
	_ = json.Unmarshal(got, &sent)
	_ = json.Unmarshal([]byte(enumSchema), &want)
	if a, b := mustJSON(t, sent), mustJSON(t, want); a != b {
		t.Errorf("requested schema the client got:\n%s\nwant the upstream's:\n%s", a, b)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
