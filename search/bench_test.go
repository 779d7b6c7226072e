package search

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/internal/synth"
)

// benchSizes are the catalog sizes benchmarked; TOOLSCOUT_BENCH_SIZES
// (e.g. "100000") replaces them.
var benchSizes = func() []int {
	env := os.Getenv("TOOLSCOUT_BENCH_SIZES")
	if env == "" {
		return []int{100, 1000, 10000}
	}
	var out []int
	for _, f := range strings.Split(env, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			panic(fmt.Sprintf("TOOLSCOUT_BENCH_SIZES=%q: want sizes like 1000,100000", env))
		}
		out = append(out, n)
	}
	return out
}()

// BenchmarkBuild indexes a synthetic catalog (keyword + built-in vectors)
// into a fresh on-disk store; it reports the heap the indexes keep.
func BenchmarkBuild(b *testing.B) {
	for _, n := range benchSizes {
		cat, err := synth.Catalog(n, 1)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			var heap uint64
			for i := 0; i < b.N; i++ {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				store, err := store.Open(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				live, _, err := Open(context.Background(), LiveOptions{Store: store, Embedder: embed.NewBuiltin(embed.BuiltinOptions{})}, cat.Specs())
				if err != nil {
					b.Fatal(err)
				}
				eng := live.Engine()
				// Load the vector snapshot too, as the first query would.
				if _, err := eng.Search(context.Background(), Request{Query: "warm up"}); err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				heap = after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc)
				runtime.KeepAlive(eng)
				live.Close()
			}
			b.ReportMetric(float64(heap)/(1<<20), "MiB-heap")
		})
	}
}

// benchEngine indexes a synthetic catalog of n tools in memory with the
// built-in embedder, the query embedding cache off.
func benchEngine(b testing.TB, n int) *Engine {
	cat, err := synth.Catalog(n, 1)
	if err != nil {
		b.Fatal(err)
	}
	store, err := store.Open("")
	if err != nil {
		b.Fatal(err)
	}
	live, _, err := Open(context.Background(), LiveOptions{Store: store, Embedder: embed.NewBuiltin(embed.BuiltinOptions{}), CacheSize: -1}, cat.Specs())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { live.Close() })
	return live.Engine()
}

// timeSearches runs b.N searches of the queries in turn and reports the
// p50 and p95 latency, and the allocations per search (allocs/op, B/op:
// the garbage a query leaves, issue 48 item 3); check, when set, vets
// each response.
func timeSearches(b *testing.B, eng *Engine, queries []string, mode Mode, check func(*Response) error) {
	b.ReportAllocs()
	lat := make([]float64, 0, b.N)
	for i := 0; i < b.N; i++ {
		start := time.Now()
		resp, err := eng.Search(context.Background(), Request{Query: queries[i%len(queries)], Mode: mode, Limit: 10})
		if err == nil && check != nil {
			err = check(resp)
		}
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, float64(time.Since(start).Microseconds())/1000)
	}
	sort.Float64s(lat)
	b.ReportMetric(lat[len(lat)/2], "p50-ms")
	b.ReportMetric(lat[len(lat)*95/100], "p95-ms")
}

// BenchmarkQuery measures one search per mode at each size, with the
// built-in embedder and the query embedding cache off.
func BenchmarkQuery(b *testing.B) {
	queries := synth.Queries(256, 2)
	for _, n := range benchSizes {
		eng := benchEngine(b, n)
		for _, mode := range Modes {
			b.Run(fmt.Sprintf("mode=%s/tools=%d", mode, n), func(b *testing.B) {
				timeSearches(b, eng, queries, mode, nil)
			})
		}
	}
}

// BenchmarkLongQuery measures the requests agents describe a task with: 4
// steps of about 15 words each (Steps splits them), and a 3.9 MB request,
// which the bounds cut (MaxQueryWords); per mode and size, with the
// built-in embedder and the query embedding cache off.
func BenchmarkLongQuery(b *testing.B) {
	short := synth.Queries(1024, 3)
	steps := make([]string, 256)
	for i := range steps {
		q := func(j int) string { return short[(8*i+j)%len(short)] }
		steps[i] = fmt.Sprintf("%s and %s, then %s and %s, after that %s and %s, and then %s and %s.",
			q(0), q(1), q(2), q(3), q(4), q(5), q(6), q(7))
	}
	fourSteps := func(r *Response) error {
		if len(r.Steps) != 4 {
			return fmt.Errorf("%d steps, want 4: %q", len(r.Steps), r.Query)
		}
		return nil
	}
	huge := strings.Repeat(short[0]+" ", (39<<20)/10/(len(short[0])+1))
	for _, n := range benchSizes {
		eng := benchEngine(b, n)
		for _, mode := range Modes {
			b.Run(fmt.Sprintf("steps=4/mode=%s/tools=%d", mode, n), func(b *testing.B) {
				timeSearches(b, eng, steps, mode, fourSteps)
			})
			b.Run(fmt.Sprintf("bytes=3.9M/mode=%s/tools=%d", mode, n), func(b *testing.B) {
				timeSearches(b, eng, []string{huge}, mode, nil)
			})
		}
	}
}

// feedbackBenchEvents returns n seeded events over cat's tools: requests
// written from the tools' descriptions (synth.LabelledQueries), 50
// callers, times over the last 60 days before now.
func feedbackBenchEvents(cat *index.Catalog, n int, now time.Time) []store.FeedbackEvent {
	lq := synth.LabelledQueries(cat, n, 7)
	r := rand.New(rand.NewSource(7))
	out := make([]store.FeedbackEvent, n)
	for i, q := range lq {
		req := q.Query
		if req == "" {
			req = q.Tool.Name
		}
		out[i] = store.FeedbackEvent{Request: req, Tool: q.Tool.QualifiedName, Caller: fmt.Sprintf("user:%d", r.Intn(50)),
			Time: now.Add(-time.Duration(r.Int63n(int64(60 * 24 * time.Hour))))}
	}
	slices.SortFunc(out, func(a, b store.FeedbackEvent) int { return a.Time.Compare(b.Time) })
	return out
}

// BenchmarkFeedbackSearch measures a search through the feedback
// channel holding 0, 1,000 and 10,000 events (the log's cap), on 1,000
// tools, per mode, and one without the channel (serve --feedback off):
// what the channel costs a search should not grow with the events it
// holds (issue 52, item 11).
func BenchmarkFeedbackSearch(b *testing.B) {
	const tools = 1000
	eng := benchEngine(b, tools)
	queries := synth.Queries(256, 2)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	all := feedbackBenchEvents(eng.Catalog(), store.DefaultFeedbackCap, now)
	for _, mode := range []Mode{Keyword, Hybrid} {
		b.Run(fmt.Sprintf("mode=%s/feedback=off", mode), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := eng.Search(context.Background(), Request{Query: queries[i%len(queries)], Mode: mode, Limit: 10}); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, n := range []int{0, 1000, 10000} {
			fb := NewFeedback(all[len(all)-n:], FeedbackOptions{Now: func() time.Time { return now }})
			// The events' vectors, rankings and agreements made, as a
			// serve makes them in the background once its log is
			// loaded (BenchmarkFeedbackLoad).
			if err := fb.Prepare(context.Background(), eng, mode, nil); err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("mode=%s/events=%d", mode, n), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, err := fb.Search(context.Background(), eng, Request{Query: queries[i%len(queries)], Mode: mode, Limit: 10}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkFeedbackLoad measures what a serve does in the background
// once it has loaded its feedback log of 10,000 events (the cap) on
// 1,000 tools: every recorded request's vector, hybrid ranking and
// agreement (Prepare), per load.
func BenchmarkFeedbackLoad(b *testing.B) {
	eng := benchEngine(b, 1000)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	all := feedbackBenchEvents(eng.Catalog(), store.DefaultFeedbackCap, now)
	b.Run(fmt.Sprintf("mode=hybrid/events=%d", len(all)), func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			fb := NewFeedback(all, FeedbackOptions{Now: func() time.Time { return now }})
			if err := fb.Prepare(context.Background(), eng, Hybrid, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkFeedbackRecord measures what recording one run of a new
// request costs the background (its vector, ranking and agreement), on
// 1,000 tools with 9,000 events held (below the cap: no event dropped),
// per event, in hybrid mode.
func BenchmarkFeedbackRecord(b *testing.B) {
	eng := benchEngine(b, 1000)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	all := feedbackBenchEvents(eng.Catalog(), store.DefaultFeedbackCap, now)
	held := all[:9000]
	fresh := all[9000:]
	fb := NewFeedback(held, FeedbackOptions{Now: func() time.Time { return now }})
	if err := fb.Prepare(context.Background(), eng, Hybrid, nil); err != nil {
		b.Fatal(err)
	}
	b.Run(fmt.Sprintf("mode=hybrid/events=%d", len(held)), func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			ev := fresh[i%len(fresh)]
			ev.Request = fmt.Sprintf("%s (%d)", ev.Request, i)
			fb.Add(ev)
			if err := fb.settle(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
