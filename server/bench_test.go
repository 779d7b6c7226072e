package server

import (
	"context"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
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
		live := benchLive(b, cat, embed.NewBuiltin(embed.BuiltinOptions{}))
		srv := New(Options{Live: live})
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
	}
}

// BenchmarkHTTPSessions measures discover_tools (hybrid, built-in catalog
// and embedder) over Streamable HTTP on loopback, from 1, 4 and 16
// concurrent clients, with sessions (2025-11-25) and without (the
// stateless protocol; in dynamic mode also with a toolset in every
// request), in meta and dynamic exposure: throughput (calls/s) and
// latency percentiles across all clients.
//
// TOOLSCOUT_BENCH_SIZES=10000 runs it on a synthetic catalog of that
// many tools instead of the built-in one.
func BenchmarkHTTPSessions(b *testing.B) {
	cat, err := index.BuiltinCatalog()
	if env := os.Getenv("TOOLSCOUT_BENCH_SIZES"); env != "" {
		n, perr := strconv.Atoi(strings.Split(env, ",")[0])
		if perr != nil || n < 1 {
			b.Fatalf("TOOLSCOUT_BENCH_SIZES=%q: want a number of tools", env)
		}
		cat, err = synth.Catalog(n, 1)
	}
	if err != nil {
		b.Fatal(err)
	}
	live := benchLive(b, cat, embed.NewBuiltin(embed.BuiltinOptions{}))
	queries := synth.Queries(256, 3)
	for _, mode := range []Mode{ExposeMeta, ExposeDynamic} {
		srv := New(Options{Live: live, Expose: Exposure{Mode: mode}})
		hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
		for _, sessions := range []int{1, 4, 16} {
			for _, protocol := range []string{"2025-11-25", StatelessProtocol} {
				b.Run(fmt.Sprintf("expose=%s/sessions=%d/protocol=%s", mode, sessions, protocol), func(b *testing.B) {
					benchHTTPCalls(b, hs.URL, sessions, protocol, "", queries)
				})
			}
			if mode == ExposeDynamic {
				// Every request carries a toolset (github: 25 tools),
				// answered by a view made for it.
				toolset := encodeToolset(map[string]bool{"github": true})
				b.Run(fmt.Sprintf("expose=%s/sessions=%d/protocol=%s/toolset", mode, sessions, StatelessProtocol), func(b *testing.B) {
					benchHTTPCalls(b, hs.URL, sessions, StatelessProtocol, toolset, queries)
				})
			}
		}
		hs.Close()
	}
}

// benchHTTPCalls runs b.N discover_tools calls from clients concurrent
// clients of the protocol (sessions, or stateless requests) and reports
// throughput and latency percentiles across them.
func benchHTTPCalls(b *testing.B, url string, clients int, protocol, toolset string, queries []string) {
	var meta mcp.Meta
	if toolset != "" {
		meta = mcp.Meta{ToolsetMetaKey: toolset}
	}
	css := make([]*mcp.ClientSession, clients)
	for i := range css {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		css[i] = cs
	}
	var mu sync.Mutex
	lat := make([]float64, 0, b.N)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for _, cs := range css {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				t0 := time.Now()
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: DiscoverTools, Meta: maps.Clone(meta),
					Arguments: map[string]any{"query": queries[i%int64(len(queries))], "limit": 5}})
				if err != nil || res.IsError {
					b.Error(err)
					return
				}
				d := float64(time.Since(t0).Microseconds()) / 1000
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Float64s(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "calls/s")
		b.ReportMetric(lat[len(lat)/2], "p50-ms")
		b.ReportMetric(lat[len(lat)*99/100], "p99-ms")
	}
}

// BenchmarkHTTPSessionMemory measures the heap that one open, idle
// Streamable HTTP session holds, in meta and dynamic exposure.
func BenchmarkHTTPSessionMemory(b *testing.B) {
	cat, _ := index.BuiltinCatalog()
	live := benchLive(b, cat, nil)
	const open = 200
	for _, mode := range []Mode{ExposeMeta, ExposeDynamic} {
		b.Run("expose="+string(mode), func(b *testing.B) {
			for it := 0; it < b.N; it++ {
				srv := New(Options{Live: live, Expose: Exposure{Mode: mode}})
				hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
				heap := func() uint64 {
					runtime.GC()
					var m runtime.MemStats
					runtime.ReadMemStats(&m)
					return m.HeapAlloc
				}
				before := heap()
				var css []*mcp.ClientSession
				for i := 0; i < open; i++ {
					cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(),
						&mcp.StreamableClientTransport{Endpoint: hs.URL}, sessionOpts)
					if err != nil {
						b.Fatal(err)
					}
					css = append(css, cs)
				}
				after := heap()
				b.ReportMetric(float64(after-before)/open/1024, "KiB/session")
				for _, cs := range css {
					cs.Close()
				}
				hs.Close()
			}
		})
	}
}

// benchLive indexes cat in memory (vectors too when emb is set) without
// a query cache.
func benchLive(b *testing.B, cat *index.Catalog, emb embed.Embedder) *search.Live {
	b.Helper()
	store, err := store.Open("")
	if err != nil {
		b.Fatal(err)
	}
	live, _, err := search.Open(context.Background(), search.LiveOptions{Store: store, Embedder: emb, CacheSize: -1}, cat.Specs())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { live.Close() })
	return live
}

// BenchmarkRelayLargeResult measures what relaying one large upstream
// result through execute_tool costs (issue 26): a fake stdio upstream
// answers the blob tool, toolscout serves over its stdio transport, and
// the client streams each answer to nowhere. It reports the heap's peak
// over its size before the calls (sampled every 200 µs) and the bytes
// allocated, both per byte relayed, and the worst peak of the runs.
func BenchmarkRelayLargeResult(b *testing.B) {
	for _, c := range []struct {
		blob  blobSpec
		calls int
	}{
		{blobSpec{Text: 1 << 20}, 1},
		{blobSpec{Text: 16 << 20, Image: 4 << 20}, 1},
		{blobSpec{Text: 60 << 20}, 1},
		{blobSpec{Text: 60 << 20}, 4},
	} {
		b.Run(fmt.Sprintf("text=%dMiB/image=%dMiB/calls=%d", c.blob.Text>>20, c.blob.Image>>20, c.calls), func(b *testing.B) {
			e := startRelay(b)
			e.call(1, blobSpec{Text: 1000}, false)
			var relayed, allocs, worst float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				p := startHeapPeak()
				b.StartTimer()
				n := 0
				for _, a := range e.call(c.calls, c.blob, false) {
					n += a.bytes
				}
				b.StopTimer()
				over, alloc := p.Stop()
				b.StartTimer()
				relayed += float64(n)
				allocs += float64(alloc)
				worst = max(worst, float64(over)/float64(n))
				b.SetBytes(int64(n))
			}
			b.ReportMetric(worst, "peak-heap-bytes/relayed-byte")
			b.ReportMetric(allocs/relayed, "alloc-bytes/relayed-byte")
		})
	}
}

// BenchmarkAutoDecision measures auto mode's decision on a new catalog
// (listingCost: counting tools/list entries with o200k_base until the
// budget is reached) on synthetic catalogs (seed 1): it stops at the
// budget, so it costs about the same at any size past it.
func BenchmarkAutoDecision(b *testing.B) {
	for _, n := range []int{100, 1000, 10000, 50000} {
		cat, err := synth.Catalog(n, 1)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			for b.Loop() {
				listingCost(cat, DefaultAutoBudget)
			}
		})
	}
}
