package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"

	"github.com/toolscout/toolscout/internal/synth"
	"github.com/toolscout/toolscout/search"
)

// profileOptions are the flags of a run on a data dir built before
// (-reuse): only the in-process searchers, with the modes chosen and the
// profiles asked for, so that a run profiles what it measures without
// building 100k tools again.
type profileOptions struct {
	reuse                         string // a run folder: catalog.json and data/
	modes                         string
	rounds                        int
	cpu, mutex, block, traceFile  string
	mutexFraction, blockRateNanos int
	mem                           string
	memRate                       int
}

// parseModes parses -modes: search modes separated by commas.
func parseModes(list string) ([]search.Mode, error) {
	var out []search.Mode
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		m, err := search.ParseMode(s)
		if s == "" {
			err = errors.New("an empty mode")
		}
		if err != nil {
			return nil, fmt.Errorf("-modes %q: %w", list, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// runReused measures the in-process searchers on the run folder that a
// benchscale run with -work kept (catalog.json and data/), rounds times,
// with the profiles of po, and prints the in-process table.
func runReused(po profileOptions, nQueries int, seed int64, o options) error {
	catalog, data := filepath.Join(po.reuse, "catalog.json"), filepath.Join(po.reuse, "data")
	for _, p := range []string{catalog, data} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("-reuse %s: %w (give a run folder that `benchscale -work DIR` kept, e.g. DIR/n100000-r0)", po.reuse, err)
		}
	}
	if nQueries < 1 || po.rounds < 1 {
		return errors.New("-queries and -rounds must be at least 1")
	}
	counts, err := parseCounts("-concurrency", o.concurrency)
	if err != nil {
		return err
	}
	o.counts = counts
	which, err := parseModes(po.modes)
	if err != nil {
		return err
	}
	stop, err := startProfiles(po)
	if err != nil {
		return err
	}
	qs := synth.Queries(nQueries, seed+1)
	var tools, run int
	fmt.Sscanf(filepath.Base(po.reuse), "n%d-r%d", &tools, &run) // the folder's name says its size; 0 when it does not
	r := &row{tools: tools, inproc: map[string][]latencies{}, allocs: map[string][]float64{}, bytes: map[string][]float64{}}
	for i := range po.rounds {
		fmt.Fprintf(os.Stderr, "%s: in-process round %d of %d\n", po.reuse, i+1, po.rounds)
		if err := inProcess(context.Background(), catalog, data, qs, o.counts, which, r); err != nil {
			stop()
			return fmt.Errorf("in-process: %w", err)
		}
	}
	if err := stop(); err != nil {
		return err
	}
	o.inProcess, o.http = true, false
	printInProcess(os.Stdout, []*row{r}, po.rounds, which, o)
	return nil
}

// startProfiles starts the CPU profile and the execution trace and turns
// on mutex and block profiling as po asks; the function it returns stops
// them and writes the mutex and block profiles.
func startProfiles(po profileOptions) (func() error, error) {
	var stops []func() error
	stop := func() error {
		var errs []error
		for _, s := range slices.Backward(stops) {
			errs = append(errs, s())
		}
		return errors.Join(errs...)
	}
	if po.cpu != "" {
		f, err := os.Create(po.cpu)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, err
		}
		stops = append(stops, func() error { pprof.StopCPUProfile(); return f.Close() })
	}
	if po.traceFile != "" {
		f, err := os.Create(po.traceFile)
		if err != nil {
			stop()
			return nil, err
		}
		if err := trace.Start(f); err != nil {
			f.Close()
			stop()
			return nil, err
		}
		stops = append(stops, func() error { trace.Stop(); return f.Close() })
	}
	for _, p := range []struct {
		file, name string
		on, off    func()
	}{
		// The allocations from here on (the data dir's load too: focus
		// the profile on the searches, e.g. -focus 'Engine..Search').
		{po.mem, "allocs", func() { runtime.MemProfileRate = max(po.memRate, 1) }, func() {}},
		{po.mutex, "mutex", func() { runtime.SetMutexProfileFraction(max(po.mutexFraction, 1)) }, func() { runtime.SetMutexProfileFraction(0) }},
		{po.block, "block", func() { runtime.SetBlockProfileRate(max(po.blockRateNanos, 1)) }, func() { runtime.SetBlockProfileRate(0) }},
	} {
		if p.file == "" {
			continue
		}
		p.on()
		stops = append(stops, func() error {
			defer p.off()
			if p.name == "allocs" {
				runtime.GC() // the profile holds what the last collection saw
			}
			f, err := os.Create(p.file)
			if err != nil {
				return err
			}
			if err := pprof.Lookup(p.name).WriteTo(f, 0); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		})
	}
	return stop, nil
}
