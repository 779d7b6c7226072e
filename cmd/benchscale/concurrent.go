package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/search"
)

// modes are the search modes measured, in table order.
var modes = []search.Mode{search.Keyword, search.Semantic, search.Hybrid}

// latencies is what one concurrency level of one mode measured: p50 and
// p99 over every searcher's queries.
type latencies struct{ p50, p99 time.Duration }

// percentiles returns the p50 and p99 of lat (sorted in place).
func percentiles(lat []time.Duration) latencies {
	slices.Sort(lat)
	return latencies{lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]}
}

// parseCounts parses -concurrency: positive numbers separated by commas.
func parseCounts(flagName, list string) ([]int, error) {
	var out []int
	for _, s := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s %q: want positive numbers separated by commas", flagName, list)
		}
		out = append(out, n)
	}
	return out, nil
}

// searchers runs c searchers at once, each sending every query of qs in
// turn (searcher i starting at query i), and returns the latencies of
// all c × len(qs) queries. The first error stops them all.
func searchers(ctx context.Context, c int, qs []string, one func(ctx context.Context, searcher int, q string) error) ([]time.Duration, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	lat := make([][]time.Duration, c)
	var wg sync.WaitGroup
	for s := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat[s] = make([]time.Duration, 0, len(qs))
			for i := range qs {
				if ctx.Err() != nil {
					return
				}
				q := qs[(s+i)%len(qs)]
				t := time.Now()
				if err := one(ctx, s, q); err != nil {
					cancel(fmt.Errorf("searcher %d, query %q: %w", s, q, err))
					return
				}
				lat[s] = append(lat[s], time.Since(t))
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return slices.Concat(lat...), nil
}

// inProcess opens the data dir that `toolscout index` built, read-only,
// with the search package as `toolscout serve` does, and measures
// search.Engine directly: the allocations and bytes a query leaves
// (runtime.MemStats over one searcher's queries) and the latencies with
// each number of concurrent searchers, per mode of which.
func inProcess(ctx context.Context, catalog, data string, qs []string, counts []int, which []search.Mode, r *row) error {
	src, err := index.ReadCatalogSource([]string{catalog})
	if err != nil {
		return err
	}
	st, err := store.OpenWith(data, store.Options{Set: &store.Set{Catalogs: []string{catalog}}, ReadOnly: true, Catalog: src})
	if err != nil {
		return fmt.Errorf("open the data dir: %w", err)
	}
	live, err := search.NewLive(search.LiveOptions{Store: st})
	if err != nil {
		st.Close()
		return err
	}
	defer live.Close()
	_, specs, err := st.CatalogSpecs()
	if err != nil {
		return err
	}
	if _, err := live.Load(ctx, specs, embed.NewBuiltin(embed.BuiltinOptions{}), nil); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	eng := live.Engine()
	// Warm up every mode before any is timed: the vector snapshot loads
	// on the first query, and the engine builds its domain text in the
	// background after a load (at 1M tools about 650 MB allocated), which
	// would otherwise run beside, and leave its garbage to, the first
	// mode measured only.
	for _, mode := range append([]search.Mode{search.Hybrid}, which...) { // hybrid waits for the domain text
		if _, err := eng.Search(ctx, search.Request{Query: qs[0], Mode: mode, Limit: 10}); err != nil {
			return fmt.Errorf("%s: %w", mode, err)
		}
	}
	for _, mode := range which {
		query := func(ctx context.Context, _ int, q string) error {
			_, err := eng.Search(ctx, search.Request{Query: q, Mode: mode, Limit: 10})
			return err
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := searchers(ctx, 1, qs, query); err != nil {
			return fmt.Errorf("%s: %w", mode, err)
		}
		runtime.ReadMemStats(&after)
		n := float64(len(qs))
		key := string(mode)
		r.allocs[key] = append(r.allocs[key], float64(after.Mallocs-before.Mallocs)/n)
		r.bytes[key] = append(r.bytes[key], float64(after.TotalAlloc-before.TotalAlloc)/n)
		fmt.Fprintf(os.Stderr, "%d tools: in-process %s: %.0f allocs, %.0f bytes a query\n", r.tools, mode, r.allocs[key][len(r.allocs[key])-1], r.bytes[key][len(r.bytes[key])-1])
		for _, c := range counts {
			runtime.ReadMemStats(&before)
			lat, err := searchers(ctx, c, qs, query)
			if err != nil {
				return fmt.Errorf("%s, %d searchers: %w", mode, c, err)
			}
			runtime.ReadMemStats(&after)
			k := fmt.Sprintf("%s/%d", mode, c)
			r.inproc[k] = append(r.inproc[k], percentiles(lat))
			// The collections during the searches, and their stop-the-world
			// pauses summed: what the garbage of the queries cost them.
			fmt.Fprintf(os.Stderr, "%d tools: in-process %s, %d at once: p50/p99 %s ms; %d GCs, pauses %.2f ms, %.0f bytes a query\n", r.tools, mode, c, pcts(r.inproc[k][len(r.inproc[k])-1:]),
				after.NumGC-before.NumGC, float64(after.PauseTotalNs-before.PauseTotalNs)/1e6, float64(after.TotalAlloc-before.TotalAlloc)/float64(len(lat)))
		}
	}
	return nil
}

// overHTTP starts `toolscout serve --http` on a free loopback port and
// measures discover_tools round trips with each number of concurrent
// searchers, each its own MCP session (go-sdk client, Streamable HTTP),
// per mode.
func overHTTP(ctx context.Context, bin string, args, qs []string, counts []int, r *row) error {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, append([]string{"serve", "--log-level", "error", "--http", addr}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()
	base := "http://" + addr
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	if err := waitReady(ctx, hc, base, exited); err != nil {
		return fmt.Errorf("%w: %s", err, stderr.String())
	}
	most := slices.Max(counts)
	sessions := make([]*mcp.ClientSession, most)
	defer func() {
		for _, s := range sessions {
			if s != nil {
				s.Close()
			}
		}
	}()
	for i := range sessions {
		client := mcp.NewClient(&mcp.Implementation{Name: "benchscale", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
		if err != nil {
			return fmt.Errorf("session %d: %w", i, err)
		}
		sessions[i] = cs
	}
	for _, mode := range modes {
		discover := func(ctx context.Context, s int, q string) error {
			res, err := sessions[s].CallTool(ctx, &mcp.CallToolParams{Name: "discover_tools", Arguments: map[string]any{"query": q, "search_mode": string(mode), "limit": 10}})
			if err != nil {
				return err
			}
			if res.IsError {
				return errors.New("discover_tools answered an error")
			}
			return nil
		}
		for s := range most { // each session's first call of the mode
			if err := discover(ctx, s, qs[0]); err != nil {
				return fmt.Errorf("%s: %w", mode, err)
			}
		}
		for _, c := range counts {
			lat, err := searchers(ctx, c, qs, discover)
			if err != nil {
				return fmt.Errorf("%s, %d sessions: %w", mode, c, err)
			}
			k := fmt.Sprintf("%s/%d", mode, c)
			r.http[k] = append(r.http[k], percentiles(lat))
			fmt.Fprintf(os.Stderr, "%d tools: HTTP %s, %d sessions: p50/p99 %s ms\n", r.tools, mode, c, pcts(r.http[k][len(r.http[k])-1:]))
		}
	}
	return nil
}

// freeLoopbackAddr returns a 127.0.0.1 address with a port free a moment
// ago.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitReady polls GET /readyz until it answers 200, the server exits or
// ten minutes pass (a 1M-tool data dir loads for a while).
func waitReady(ctx context.Context, hc *http.Client, base string, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return errors.New("serve --http exited")
		case <-ctx.Done():
			return fmt.Errorf("serve --http not ready: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
