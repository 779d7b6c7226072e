// Command benchscale measures how toolscout scales with the catalog: for
// seeded synthetic catalogs of each size it times the toolscout binary
// (cold index, re-index with nothing and with 1% changed, one-shot search,
// serve start to first discover_tools answer, query latency per mode over
// stdio) and its peak memory; then, per mode, p50/p99 with 1, 4 and 16
// concurrent searchers in-process (search.Engine on the data dir, with the
// allocations and bytes a query leaves) and over HTTP (`toolscout serve
// --http` on a loopback port, one go-sdk client session per searcher), and
// prints the medians as Markdown tables.
//
//	go build -o bin/toolscout ./cmd/toolscout
//	go run ./cmd/benchscale -bin bin/toolscout -sizes 1000,10000 -runs 3
//	go run ./cmd/benchscale -sizes 1000000 -runs 1 -queries 50 -reindex=false
//
// `make bench-scale` runs it on 1k, 10k, 50k and 100k tools.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/synth"
	"github.com/toolscout/toolscout/search"
)

func main() {
	bin := flag.String("bin", "bin/toolscout", "the toolscout binary to measure")
	sizes := flag.String("sizes", "1000,10000,50000,100000", "comma-separated catalog sizes (tools)")
	runs := flag.Int("runs", 3, "runs per size; the table shows medians")
	perDomain := flag.Int("per-domain", 100, "tools per domain")
	queries := flag.Int("queries", 200, "queries per mode for the latency figures")
	seed := flag.Int64("seed", 1, "catalog and query seed")
	work := flag.String("work", "", "scratch folder (default: a temporary one, removed after)")
	concurrency := flag.String("concurrency", "1,4,16", "comma-separated numbers of concurrent searchers for the in-process and HTTP figures")
	reindex := flag.Bool("reindex", true, "also time the re-index with nothing and with 1% changed")
	inproc := flag.Bool("inprocess", true, "measure search.Engine in this process on the data dir: latency by searchers, allocations per query")
	overHTTP := flag.Bool("http", true, "measure discover_tools over `toolscout serve --http` by concurrent sessions")
	var po profileOptions
	flag.StringVar(&po.reuse, "reuse", "", "a run folder that -work kept (e.g. WORK/n100000-r0): measure only the in-process searchers on its data dir, without indexing again")
	flag.StringVar(&po.modes, "modes", "keyword,semantic,hybrid", "with -reuse: the modes measured, comma-separated")
	flag.IntVar(&po.rounds, "rounds", 1, "with -reuse: rounds of the in-process searchers; the table shows medians")
	flag.StringVar(&po.cpu, "cpuprofile", "", "with -reuse: write a CPU profile of the in-process searchers to this file")
	flag.StringVar(&po.mutex, "mutexprofile", "", "with -reuse: write a mutex contention profile to this file")
	flag.IntVar(&po.mutexFraction, "mutexprofilefraction", 1, "with -mutexprofile: report 1 in this many contention events")
	flag.StringVar(&po.block, "blockprofile", "", "with -reuse: write a goroutine blocking profile to this file")
	flag.IntVar(&po.blockRateNanos, "blockprofilerate", 1, "with -blockprofile: sample one blocking event per this many nanoseconds blocked")
	flag.StringVar(&po.mem, "memprofile", "", "with -reuse: write a heap allocation profile of the in-process searchers to this file (go tool pprof -sample_index=alloc_space)")
	flag.IntVar(&po.memRate, "memprofilerate", 4096, "with -memprofile: sample one allocation per this many bytes allocated")
	flag.StringVar(&po.traceFile, "trace", "", "with -reuse: write an execution trace of the in-process searchers to this file (go tool trace)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: benchscale [flags]\n\nMeasures toolscout on seeded synthetic catalogs of each size and prints a\nMarkdown table of medians.\n\nFlags:\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	o := options{concurrency: *concurrency, reindex: *reindex, inProcess: *inproc, http: *overHTTP}
	if po.reuse != "" {
		if err := runReused(po, *queries, *seed, o); err != nil {
			fmt.Fprintln(os.Stderr, "benchscale:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*bin, *sizes, *runs, *perDomain, *queries, *seed, *work, o); err != nil {
		fmt.Fprintln(os.Stderr, "benchscale:", err)
		os.Exit(1)
	}
}

// options are the flags that choose what is measured.
type options struct {
	concurrency string
	counts      []int // parsed concurrency
	reindex     bool
	inProcess   bool
	http        bool
}

// row is one size's measurements, one value per run.
type row struct {
	tools                                   int
	cold, unchanged, changed, search, first []time.Duration
	coldRSS, searchRSS, serveRSS            []float64 // MB
	dataMB                                  []float64
	p50, p99                                map[string][]time.Duration
	// inproc and http are keyed "mode/searchers"; allocs and bytes
	// (per query, in-process) by mode.
	inproc, http  map[string][]latencies
	allocs, bytes map[string][]float64
}

func run(bin string, sizeList string, runs, perDomain, nQueries int, seed int64, work string, o options) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("-bin: %w (build it: go build -o bin/toolscout ./cmd/toolscout)", err)
	}
	var sizes []int
	for _, s := range strings.Split(sizeList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("-sizes %q: want positive numbers separated by commas", sizeList)
		}
		sizes = append(sizes, n)
	}
	if runs < 1 || nQueries < 1 || perDomain < 1 {
		return errors.New("-runs, -queries and -per-domain must be at least 1")
	}
	counts, err := parseCounts("-concurrency", o.concurrency)
	if err != nil {
		return err
	}
	o.counts = counts
	if work == "" {
		dir, err := os.MkdirTemp("", "benchscale-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		work = dir
	}
	qs := synth.Queries(nQueries, seed+1)
	var rows []*row
	for _, n := range sizes {
		fmt.Fprintf(os.Stderr, "%d tools: generating\n", n)
		specs := synth.Specs(n, perDomain, seed)
		r := &row{tools: n, p50: map[string][]time.Duration{}, p99: map[string][]time.Duration{},
			inproc: map[string][]latencies{}, http: map[string][]latencies{}, allocs: map[string][]float64{}, bytes: map[string][]float64{}}
		for i := 0; i < runs; i++ {
			fmt.Fprintf(os.Stderr, "%d tools: run %d of %d\n", n, i+1, runs)
			if err := measure(bin, filepath.Join(work, fmt.Sprintf("n%d-r%d", n, i)), specs, qs, r, o); err != nil {
				return fmt.Errorf("%d tools: %w", n, err)
			}
		}
		rows = append(rows, r)
	}
	printTable(os.Stdout, rows, runs, o)
	return nil
}

// writeCatalog writes the catalog file of specs to path, one domain at a
// time (at 1M tools the file is 400 MB: never held whole in memory); with
// changed, 1% of the tools' descriptions are changed.
func writeCatalog(path string, specs []index.DomainSpec, changed bool) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	step := 100
	if n := toolCount(specs); n < 100 {
		step = max(n, 1)
	}
	i := 0
	if _, err := w.WriteString(`{"domains":[`); err != nil {
		return err
	}
	for d, spec := range specs {
		if changed {
			spec.Tools = slices.Clone(spec.Tools)
			for t := range spec.Tools {
				if i%step == 0 {
					spec.Tools[t].Description += " Changed for the benchmark."
				}
				i++
			}
		}
		js, err := json.Marshal(spec)
		if err != nil {
			return err
		}
		if d > 0 {
			w.WriteByte(',')
		}
		if _, err := w.Write(js); err != nil {
			return err
		}
	}
	if _, err := w.WriteString("]}\n"); err != nil {
		return err
	}
	return w.Flush()
}

func toolCount(specs []index.DomainSpec) int {
	n := 0
	for _, s := range specs {
		n += len(s.Tools)
	}
	return n
}

// measure runs every step once on a fresh data dir and adds the figures
// to r.
func measure(bin, dir string, specs []index.DomainSpec, qs []string, r *row, o options) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	catalog := filepath.Join(dir, "catalog.json")
	data := filepath.Join(dir, "data")
	if err := writeCatalog(catalog, specs, false); err != nil {
		return err
	}
	args := []string{"--catalog", catalog, "--data-dir", data, "--embedder", "builtin"}
	d, rss, err := timed(bin, append([]string{"index"}, args...)...)
	if err != nil {
		return fmt.Errorf("cold index: %w", err)
	}
	r.cold, r.coldRSS = append(r.cold, d), append(r.coldRSS, rss)
	size, err := dirMB(data)
	if err != nil {
		return err
	}
	r.dataMB = append(r.dataMB, size)
	// Each figure also goes to stderr as it is taken: a run at 1M tools
	// that is stopped early still says what it measured.
	fmt.Fprintf(os.Stderr, "%d tools: cold index %.1f s, peak RSS %.0f MB, data dir %.0f MB\n", r.tools, d.Seconds(), rss, size)
	if o.reindex {
		if d, _, err = timed(bin, append([]string{"index"}, args...)...); err != nil {
			return fmt.Errorf("re-index: %w", err)
		}
		r.unchanged = append(r.unchanged, d)
		// The data dir keeps a set per catalog path: change the file in place.
		if err := writeCatalog(catalog, specs, true); err != nil {
			return err
		}
		if d, _, err = timed(bin, append([]string{"index"}, args...)...); err != nil {
			return fmt.Errorf("re-index 1%%: %w", err)
		}
		r.changed = append(r.changed, d)
	}
	if d, rss, err = timed(bin, append(append([]string{"search"}, args...), "--limit", "5", qs[0])...); err != nil {
		return fmt.Errorf("search: %w", err)
	}
	r.search, r.searchRSS = append(r.search, d), append(r.searchRSS, rss)
	fmt.Fprintf(os.Stderr, "%d tools: one-shot search %.2f s, peak RSS %.0f MB\n", r.tools, d.Seconds(), rss)
	if err := serve(bin, args, qs, r); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%d tools: serve start to first answer %.2f s, then over stdio p50/p99 ms keyword %s / %s, semantic %s / %s, hybrid %s / %s, server RSS %.0f MB\n",
		r.tools, r.first[len(r.first)-1].Seconds(), ms(r.p50["keyword"][len(r.p50["keyword"])-1:]), ms(r.p99["keyword"][len(r.p99["keyword"])-1:]),
		ms(r.p50["semantic"][len(r.p50["semantic"])-1:]), ms(r.p99["semantic"][len(r.p99["semantic"])-1:]),
		ms(r.p50["hybrid"][len(r.p50["hybrid"])-1:]), ms(r.p99["hybrid"][len(r.p99["hybrid"])-1:]), r.serveRSS[len(r.serveRSS)-1])
	ctx := context.Background()
	if o.inProcess {
		fmt.Fprintf(os.Stderr, "%d tools: in-process searchers\n", r.tools)
		if err := inProcess(ctx, catalog, data, qs, o.counts, modes, r); err != nil {
			return fmt.Errorf("in-process: %w", err)
		}
	}
	if o.http {
		fmt.Fprintf(os.Stderr, "%d tools: HTTP sessions\n", r.tools)
		if err := overHTTP(ctx, bin, args, qs, o.counts, r); err != nil {
			return fmt.Errorf("over HTTP: %w", err)
		}
	}
	return nil
}

// dirMB returns the size in MB of the files under dir.
func dirMB(dir string) (float64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		return nil
	})
	return float64(total) / 1e6, err
}

// timed runs the binary and returns its wall time and peak RSS in MB.
func timed(bin string, args ...string) (time.Duration, float64, error) {
	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("%v: %s", err, stderr.String())
	}
	d := time.Since(start)
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if ru == nil {
		return d, 0, nil
	}
	return d, float64(ru.Maxrss) / 1024, nil // Linux reports KiB
}

// serve starts `toolscout serve` over stdio and measures the time from
// start to the first discover_tools answer, then query latency per mode
// and the server's RSS.
func serve(bin string, args, qs []string, r *row) error {
	cmd := exec.Command(bin, append([]string{"serve", "--log-level", "error"}, args...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}()
	rd := bufio.NewReaderSize(stdout, 1<<20)
	id := 0
	call := func(method string, params any) error {
		id++
		line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := stdin.Write(append(line, '\n')); err != nil {
			return err
		}
		return readAnswer(rd, id)
	}
	if err := call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "benchscale", "version": "1"}}); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	discover := func(q, mode string) error {
		return call("tools/call", map[string]any{"name": "discover_tools", "arguments": map[string]any{"query": q, "search_mode": mode, "limit": 10}})
	}
	if err := discover(qs[0], "hybrid"); err != nil {
		return fmt.Errorf("first discover_tools: %w", err)
	}
	r.first = append(r.first, time.Since(start))
	for _, mode := range []string{"keyword", "semantic", "hybrid"} {
		lat := make([]time.Duration, 0, len(qs))
		for _, q := range qs {
			t := time.Now()
			if err := discover(q, mode); err != nil {
				return fmt.Errorf("discover_tools %s: %w", mode, err)
			}
			lat = append(lat, time.Since(t))
		}
		slices.Sort(lat)
		r.p50[mode] = append(r.p50[mode], lat[len(lat)/2])
		r.p99[mode] = append(r.p99[mode], lat[min(len(lat)-1, len(lat)*99/100)])
	}
	r.serveRSS = append(r.serveRSS, rssMB(cmd.Process.Pid))
	return nil
}

// readAnswer reads lines until the answer with id; an error answer, or a
// tool result flagged isError, is an error.
func readAnswer(rd *bufio.Reader, id int) error {
	for {
		line, err := rd.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("reading the answer: %w", err)
		}
		var msg struct {
			ID     *int            `json:"id"`
			Error  json.RawMessage `json:"error"`
			Result struct {
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		if json.Unmarshal(line, &msg) != nil || msg.ID == nil || *msg.ID != id {
			continue // a notification
		}
		if len(msg.Error) > 0 || msg.Result.IsError {
			return fmt.Errorf("error answer: %.300s", line)
		}
		return nil
	}
}

// rssMB returns a process's resident set size in MB (0 when unknown).
func rssMB(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

func median[T int64 | float64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func secs(xs []time.Duration) string {
	if len(xs) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f s", median(xs).Seconds())
}

func ms(xs []time.Duration) string {
	return fmt.Sprintf("%.2f", float64(median(xs).Microseconds())/1000)
}

// pcts returns the medians over runs of a level's p50 and p99, in ms.
func pcts(ls []latencies) string {
	if len(ls) == 0 {
		return "–"
	}
	var p50, p99 []time.Duration
	for _, l := range ls {
		p50, p99 = append(p50, l.p50), append(p99, l.p99)
	}
	return ms(p50) + " / " + ms(p99)
}

func printTable(w io.Writer, rows []*row, runs int, o options) {
	fmt.Fprintf(w, "Medians of %d runs, built-in embedder.\n\n", runs)
	fmt.Fprintln(w, "| tools | cold `index` | peak RSS | data dir | re-index, unchanged | re-index, 1% changed | one-shot `search` | its peak RSS | `serve` start → first answer | server RSS |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %d | %s | %.0f MB | %.0f MB | %s | %s | %s | %.0f MB | %s | %.0f MB |\n", r.tools,
			secs(r.cold), median(r.coldRSS), median(r.dataMB), secs(r.unchanged), secs(r.changed), secs(r.search), median(r.searchRSS), secs(r.first), median(r.serveRSS))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "discover_tools over stdio, round trip in ms (p50 / p99):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| tools | keyword | semantic | hybrid |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %d | %s / %s | %s / %s | %s / %s |\n", r.tools,
			ms(r.p50["keyword"]), ms(r.p99["keyword"]), ms(r.p50["semantic"]), ms(r.p99["semantic"]), ms(r.p50["hybrid"]), ms(r.p99["hybrid"]))
	}
	if o.inProcess {
		printInProcess(w, rows, runs, modes, o)
	}
	if o.http {
		printLevels(w, "discover_tools over `serve --http`, one MCP session per searcher, round trip in ms (p50 / p99):", rows, modes, o, func(r *row) map[string][]latencies { return r.http }, false)
	}
}

// printInProcess prints the in-process table of rows for the modes ms.
func printInProcess(w io.Writer, rows []*row, runs int, ms []search.Mode, o options) {
	printLevels(w, "In-process search.Engine, ms per query (p50 / p99 over all searchers' queries), and what a query allocates (one searcher):", rows, ms, o, func(r *row) map[string][]latencies { return r.inproc }, true)
}

// printLevels prints one table of p50 / p99 by mode and number of
// searchers; extra adds the allocations and bytes per query.
func printLevels(w io.Writer, title string, rows []*row, ms []search.Mode, o options, by func(*row) map[string][]latencies, extra bool) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, title)
	fmt.Fprintln(w)
	head, rule := "| tools | mode |", "|---:|---|"
	for _, c := range o.counts {
		head += fmt.Sprintf(" %d at once |", c)
		rule += "---:|"
	}
	if extra {
		head += " allocs / query | bytes / query |"
		rule += "---:|---:|"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, rule)
	for _, r := range rows {
		for _, mode := range ms {
			line := fmt.Sprintf("| %d | %s |", r.tools, mode)
			for _, c := range o.counts {
				line += " " + pcts(by(r)[fmt.Sprintf("%s/%d", mode, c)]) + " |"
			}
			if extra && len(r.allocs[string(mode)]) > 0 {
				line += fmt.Sprintf(" %.0f | %.0f |", median(r.allocs[string(mode)]), median(r.bytes[string(mode)]))
			}
			fmt.Fprintln(w, line)
		}
	}
}
