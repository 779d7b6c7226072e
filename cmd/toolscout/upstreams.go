package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/server"
)

// checkUpstreams connects to each upstream server of --config and reports
// its tool count and latency, or what is wrong.
func (g *globalFlags) checkUpstreams(ctx context.Context) []check {
	if len(g.configs) == 0 {
		return nil
	}
	gc, err := loadConfigs(g.configs)
	if err != nil {
		return []check{{name: "config", detail: err.Error(), fix: "fix the field named"}}
	}
	detail := fmt.Sprintf("%s (%d disabled)", plural(len(gc.Upstreams), "server"), len(gc.Disabled))
	if len(gc.Skipped) > 0 {
		detail += fmt.Sprintf("; skipped %s: it is toolscout itself", strings.Join(gc.Skipped, ", "))
	}
	checks := []check{{name: "config", detail: detail}}
	gw := server.NewGateway(server.GatewayOptions{Upstreams: gc.Upstreams, Version: version})
	gw.Start(ctx)
	gw.WaitReady(ctx)
	defer gw.Close()
	for _, st := range gw.Status() {
		c := check{name: "upstream", detail: fmt.Sprintf("%s: %s in %s", st.Domain, plural(st.Tools, "tool"), st.Latency.Round(time.Millisecond))}
		if len(st.Skipped) > 0 {
			c.detail += fmt.Sprintf(" (%d skipped: %s)", len(st.Skipped), strings.Join(st.Skipped, "; "))
		}
		if st.State != "up" {
			c.detail = fmt.Sprintf("%s: %v", st.Domain, st.Err)
			c.fix = "check the command or URL of " + st.Domain + " (run it by hand to see its errors)"
		}
		checks = append(checks, c)
	}
	if cat, err := index.NewCatalog(gw.Specs()); err == nil && cat.Len() > 0 {
		checks = append(checks, lintCheck(cat))
	}
	return append(checks, poisonChecks(gw.Specs(), gc.Quarantine)...)
}

// lintCheck is the lint summary as a doctor line: a note when tools are
// flagged (they work; their descriptions cost or confuse).
func lintCheck(cat *index.Catalog) check {
	rep, err := server.Lint(cat, server.LintOptions{})
	if err != nil {
		return check{name: "lint", detail: err.Error(), fix: "report this", note: true}
	}
	if rep.Flagged == 0 {
		return check{name: "lint", detail: lintSummary(rep)}
	}
	return check{name: "lint", detail: lintSummary(rep), fix: "run `toolscout lint` (with the same --catalog/--config) for each tool's problems", note: true}
}

// poisonChecks lists the tools with poisoning flags, as notes: the tools
// still work, but their descriptions deserve a read (or quarantine).
func poisonChecks(specs []index.DomainSpec, quarantined bool) []check {
	var checks []check
	for _, d := range specs {
		for _, t := range d.Tools {
			flags := index.ScanTool(t.Title, t.Description, t.InputSchema, t.OutputSchema)
			if len(flags) == 0 {
				continue
			}
			advice := `read its description; to hide such tools, set "toolscout": {"quarantine": true} in the config`
			if quarantined {
				advice = "quarantined: it is not indexed (toolscout.quarantine)"
			}
			checks = append(checks, check{name: "poisoning", detail: fmt.Sprintf("%s/%s: %s", d.Name, t.Name, strings.Join(flags, "; ")), fix: advice, note: true})
		}
	}
	return checks
}

// reportUpstreams prints one line per upstream server.
func reportUpstreams(w io.Writer, a *app) {
	if a.gw == nil {
		return
	}
	for _, st := range a.gw.Status() {
		if st.State == "up" {
			fmt.Fprintf(w, "upstream %s: %s\n", st.Domain, plural(st.Tools, "tool"))
		} else {
			fmt.Fprintf(w, "upstream %s: unavailable: %v\n", st.Domain, st.Err)
		}
	}
}
