package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/pin"
	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server"
	"github.com/toolscout/toolscout/server/gateway"
	"github.com/toolscout/toolscout/server/lint"
)

// A toolscout started by a toolscout (gateway.DepthEnv set, however many
// wrappers lie between: env, sh -c, npx, a script) starts no stdio
// upstream servers. The command-string check of parseConfig (isToolscout)
// only catches a config entry that runs toolscout directly; this one
// catches the rest by what the process is, so a config that names
// toolscout itself starts one extra toolscout, which refuses, instead of
// a chain of them. A toolscout that serves catalogs, or only remote (url)
// servers, still runs under another one.
const maxStartDepth = 1

// nestedError is checkDepth's refusal.
type nestedError struct {
	depth   int
	servers []string
}

func (e *nestedError) Error() string {
	return fmt.Sprintf("%s=%d: a toolscout started this one (directly or through env, sh -c, npx or a script), and under toolscout no stdio upstream server is started (here: %s), so that a config naming toolscout itself cannot start a chain of them: remove this toolscout from the other's config, or give it only catalogs and remote (url) servers (unset %s if no toolscout started it)",
		gateway.DepthEnv, e.depth, strings.Join(e.servers, ", "), gateway.DepthEnv)
}

// checkDepth refuses gc's stdio upstreams when environ says a toolscout
// started this one (maxStartDepth).
func checkDepth(gc *gatewayConfig, environ []string) error {
	d := gateway.Depth(environ)
	if d < maxStartDepth {
		return nil
	}
	var stdio []string
	for _, u := range gc.Upstreams {
		if u.Command != "" {
			stdio = append(stdio, u.Domain)
		}
	}
	if len(stdio) == 0 {
		return nil
	}
	return &nestedError{depth: d, servers: stdio}
}

// configSummary says how many servers the config files hold, counting
// the disabled ones and those skipped as toolscout itself among them: "5
// servers (1 disabled)".
func configSummary(gc *gatewayConfig) string {
	detail := plural(len(gc.Upstreams)+len(gc.Disabled)+len(gc.Skipped), "server")
	if len(gc.Disabled) > 0 {
		detail += fmt.Sprintf(" (%d disabled)", len(gc.Disabled))
	}
	if len(gc.Skipped) > 0 {
		detail += fmt.Sprintf("; skipped %s: it is toolscout itself", strings.Join(gc.Skipped, ", "))
	}
	return detail
}

// checkUpstreams connects to each upstream server of --config and emits
// its tool count and latency, or what is wrong, as each answers or fails.
// It returns the catalog of the files' tools (files: the catalog files'
// catalog, nil when they did not load) and the servers' together: nil
// without files, when the servers listed none, or when the two do not
// make one catalog (a domain in both).
func (g *globalFlags) checkUpstreams(ctx context.Context, emit func(...check), files *index.Catalog) (all *index.Catalog, selves server.Selves) {
	if len(g.configs) == 0 {
		return nil, selves
	}
	gc, err := g.gatewayConfig()
	if err != nil {
		emit(check{name: "config", detail: err.Error(), fix: configAdvice(err)})
		return nil, selves
	}
	detail := configSummary(gc)
	if err := checkDepth(gc, os.Environ()); err != nil {
		emit(check{name: "config", detail: err.Error(), fix: "remove this toolscout from the config of the toolscout that starts it; if none does, unset " + gateway.DepthEnv})
		return nil, selves
	}
	emit(check{name: "config", detail: detail})
	pins := g.doctorPins(gc)
	var pinner gateway.Pinner
	if pins != nil {
		pinner = pin.NewGuard(pins)
	}
	gw := gateway.New(gateway.Options{Upstreams: gc.Upstreams, Version: version, Pins: pinner, WordFrequency: search.WordFrequency, Redactor: g.redactor()})
	gw.Start(ctx)
	defer gw.Close()
	ready := make(chan struct{})
	go func() { gw.WaitReady(ctx); close(ready) }()
	stdio := map[string]bool{}
	for _, u := range gc.Upstreams {
		stdio[u.Domain] = u.Command != ""
	}
	done := map[string]bool{}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for finished := false; !finished; {
		select {
		case <-ready:
			finished = true
		case <-tick.C:
		}
		for _, st := range gw.Upstreams().Status() {
			if done[st.Domain] || st.State == "connecting" && !finished {
				continue
			}
			done[st.Domain] = true
			emit(upstreamCheck(st, stdio[st.Domain]))
		}
	}
	cat, err := gw.Directory().Catalog()
	if err == nil && cat.Len() > 0 {
		emit(lintCheck(cat))
	}
	if err == nil {
		domains := make([]string, 0, len(gc.Upstreams))
		for _, u := range gc.Upstreams {
			domains = append(domains, u.Domain)
		}
		emit(callerChecks(gc.Callers, cat, domains, g.redactor())...)
	}
	emit(oauthChecks(ctx, gc.Callers)...)
	emit(poisonChecks(gw.Specs(), gc.Quarantine)...)
	emit(pinChecks(pins, gc, g.configs)...)
	if files != nil && len(gw.Specs()) > 0 {
		if c, err := gw.Directory().Catalog(files.Specs()...); err == nil {
			all = c
		}
	}
	return all, server.SelvesOf(gw)
}

// upstreamCheck is the doctor line of one upstream server (started by a
// command when stdio).
func upstreamCheck(st gateway.UpstreamStatus, stdio bool) check {
	c := check{name: "upstream", detail: fmt.Sprintf("%s: %s in %s", st.Domain, plural(st.Tools, "tool"), st.Latency.Round(time.Millisecond))}
	if len(st.Skipped) > 0 {
		c.detail += fmt.Sprintf(" (%d skipped: %s)", len(st.Skipped), strings.Join(st.Skipped, "; "))
	}
	if st.State != "up" {
		c.detail = fmt.Sprintf("%s: %v", st.Domain, st.Err)
		c.fix = upstreamAdvice(st, stdio)
	}
	return c
}

// envAdvice tells why a stdio server that ran before may now exit at
// start: it no longer inherits toolscout's whole environment.
const envAdvice = `; it gets only its "env" and toolscout's PATH, HOME, locale, temp and proxy settings: pass a variable it needs as "env": {"API_KEY": "${API_KEY}"}`

// upstreamAdvice says what to do about a server that did not come up, by
// what went wrong.
func upstreamAdvice(st gateway.UpstreamStatus, stdio bool) string {
	var exitErr *exec.ExitError
	switch {
	case st.State == "connecting":
		return fmt.Sprintf("%s did not answer initialize and tools/list within its connect timeout: run its command by hand to see whether it starts, or raise its \"connect_timeout\" (seconds) or --connect-timeout", st.Domain)
	case errors.Is(st.Err, exec.ErrNotFound) || errors.Is(st.Err, fs.ErrNotExist):
		return fmt.Sprintf("the command of %s was not found: install it, or give its full path in \"command\"", st.Domain)
	case errors.As(st.Err, &exitErr):
		return fmt.Sprintf("%s exited at start (%v): run its command by hand to see its errors", st.Domain, exitErr) + envAdvice
	case stdio && (errors.Is(st.Err, io.EOF) || errors.Is(st.Err, syscall.EPIPE) || errors.Is(st.Err, mcp.ErrConnectionClosed)):
		return fmt.Sprintf("%s exited or closed its stdout before answering: run its command by hand to see its errors", st.Domain) + envAdvice
	case errors.Is(st.Err, context.DeadlineExceeded) || isTimeout(st.Err):
		return fmt.Sprintf("%s did not answer within its connect timeout: check that it is a stdio MCP server, or raise its \"connect_timeout\" (seconds) or --connect-timeout", st.Domain)
	}
	return "check the command or URL of " + st.Domain + " (run it by hand to see its errors)"
}

// isTimeout reports a network timeout (an HTTP server that accepted the
// connection but did not answer in time), which is not always
// context.DeadlineExceeded.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// configAdvice says what to fix in a config that does not load.
func configAdvice(err error) string {
	var ce *ConfigError
	if errors.As(err, &ce) && ce.Path != "" {
		return fmt.Sprintf("edit %s at %s as the message says", ce.File, ce.Path)
	}
	if errors.As(err, &ce) {
		return fmt.Sprintf("edit %s as the message says (an mcpServers config, as Claude Desktop writes it)", ce.File)
	}
	return "pass a readable mcpServers config file with --config"
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
	for _, st := range a.gw.Upstreams().Status() {
		if st.State == "up" {
			fmt.Fprintf(w, "upstream %s: %s\n", st.Domain, plural(st.Tools, "tool"))
		} else {
			fmt.Fprintf(w, "upstream %s: unavailable: %v\n", st.Domain, st.Err)
		}
	}
}

// lintCheck is the lint summary as a doctor line: a note when tools are
// flagged (they work; their descriptions cost or confuse).
func lintCheck(cat *index.Catalog) check {
	rep, err := lint.Check(cat, lint.Options{})
	if err != nil {
		return check{name: "lint", detail: err.Error(), fix: "report this", note: true}
	}
	if rep.Flagged == 0 {
		return check{name: "lint", detail: lintSummary(rep)}
	}
	return check{name: "lint", detail: lintSummary(rep), fix: "run `toolscout lint` (with the same --catalog/--config) for each tool's problems", note: true}
}
