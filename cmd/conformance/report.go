package main

import (
	"fmt"
	"io"
	"strings"
)

// report prints a Markdown table per suite: how many scenarios pass
// directly and through toolscout, and which are lost; with verbose,
// every scenario's outcome too.
func report(w io.Writer, results []suiteResult, verbose bool) {
	fmt.Fprintln(w, "| suite | scenarios (scored) | pass directly | pass through toolscout | lost through toolscout |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, r := range results {
		var scored, direct, through, scoredDirect, scoredThrough int
		var lost []string
		for _, s := range r.scenarios {
			if s.notScored == "" {
				scored++
			}
			if s.direct != nil && s.direct.passed() {
				direct++
				if s.notScored == "" {
					scoredDirect++
				}
			}
			if s.through.passed() {
				through++
				if s.notScored == "" {
					scoredThrough++
				}
			}
			if s.lost() {
				lost = append(lost, "`"+s.name+"`")
			}
		}
		d := "n/a (no fixture)"
		if r.suite == suiteClientAuth {
			d = "n/a (toolscout is the client)"
		} else if r.suite != suiteBuiltin {
			d = fmt.Sprintf("%d (%d scored)", direct, scoredDirect)
		}
		fmt.Fprintf(w, "| %s | %d (%d) | %s | %d (%d scored) | %s |\n", r.suite, len(r.scenarios), scored, d, through, scoredThrough, orNone(lost))
	}
	if !verbose {
		return
	}
	for _, r := range results {
		fmt.Fprintf(w, "\n%s:\n", r.suite)
		for _, s := range r.scenarios {
			tag := ""
			if s.notScored != "" {
				tag = " (not scored: " + s.notScored + ")"
			}
			if s.direct != nil {
				fmt.Fprintf(w, "  %-48s direct: %s; through toolscout: %s%s\n", s.name, describe(*s.direct), describe(s.through), tag)
			} else {
				fmt.Fprintf(w, "  %-48s %s%s\n", s.name, describe(s.through), tag)
			}
		}
	}
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
