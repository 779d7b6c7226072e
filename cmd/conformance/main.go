// Command conformance runs the official MCP conformance suite
// (npm @modelcontextprotocol/conformance, pinned in
// conformance/package.json with the Node it needs) against the go-sdk's
// own conformance server, first directly and then through toolscout (the
// fixture as toolscout's one HTTP upstream, `"expose": "eager"` and
// `"tool_names": "server"` in its config: the suite calls the fixture's
// tools by their own names), in the same run, and compares: a scenario
// that passes directly must pass through toolscout.
//
// Two suites: `--requirements 2025-11-25` against the fixture in its
// stateful mode and `--requirements 2026-07-28` against it stateless;
// then the scenarios that need no fixture against `toolscout serve` on
// the built-in catalog (suite "builtin"); then the client-side auth
// scenarios, where the suite plays an OAuth-protected server and
// toolscout's upstream OAuth client (cmd/conformance/authclient: the
// sign-in of `toolscout auth login`, the gateway's token source) is the
// client (suite "client-auth").
//
// Two files in conformance/ say what may fail, one line an entry,
// "SUITE SCENARIO[:CHECK] why":
//
//   - expected-failures.txt: what fails directly too (a fixture suite), or
//     cannot be tested without the fixture (builtin). A listed scenario
//     that passes directly is an error, as is one that fails directly
//     and is not listed.
//   - lost.txt: the ratchet of scenarios that pass directly but not
//     through toolscout today. A loss not listed fails the run, and so
//     does a listed one that now passes: the list only shrinks.
//
// It prints a Markdown table per suite and exits 1 when a check fails.
//
//	go run ./cmd/conformance -bin bin/toolscout
//
// `make conformance` (part of `make test`) installs the suite and runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

// options are the command's flags.
type options struct {
	bin, suiteDir, work string
	expected, lost      string
	toolNames           string
	suites              string
	timeout             time.Duration
	verbose             bool
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "bin/toolscout", "the toolscout binary")
	flag.StringVar(&o.suiteDir, "suite-dir", "conformance", "the folder whose package.json pins the suite and Node (npm ci there first)")
	flag.StringVar(&o.work, "work", "", "scratch folder for logs, data dirs and the suite's results, kept afterwards (default: a temporary one, removed)")
	flag.StringVar(&o.expected, "expected", "conformance/expected-failures.txt", "what may fail directly too (or without the fixture)")
	flag.StringVar(&o.lost, "lost", "conformance/lost.txt", "the ratchet: what passes directly but not through toolscout today")
	flag.StringVar(&o.toolNames, "tool-names", "server", "toolscout's tool_names setting for the runs through it: the suite calls the fixture's tools by their own names (empty: leave it unset)")
	flag.StringVar(&o.suites, "suites", "2025-11-25,2026-07-28,builtin,client-auth", "the suites to run, comma-separated")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Minute, "the whole run's time limit")
	flag.BoolVar(&o.verbose, "v", false, "print every scenario's outcome, not only the summary")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	start := time.Now()
	expected, err := readEntries(o.expected)
	if err != nil {
		return err
	}
	lost, err := readEntries(o.lost)
	if err != nil {
		return err
	}
	suites, err := parseSuites(o.suites)
	if err != nil {
		return err
	}
	node, cli, err := suiteCommand(o.suiteDir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(o.bin); err != nil {
		return fmt.Errorf("toolscout binary: %w (make build, or pass -bin)", err)
	}
	work := o.work
	if work == "" {
		if work, err = os.MkdirTemp("", "toolscout-conformance-"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	h := &harness{o: o, node: node, cli: cli, work: work}
	var results []suiteResult
	for _, s := range suites {
		var r suiteResult
		if s == suiteBuiltin {
			r, err = h.runBuiltin(ctx)
		} else if s == suiteClientAuth {
			r, err = h.runClientAuth(ctx)
		} else {
			if h.fixture == "" {
				if h.fixture, err = buildFixture(ctx, work); err != nil {
					return err
				}
			}
			r, err = h.runFixtureSuite(ctx, s)
		}
		if err != nil {
			return fmt.Errorf("suite %s: %w", s, err)
		}
		results = append(results, r)
	}
	problems := check(results, expected, lost)
	report(os.Stdout, results, o.verbose)
	fmt.Printf("\n%d suites in %s (%s)\n", len(results), time.Since(start).Round(100*time.Millisecond), resultsWhere(o.work, work))
	if len(problems) > 0 {
		fmt.Println()
		for _, p := range problems {
			fmt.Println("FAIL:", p)
		}
		return fmt.Errorf("%d problems (above)", len(problems))
	}
	fmt.Println("ok: every scenario that passes directly passes through toolscout, but those in", filepath.Base(o.lost))
	return nil
}

// resultsWhere says where the suite's results are, or that they were
// removed with the scratch folder.
func resultsWhere(given, work string) string {
	if given == "" {
		return "results removed: pass -work DIR to keep them"
	}
	return "results in " + work
}
