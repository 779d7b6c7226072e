package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/gateway"
)

// BenchmarkExecutePlain measures a plain execute_tool (no progress
// token, no request of the upstream's, a small result) through toolscout
// from a go-sdk client over in-memory transports, to an upstream over
// stdio (the fake upstream's echo) and over Streamable HTTP (a go-sdk
// server on loopback): p50 and p99 of the call's latency. It is the
// yardstick that passing the upstreams' requests and notifications
// through (issue 51) must not slow down.
func BenchmarkExecutePlain(b *testing.B) {
	echo := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	echo.AddTool(&mcp.Tool{Name: "echo", Description: "Echo the text.", InputSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"text": {Type: "string"}}}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return echo }, nil))
	b.Cleanup(hs.Close)
	for _, up := range []struct {
		name string
		cfg  gateway.UpstreamConfig
	}{
		{"stdio", fakeConfig(b, "fake", "ok")},
		{"http", gateway.UpstreamConfig{Domain: "fake", URL: hs.URL}},
	} {
		b.Run(up.name, func(b *testing.B) {
			env := startGatewayServer(b, gateway.Options{Upstreams: []gateway.UpstreamConfig{up.cfg}}, Options{Expose: Exposure{Mode: ExposeMeta}})
			waitFor(b, "fake__echo", func() bool { return env.hasTool("fake__echo") })
			args := map[string]any{"tool_name": "fake__echo", "arguments": map[string]any{"text": "hello"}}
			lat := make([]float64, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				res, err := env.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ExecuteTool, Arguments: args})
				if err != nil || res.IsError {
					b.Fatalf("execute_tool: %v %v", err, res)
				}
				lat = append(lat, float64(time.Since(start).Microseconds())/1000)
			}
			b.StopTimer()
			sort.Float64s(lat)
			b.ReportMetric(lat[len(lat)/2], "p50-ms")
			b.ReportMetric(lat[min(len(lat)-1, len(lat)*99/100)], "p99-ms")
		})
	}
}
