package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server"
)

// Learning from what agents run (search/feedback.go ranks by it,
// server/feedback.go records it, index/store keeps it): the flags of
// serve and index that switch it and carry it between replicas, and the
// feedback command that shows and clears it.

// feedbackFlags are serve's flags of the feedback channel.
type feedbackFlags struct {
	mode string // "on" or "off"
	out  string // a read-only replica's events: a file, or "-" for stderr
}

func (f *feedbackFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.mode, "feedback", "on", "learn from what agents run: on (rank tools that callers ran after similar searches higher, and record each tool a caller runs after a search) or off; without this flag the config's toolscout.feedback sets it")
	fs.StringVar(&f.out, "feedback-out", "-", "with --read-only: write the feedback events as JSON lines to `FILE` (appended), or - for stderr, for a log collector to gather and `toolscout index --feedback` to fold into the next build (the shared data dir is never written)")
}

// resolve returns whether the channel is on: the flag when given, else
// the config's key, else on.
func (f *feedbackFlags) resolve(fs *flag.FlagSet, configured string) (bool, error) {
	given := false
	fs.Visit(func(fl *flag.Flag) { given = given || fl.Name == "feedback" })
	mode := f.mode
	if !given && configured != "" {
		mode = configured
	}
	switch mode {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, usagef("--feedback %q: use on or off", f.mode)
}

// setUp returns the channel over the store's events and the sink that
// keeps new ones: the data dir, or, read-only, JSON lines to --feedback-out.
// close closes the sink's file. With the data dir, the channel follows
// what other processes do to its log until ctx is done (watchFeedback).
func (f *feedbackFlags) setUp(ctx context.Context, st *store.Store, stderr io.Writer, log *slog.Logger) (model *search.Feedback, sink server.FeedbackSink, close func(), err error) {
	fl := st.Feedback()
	events, err := fl.Events()
	if err != nil {
		log.Warn("learned feedback could not be read; starting without it", "err", err)
	}
	for _, h := range fl.Healed() {
		log.Warn(h)
	}
	model = search.NewFeedback(events, search.FeedbackOptions{})
	close = func() {}
	if !st.ReadOnly() {
		go watchFeedback(ctx, fl, model, feedbackPoll, log)
		return model, storeSink{fl}, close, nil
	}
	w := stderr
	if f.out != "-" {
		file, err := os.OpenFile(f.out, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--feedback-out: %w", err)
		}
		w, close = file, func() { file.Close() }
	}
	return model, &lineSink{w: w}, close, nil
}

// feedbackPoll is how often a serve looks whether another process
// changed its feedback log.
const feedbackPoll = 2 * time.Second

// watchFeedback ranks with the log's events again whenever another
// process changed it (`toolscout feedback --forget`, a fold, another
// serve's runs), every poll, until ctx is done: a forget reaches a
// running serve within seconds (issue 52, item 4), as approvals do. The
// serve's own appends are no change (store.FeedbackLog.Changed).
func watchFeedback(ctx context.Context, fl *store.FeedbackLog, model *search.Feedback, every time.Duration, log *slog.Logger) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !fl.Changed() {
			continue
		}
		healed := len(fl.Healed())
		events, err := fl.Events()
		if err != nil {
			log.Warn("learned feedback changed by another process could not be read; ranking with what was held", "err", err)
			continue
		}
		for _, h := range fl.Healed()[healed:] {
			log.Warn(h)
		}
		model.Reset(events)
		log.Info("learned feedback changed by another process; ranking with it", "events", len(events))
	}
}

// storeSink keeps events in the data dir.
type storeSink struct{ l *store.FeedbackLog }

func (s storeSink) RecordFeedback(ev store.FeedbackEvent) error { return s.l.Record(ev) }

// lineSink writes events as JSON lines, one write each.
type lineSink struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *lineSink) RecordFeedback(ev store.FeedbackEvent) error {
	line, err := store.EncodeFeedbackLine(ev)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err = s.w.Write(line)
	return err
}

// readFeedbackFiles reads the events of index --feedback's files.
func readFeedbackFiles(paths []string) ([]store.FeedbackEvent, error) {
	var all []store.FeedbackEvent
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("--feedback: %w", err)
		}
		evs, _, err := store.DecodeFeedbackLines(f, p)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("--feedback: %w", err)
		}
		all = append(all, evs...)
	}
	return all, nil
}

// foldFeedback folds events into the store's log, those of tools the
// catalog has, and says what it did.
func foldFeedback(st *store.Store, cat *index.Catalog, events []store.FeedbackEvent, files int, stdout io.Writer) error {
	var known []store.FeedbackEvent
	for _, ev := range events {
		if cat.Tool(ev.Tool) != nil {
			known = append(known, ev)
		}
	}
	added, err := st.Feedback().Fold(known)
	if err != nil {
		return fmt.Errorf("fold feedback: %w", err)
	}
	fmt.Fprintf(stdout, "feedback: %s from %s folded in (%d already there, %d of tools not in the catalog)\n",
		plural(added, "event"), plural(files, "file"), len(known)-added, len(events)-len(known))
	return nil
}

// learnedTool is what the feedback command says of one tool.
type learnedTool struct {
	Tool     string    `json:"tool"`
	Events   int       `json:"events"`
	Callers  int       `json:"callers"`
	Last     time.Time `json:"last"`
	Requests []string  `json:"requests"` // the newest few, distinct
}

func runFeedback(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var g globalFlags
	fs := newFlagSet("feedback", "feedback [flags]\n\nLists what toolscout learned from what agents ran after their searches, in\nthe index of the current catalog set (--catalog, --config): per tool, how many\nruns, by how many distinct callers, when last, after which requests. Servers\nrecord them (serve --feedback on, the default); read-only replicas write them\nas JSON lines for `toolscout index --feedback FILE` to fold in.", stderr)
	g.register(fs, "warn")
	forget := fs.Bool("forget", false, "clear what was learned (every event of the current catalog set)")
	asJSON := fs.Bool("json", false, "print JSON: {\"file\", \"events\", \"tools\": [{\"tool\", \"events\", \"callers\", \"last\", \"requests\"}]}")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs("feedback", pos); err != nil {
		return err
	}
	// The log only: a serve running beside keeps its indexes.
	st, err := g.openStore(g.dataDir, store.Options{Set: g.set(), NoIndexes: true})
	if errors.Is(err, index.ErrNoIndex) {
		// Nothing indexed, nothing learned: a log kept in memory.
		st, err = g.openStore("", store.Options{NoIndexes: true})
	}
	if err != nil {
		return err
	}
	defer st.Close()
	fl := st.Feedback()
	if *forget {
		if err := fl.Forget(); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "forgot what was learned from what agents ran")
		return nil
	}
	events, err := fl.Events()
	if err != nil {
		return err
	}
	for _, h := range fl.Healed() {
		fmt.Fprintln(stderr, "warning:", h)
	}
	tools := summarize(events)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"file": fl.Path(), "events": len(events), "tools": tools})
	}
	if len(events) == 0 {
		fmt.Fprintln(stdout, "nothing learned yet: servers learn from the tools agents run after discover_tools searches (serve --feedback on)")
		return nil
	}
	fmt.Fprintf(stdout, "%s by %s in %s\n", plural(len(events), "run"), plural(len(tools), "tool"), fl.Path())
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tRUNS\tCALLERS\tLAST\tAFTER REQUESTS")
	for _, t := range tools {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", t.Tool, t.Events, t.Callers, t.Last.Local().Format("2006-01-02 15:04"), strings.Join(quoteAll(t.Requests), "; "))
	}
	return tw.Flush()
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = search.Quote(s, 60)
	}
	return out
}

// summarize groups events by tool, most runs first.
func summarize(events []store.FeedbackEvent) []learnedTool {
	by := map[string]*learnedTool{}
	callers := map[string]map[string]bool{}
	for i := len(events) - 1; i >= 0; i-- { // newest first
		ev := events[i]
		t := by[ev.Tool]
		if t == nil {
			t = &learnedTool{Tool: ev.Tool, Requests: []string{}}
			by[ev.Tool], callers[ev.Tool] = t, map[string]bool{}
		}
		t.Events++
		callers[ev.Tool][ev.CountedCaller()] = true // as the ranking counts them
		if ev.Time.After(t.Last) {
			t.Last = ev.Time
		}
		if len(t.Requests) < 3 && !slices.Contains(t.Requests, ev.Request) {
			t.Requests = append(t.Requests, ev.Request)
		}
	}
	out := make([]learnedTool, 0, len(by))
	for name, t := range by {
		t.Callers = len(callers[name])
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b learnedTool) int {
		if a.Events != b.Events {
			return b.Events - a.Events
		}
		return strings.Compare(a.Tool, b.Tool)
	})
	return out
}
