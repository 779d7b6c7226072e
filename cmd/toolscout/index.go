package main

import (
	"context"
	"fmt"
	"io"
	"time"
)

func runIndex(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var g globalFlags
	fs := newFlagSet("index", "index [flags]\n\nBuilds or refreshes the persistent index under --data-dir. Only new and\nchanged tools are embedded again; progress goes to stderr. Each catalog set\n(the built-in catalog, or a set of --catalog / --config files) has its own\nindexes under DATA_DIR/sets/, so sets never overwrite each other.", stderr)
	g.register(fs, "warn")
	prune := fs.Bool("prune", false, "then remove the indexes of other catalog sets whose files are gone or that were unused for 30 days")
	var feedbackFiles stringList
	fs.Var(&feedbackFiles, "feedback", "fold the feedback events in `FILE` (JSON lines that serve --read-only replicas wrote with --feedback-out; other lines are skipped) into the index, for the servers of this build to rank with (repeatable)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs("index", pos); err != nil {
		return err
	}
	// Read first: a malformed file is said before minutes of indexing.
	events, err := readFeedbackFiles(feedbackFiles)
	if err != nil {
		return err
	}
	start := time.Now()
	g.writer = true
	a, _, err := g.openApp(ctx, stderr, true)
	if err != nil {
		return err
	}
	defer a.Close()
	cat := a.eng.Catalog()
	reportUpstreams(stdout, a)
	fmt.Fprintf(stdout, "indexed %s in %s into %s (%s)\n", plural(cat.Len(), "tool"), plural(len(cat.Domains()), "domain"), a.st.Load().Dir(), time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(stdout, "keyword (bm25): %s\n", a.stats.Keyword)
	fmt.Fprintf(stdout, "vectors (%s): %s\n", a.eng.EmbedderName(), a.stats.Vectors)
	if len(feedbackFiles) > 0 {
		if err := foldFeedback(a.st.Load(), cat, events, len(feedbackFiles), stdout); err != nil {
			return err
		}
	}
	if *prune {
		removed, skipped, err := a.st.Load().Prune()
		for _, r := range removed {
			fmt.Fprintf(stdout, "pruned %s\n", r)
		}
		for _, s := range skipped {
			fmt.Fprintf(stdout, "left alone %s\n", s)
		}
		if err != nil {
			return fmt.Errorf("prune: %w", err)
		}
		if len(removed) == 0 {
			fmt.Fprintln(stdout, "pruned nothing: every other catalog set is in use")
		}
	}
	return nil
}
