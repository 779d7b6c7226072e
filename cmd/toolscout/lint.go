package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/toolscout/toolscout/server/lint"
)

func runLint(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var g globalFlags
	fs := newFlagSet("lint", "lint [flags]\n\nMeasures what each tool costs a model in tokens (name, description, input\nschema; o200k_base) and flags what costs and confuses: descriptions and\nschemas over budget, tools without a description, duplicate descriptions,\nand a parameter that chooses among many operations. Descriptions or\nschemas many times the catalog's median, and parameters without a\ndescription, are notes (problems with --strict). Exits 1 when a tool has a problem, so it can gate a\ncatalog or config in CI.", stderr)
	g.register(fs, "warn")
	asJSON := fs.Bool("json", false, "print JSON")
	maxDesc := fs.Int("max-description", lint.DefaultMaxDescription, "description budget in `TOKENS`")
	maxSchema := fs.Int("max-schema", lint.DefaultMaxSchema, "input schema budget in `TOKENS`")
	top := fs.Int("top", 10, "how many of the costliest tools to list (with --json too; every flagged tool is listed apart)")
	strict := fs.Bool("strict", false, "count the notes (verbose descriptions and schemas, parameters without a description) as problems")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs("lint", pos); err != nil {
		return err
	}
	if *maxDesc < 1 || *maxSchema < 1 || *top < 0 {
		return usagef("--max-description and --max-schema must be at least 1, --top at least 0")
	}
	log, err := g.logger(stderr)
	if err != nil {
		return err
	}
	a, specs, err := g.readSources(log)
	if err != nil {
		return err
	}
	specs = a.listNow(ctx, log, specs, g.redactor())
	if a.src != nil {
		if specs, err = a.src.Specs(); err != nil {
			return err
		}
	}
	rep, err := lint.CheckSpecs(specs, lint.Options{MaxDescription: *maxDesc, MaxSchema: *maxSchema, Strict: *strict})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(lintJSON(rep, *top)); err != nil {
			return err
		}
	} else {
		printLint(stdout, rep, *top)
	}
	if rep.Flagged > 0 {
		return fmt.Errorf("%s flagged", plural(rep.Flagged, "tool"))
	}
	return nil
}

// lintJSON is the JSON report: the costliest top tools, then apart the
// tools with a problem (flagged_tools: as many as the report's flagged
// count) and those with notes only (noted_tools), by name.
func lintJSON(rep *lint.Report, top int) any {
	flagged, noted := []lint.Tool{}, []lint.Tool{}
	for _, t := range rep.Tools {
		switch {
		case len(t.Problems) > 0:
			flagged = append(flagged, t)
		case len(t.Notes) > 0:
			noted = append(noted, t)
		}
	}
	byName := func(a, b lint.Tool) int { return strings.Compare(a.Name, b.Name) }
	slices.SortFunc(flagged, byName)
	slices.SortFunc(noted, byName)
	out := *rep
	out.Tools = rep.Tools[:min(top, len(rep.Tools))]
	return struct {
		*lint.Report
		Total   int         `json:"total_tools"`
		Flagged []lint.Tool `json:"flagged_tools"`
		Noted   []lint.Tool `json:"noted_tools"`
	}{&out, len(rep.Tools), flagged, noted}
}

// printLint prints the summary, the costliest tools and every problem.
func printLint(w io.Writer, rep *lint.Report, top int) {
	total := 0
	for _, t := range rep.Tools {
		total += t.Tokens
	}
	fmt.Fprintf(w, "%s, %d tokens in all (name + description + input schema, %s); %s\n",
		plural(len(rep.Tools), "tool"), total, rep.Encoding, lintSummary(rep))
	if top > 0 && len(rep.Tools) > 0 {
		fmt.Fprintln(w, "\ncostliest tools:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  TOKENS\tDESCRIPTION\tSCHEMA\tTOOL")
		for _, t := range rep.Tools[:min(top, len(rep.Tools))] {
			fmt.Fprintf(tw, "  %d\t%d\t%d\t%s\n", t.Tokens, t.Description, t.Schema, t.Name)
		}
		tw.Flush()
	}
	printLintList(w, rep, "problems", func(t lint.Tool) []string { return t.Problems })
	printLintList(w, rep, "notes", func(t lint.Tool) []string { return t.Notes })
}

// printLintList prints one list of findings, by tool name.
func printLintList(w io.Writer, rep *lint.Report, title string, of func(lint.Tool) []string) {
	var names []string
	found := map[string][]string{}
	for _, t := range rep.Tools {
		if f := of(t); len(f) > 0 {
			names = append(names, t.Name)
			found[t.Name] = f
		}
	}
	if len(names) == 0 {
		return
	}
	sort.Strings(names)
	fmt.Fprintf(w, "\n%s:\n", title)
	for _, n := range names {
		for _, p := range found[n] {
			fmt.Fprintf(w, "  %s: %s\n", n, p)
		}
	}
}

// lintSummary says how many tools are flagged, and for what.
func lintSummary(rep *lint.Report) string {
	if rep.Flagged == 0 {
		return fmt.Sprintf("no tool flagged (budgets: description %d, schema %d tokens)", rep.MaxDescription, rep.MaxSchema)
	}
	kinds := make([]string, 0, len(rep.Counts))
	for k, n := range rep.Counts {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	return fmt.Sprintf("%s flagged: %s", plural(rep.Flagged, "tool"), strings.Join(kinds, ", "))
}
