package server

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/synth"
	"github.com/toolscout/toolscout/search"
)

// BenchmarkMetaTools measures discover_tools and get_tool_schema through
// the MCP server and a go-sdk client over in-memory transports: JSON-RPC,
// argument validation and result encoding included.
func BenchmarkMetaTools(b *testing.B) {
	for _, n := range []int{302, 10000} {
		var cat *index.Catalog
		var err error
		if n == 302 {
			cat, err = index.BuiltinCatalog()
		} else {
			cat, err = synth.Catalog(n, 1)
		}
		if err != nil {
			b.Fatal(err)
		}
		store, _ := index.OpenStore("")
		eng, _, err := search.Build(context.Background(), search.BuildOptions{Store: store, Catalog: cat, Embedder: embed.NewBuiltin(embed.BuiltinOptions{}), CacheSize: -1})
		if err != nil {
			b.Fatal(err)
		}
		srv := New(Options{Engine: eng})
		st, ct := mcp.NewInMemoryTransports()
		ss, _ := srv.MCP().Connect(context.Background(), st, nil)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), ct, nil)
		if err != nil {
			b.Fatal(err)
		}
		queries := synth.Queries(256, 3)
		name := cat.Tools()[n/2].QualifiedName
		cases := []struct {
			label string
			args  func(i int) map[string]any
			tool  string
		}{
			{"discover_query", func(i int) map[string]any { return map[string]any{"query": queries[i%len(queries)], "limit": 5} }, DiscoverTools},
			{"get_tool_schema", func(int) map[string]any { return map[string]any{"tool_name": name} }, GetToolSchema},
		}
		for _, c := range cases {
			b.Run(fmt.Sprintf("%s/tools=%d", c.label, n), func(b *testing.B) {
				lat := make([]float64, 0, b.N)
				for i := 0; i < b.N; i++ {
					start := time.Now()
					res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args(i)})
					if err != nil || res.IsError {
						b.Fatalf("%v %v", err, res)
					}
					lat = append(lat, float64(time.Since(start).Microseconds())/1000)
				}
				sort.Float64s(lat)
				b.ReportMetric(lat[len(lat)/2], "p50-ms")
				b.ReportMetric(lat[len(lat)*95/100], "p95-ms")
			})
		}
		cs.Close()
		ss.Close()
		store.Close()
	}
}
