package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/toolscout/toolscout/server"
	"github.com/toolscout/toolscout/server/lint"
)

func runTokens(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var g globalFlags
	fs := newFlagSet("tokens", "tokens [flags]\n\nCounts what a client pays in context tokens (o200k_base): tools/list with\nevery tool's schema (eager) against toolscout's three meta-tools, typical\nanswers, and tools/list in each exposure mode (--expose of serve).", stderr)
	g.register(fs, "warn")
	asJSON := fs.Bool("json", false, "print JSON")
	query := fs.String("query", "create an issue for a bug", "query for the typical discover and schema answers")
	var pins stringList
	fs.Var(&pins, "pin", "count core mode with this qualified tool name or `GLOB` pinned (repeatable; the config's toolscout.pinned count too); without any, core is not counted")
	budget := fs.Int("budget", server.DefaultAutoBudget, "count auto mode with this token budget (`TOKENS`, as --expose auto:TOKENS)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs("tokens", pos); err != nil {
		return err
	}
	// Checked before the catalog is opened: a typo costs no upstream
	// start and no index.
	if *budget < 1 || *budget > maxAutoBudget {
		return usagef("--budget %d: give a number of tokens from 1 to %d", *budget, maxAutoBudget)
	}
	a, _, err := g.openApp(ctx, stderr, true)
	if err != nil {
		return err
	}
	defer a.Close()
	// The instructions are counted as a client's initialize gets them:
	// with the upstream servers' own and the config's, the configured
	// servers that listed no tools named, in the mode serve would use.
	opts := server.Options{Live: a.live, Version: version, Domains: a.domainSizes(nil)}
	if a.gw != nil {
		opts.Executor = a.gw
	}
	if a.gc != nil {
		opts.Instructions = a.gc.Instructions
	}
	rep, err := server.New(opts).CountTokens(ctx, *query)
	if err != nil {
		return err
	}
	if mode, _, _ := g.exposeMode(); mode != string(server.ExposeMeta) {
		if exp, err := parseExpose(mode); err == nil && (exp.Mode != server.ExposeCore || len(exp.Pinned) > 0) {
			opts.Expose = exp
			if rep.Instructions, err = server.New(opts).CountInstructions(ctx); err != nil {
				return err
			}
		}
	}
	if a.gc != nil {
		pins = append(pins, a.gc.Pinned...)
	}
	if err := exposureCosts(ctx, a, rep, pins, *budget); err != nil {
		return err
	}
	lr, err := lint.Check(a.eng.Catalog(), lint.Options{})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			*server.TokenReport
			Lint *lint.Report `json:"lint"`
		}{rep, lr})
	}
	fmt.Fprintf(stdout, "%s in %s, tokens counted with %s\n\n", plural(rep.Tools, "tool"), plural(rep.Domains, "domain"), rep.Encoding)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "tools/list, eager (every tool with its schema)\t%d\t\n", rep.EagerToolsList)
	fmt.Fprintf(tw, "tools/list, toolscout meta-tools\t%d\t\n", rep.MetaToolsList)
	fmt.Fprintf(tw, "server instructions (as initialize returns them)\t%d\t\n", rep.Instructions)
	fmt.Fprintf(tw, "discover_tools, no arguments\t%d\t\n", rep.DiscoverContents)
	fmt.Fprintf(tw, "discover_tools, query %q, limit 5\t%d\t\n", *query, rep.DiscoverQuery)
	fmt.Fprintf(tw, "get_tool_schema, one tool\t%d\t\n", rep.GetToolSchema)
	fmt.Fprintf(tw, "  of which examples\t%d\t\n", rep.SchemaExamples)
	fmt.Fprintf(tw, "  of which related_tools\t%d\t\n", rep.SchemaRelated)
	fmt.Fprintf(tw, "get_tool_schema, largest: %s\t%d\t\n", rep.SchemaMaxTool, rep.SchemaMax)
	for _, mode := range server.ExposeModes {
		n, ok := rep.Extra["tools_list_"+string(mode)]
		switch {
		case !ok:
		case mode == server.ExposeAuto:
			what := "meta-tools only"
			if rep.Extra["auto_lists_every_tool"] == 1 {
				what = "every tool"
			}
			fmt.Fprintf(tw, "tools/list with --expose auto:%d (%s)\t%d\t\n", *budget, what, n)
		default:
			fmt.Fprintf(tw, "tools/list with --expose %s\t%d\t\n", mode, n)
		}
	}
	fmt.Fprintf(tw, "tools/list with --expose eager --condense\t%d\t\n", rep.Extra["tools_list_eager_condensed"])
	tw.Flush()
	fmt.Fprintf(stdout, "\nmeta mode saves %.1f%% of the up-front tools/list cost\n", rep.Saved*100)
	fmt.Fprintf(stdout, "lint: %s; details: toolscout lint\n", lintSummary(lr))
	return nil
}

// exposureCosts adds what tools/list costs in each exposure mode: core
// with pins (not counted without), dynamic before any domain is enabled,
// auto with budget (and whether it lists every tool), and eager with
// --condense.
func exposureCosts(ctx context.Context, a *app, rep *server.TokenReport, pins []string, budget int) error {
	rep.Extra = map[string]int{}
	for _, mode := range server.ExposeModes {
		if mode == server.ExposeCore && len(pins) == 0 {
			continue
		}
		srv := server.New(server.Options{Live: a.live, Version: version, Expose: server.Exposure{Mode: mode, Pinned: pins, Budget: budget}})
		n, err := srv.CountToolsList(ctx)
		if err != nil {
			return err
		}
		rep.Extra["tools_list_"+string(mode)] = n
	}
	srv := server.New(server.Options{Live: a.live, Version: version, Expose: server.Exposure{Mode: server.ExposeEager, Condense: true}})
	n, err := srv.CountToolsList(ctx)
	if err != nil {
		return err
	}
	rep.Extra["tools_list_eager_condensed"] = n
	rep.Extra["auto_budget"] = budget
	if rep.Extra["tools_list_"+string(server.ExposeAuto)] > rep.Extra["tools_list_"+string(server.ExposeMeta)] {
		rep.Extra["auto_lists_every_tool"] = 1
	}
	return nil
}
