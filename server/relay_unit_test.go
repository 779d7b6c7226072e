package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/relay"

	"github.com/toolscout/toolscout/server/gateway"
)

// big is a text block over relay.MinSize, as JSON.
var big = `{"type":"text","text":"` + strings.Repeat("x", relay.MinSize) + `"}`

// keptSlot is a relay.Slot that keeps result.
func keptSlot(t *testing.T, result string) *relay.Slot {
	t.Helper()
	slot := &relay.Slot{}
	if _, ok := slot.Keep([]byte(result)); !ok {
		t.Fatalf("Keep(%.60q) kept nothing", result)
	}
	return slot
}

// markedBy is a tools/call handler that answers the result slot marks,
// as execute_tool does.
func markedBy(slot *relay.Slot) mcp.MethodHandler {
	return func(context.Context, string, mcp.Request) (mcp.Result, error) {
		return slot.Mark(&mcp.CallToolResult{Content: []mcp.Content{}}), nil
	}
}

// resultJSON is what a client reads of res: content, structured content
// and isError.
func resultJSON(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	b, err := json.Marshal(&mcp.CallToolResult{Content: res.Content, StructuredContent: res.StructuredContent, IsError: res.IsError})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// inMemory connects srv to an in-memory transport and returns the
// client's end.
func inMemory(t *testing.T, srv *Server) mcp.Transport {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	return ct
}

// TestRelayThroughClients: a large result relayed raw reaches a go-sdk
// client as the same result as a small one relayed by the SDK, through
// execute_tool and as a directly listed tool, in both protocol versions.
func TestRelayThroughClients(t *testing.T) {
	t.Parallel()
	env := startGateway(t, []gateway.UpstreamConfig{fakeConfig(t, "fake", "blob")}, Exposure{Mode: ExposeEager})
	waitFor(t, "the fake upstream's tools", func() bool { return env.hasTool("fake__blob") })
	newProto, err := mcp.NewClient(&mcp.Implementation{Name: "new", Version: "1"}, nil).Connect(context.Background(),
		inMemory(t, env.srv), &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer newProto.Close()
	for _, b := range []blobSpec{{Text: 100, Image: 10, IsError: true}, {Text: 300 << 10, Image: 100 << 10, IsError: true}, {Text: 300 << 10}} {
		var want mcp.CallToolResult
		if err := json.Unmarshal(b.result(false), &want); err != nil {
			t.Fatal(err)
		}
		for _, cs := range []*mcp.ClientSession{env.cs, newProto} {
			for _, via := range []string{"execute_tool", "direct"} {
				var res *mcp.CallToolResult
				if via == "direct" {
					res = call(t, cs, "fake__blob", b.args())
				} else {
					res = call(t, cs, ExecuteTool, map[string]any{"tool_name": "fake__blob", "arguments": b.args()})
				}
				if _, leaked := res.Meta["fake"]; leaked {
					t.Errorf("%+v via %s: the upstream's _meta came through", b, via)
				}
				if cs == newProto && res.Meta[mcp.MetaKeyServerInfo] == nil {
					t.Errorf("%+v via %s, new protocol: _meta %v has no serverInfo", b, via, res.Meta)
				}
				if got, want := resultJSON(t, res), resultJSON(t, &want); got != want {
					t.Errorf("%+v via %s: got %.200s, want %.200s", b, via, got, want)
				}
			}
		}
	}
}
