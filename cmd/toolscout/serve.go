package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server"
	"github.com/toolscout/toolscout/server/boot"
	"github.com/toolscout/toolscout/server/callers"
	"github.com/toolscout/toolscout/server/codemode"
	"github.com/toolscout/toolscout/server/httpguard"
)

// minReloadInterval bounds how often a read-only server looks where its
// data dir leads: a shorter interval would only keep a core busy.
const minReloadInterval = 10 * time.Millisecond

// serveUsage is serve's --help.
const serveUsage = "serve [flags]\n\nServes discover_tools, get_tool_schema and execute_tool over MCP: stdio by\ndefault (logs go to stderr), Streamable HTTP with --http. With --config it\nconnects to the upstream servers in the background and indexes their tools\nas they come; the tools they listed last (kept in the data dir) are served\nat once. Over HTTP it also answers GET /healthz (alive), GET /readyz\n(ready to answer) and GET /metrics (Prometheus), and drains on SIGTERM;\nwith callers configured it re-reads their token and key files when they\nchange, or on SIGHUP.\n\nEnvironment:\n  TOOLSCOUT_EXPOSE      the exposure mode (as --expose) when neither --expose nor\n                        the config's toolscout.expose sets it\n  TOOLSCOUT_FALLBACK    eager: list every tool directly when the meta layer cannot\n                        serve (the index fails to load, searches keep failing);\n                        none: do not (the default); the config's\n                        toolscout.fallback wins\n  TOOLSCOUT_AUTH_TOKEN  with --http: the bearer token (--auth-token-file wins)\n  TOOLSCOUT_CALLER      over stdio, with callers configured (toolscout.callers):\n                        the caller this client is, whose view it gets\n  OLLAMA_HOST           where Ollama listens, as Ollama reads it"

// serveCommand is serve in two halves: parseServe merges and checks the
// flags, the config files and the environment once, into plain values;
// Run only runs (litestream's ReplicateCommand.ParseFlags and Run).
type serveCommand struct {
	g   globalFlags
	fs  *flag.FlagSet // for the flags given (feedback's, audit's)
	log *slog.Logger
	// src is what readSources read (the config, the catalog files), base
	// the catalog files' domains, which Run's prepareFrom opens.
	src  *app
	base []index.DomainSpec

	httpAddr string
	guard    httpguard.Options
	idle     time.Duration // --session-idle
	sessions int           // --max-sessions
	drain    time.Duration // --drain-timeout
	delay    time.Duration // --drain-delay
	reload   time.Duration // --reload-interval

	callersFile string
	whoSpec     *callersSpec
	who         *callers.Set
	stdioWho    *callers.Caller

	exp       server.Exposure
	mode      string // the exposure mode as given (for the start line)
	fallback  string
	wait      time.Duration // --startup-wait, or the config's
	greetWait time.Duration // --initialize-wait, or the config's

	fb         feedbackFlags
	feedbackOn bool
	auditDest  string
	auditArgs  bool
	code       codeConfig
}

// serveFlags are serve's own flags as parsed, before they are merged
// with the config and the environment.
type serveFlags struct {
	httpAddr, expose, toolNames, tokenFile, callersFile string
	condense, insecure                                  bool
	pins, origins                                       stringList
	idle, reloadEvery, drainTimeout, drainDelay         time.Duration
	maxSessions                                         int
	startupWait, initializeWait                         durationFlag
	au                                                  auditFlags
	cf                                                  codeFlags
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseServe(args, stderr)
	if err != nil {
		return err
	}
	return c.Run(ctx, stderr)
}

// register adds serve's flags to fs.
func (f *serveFlags) register(fs *flag.FlagSet, c *serveCommand) {
	c.g.register(fs, "info")
	fs.StringVar(&f.httpAddr, "http", "", "serve Streamable HTTP on `ADDR` (e.g. 127.0.0.1:8080) instead of stdio")
	fs.StringVar(&f.expose, "expose", "", "what tools/list shows: "+exposeChoices+"; auto lists every tool while their schemas cost fewer than TOKENS (default "+strconv.Itoa(server.DefaultAutoBudget)+"), else the meta-tools; compact lists every tool with a condensed description and its required arguments (default meta, or the config's toolscout.expose, or TOOLSCOUT_EXPOSE)")
	fs.BoolVar(&f.condense, "condense", false, "list the tools that eager, core, dynamic and auto mode show directly with descriptions condensed to at most 9 words, as compact mode does (get_tool_schema gives them whole); without this flag the config's toolscout.condense sets it")
	fs.StringVar(&f.toolNames, "tool-names", "", "what the tools listed directly and the prompts are called: qualified (domain__tool, the default) or server (the name each server gives them, domain__tool only where two servers have the same name); without this flag the config's toolscout.tool_names sets it")
	fs.Var(&f.pins, "pin", "with --expose core: a qualified tool name or `GLOB` to list directly (repeatable)")
	fs.Var(&f.origins, "allow-origin", "with --http: also accept browser requests from `ORIGIN` (scheme://host[:port], or *; repeatable); loopback origins are always accepted")
	fs.StringVar(&f.tokenFile, "auth-token-file", "", "with --http: require \"Authorization: Bearer TOKEN\", the token read from `FILE` (or set TOOLSCOUT_AUTH_TOKEN)")
	fs.StringVar(&f.callersFile, "callers", "", "read the callers (toolscout.callers, and toolscout.jwt or toolscout.oauth) from `FILE`, a JSON file {\"toolscout\": {\"callers\": ..., \"jwt\": ...}}: for --read-only replicas, which take no --config (a --config file may define them too)")
	fs.BoolVar(&f.insecure, "insecure", false, "with --http: allow a non-loopback address without a token")
	fs.DurationVar(&f.idle, "session-idle", 30*time.Minute, "with --http: close a session after this long without a request (0: never)")
	fs.IntVar(&f.maxSessions, "max-sessions", 1000, "with --http: the most sessions open at once; more get 503 (0: no limit)")
	fs.BoolVar(&c.g.readOnly, "read-only", false, "serve the indexes that toolscout index built in the data dir without writing there, beside any number of other read-only servers (not with --config)")
	fs.DurationVar(&f.reloadEvery, "reload-interval", 2*time.Second, "with --read-only: how often to look where the data dir (a symbolic link) leads, and swap in a newer build found there (0: never)")
	fs.DurationVar(&f.drainTimeout, "drain-timeout", 10*time.Second, "with --http: on SIGTERM or SIGINT, stop accepting connections and wait this long for the requests in flight before exiting (0: do not wait)")
	fs.DurationVar(&f.drainDelay, "drain-delay", 0, "with --http: on SIGTERM or SIGINT, first answer /readyz with 503 and keep serving for this long, so that a load balancer's health checks take this server out before it stops accepting connections (e.g. the check interval times the failed checks it needs, and a little more); a second signal ends the wait")
	f.startupWait = durationFlag{d: search.DefaultStartupWait}
	f.initializeWait = durationFlag{d: server.DefaultInitializeWait}
	c.fb.register(fs)
	f.au.register(fs)
	f.cf.register(fs)
	fs.Var(&f.startupWait, "startup-wait", "how long (`DURATION`) the first tools/list (with --expose eager, core, auto or compact, or the eager fallback) and the first meta-tool calls wait for the index to load and the upstream servers to list their tools, when the data dir does not have them yet; without this flag the config's toolscout.startup_wait sets it")
	fs.Var(&f.initializeWait, "initialize-wait", "how long (`DURATION`), counted from the start, a client's initialize waits for the upstream servers to list their tools, so that the first session's instructions say what each server is for; without this flag the config's toolscout.initialize_wait sets it")
}

// parseServe parses serve's flags and merges them with the config files
// and the environment, checking each once: every mistake is told before
// the data dir opens and the upstream servers start.
func parseServe(args []string, stderr io.Writer) (*serveCommand, error) {
	c := &serveCommand{}
	var f serveFlags
	fs := newFlagSet("serve", serveUsage, stderr)
	f.register(fs, c)
	c.fs = fs
	pos, err := parseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	if err := noArgs("serve", pos); err != nil {
		return nil, err
	}
	if err := c.checkFlags(&f); err != nil {
		return nil, err
	}
	if c.log, err = c.g.logger(stderr); err != nil {
		return nil, err
	}
	if err := c.parseCallers(&f); err != nil {
		return nil, err
	}
	if err := checkServeEnv(c.who, c.log); err != nil {
		return nil, err
	}
	if c.src, c.base, err = c.g.readSources(c.log); err != nil {
		return nil, err
	}
	if err := checkCallerHeaders(c.src.gc, c.who); err != nil {
		return nil, err
	}
	if err := checkCallerIdentityStdio(c.src.gc, c.httpAddr); err != nil {
		return nil, err
	}
	if err := checkCallerIdentity(c.src.gc); err != nil {
		return nil, err
	}
	return c, c.merge(&f)
}

// checkFlags checks the flags on their own, and copies those that need
// nothing else into c.
func (c *serveCommand) checkFlags(f *serveFlags) error {
	if c.g.readOnly && len(c.g.configs) > 0 {
		return usagef("--read-only serves catalogs (--catalog, or the built-in one), not --config: a gateway re-indexes its upstream servers' tools as they change, which writes the data dir")
	}
	switch f.toolNames {
	case "", server.ToolNamesQualified, server.ToolNamesServer:
	default:
		return usagef("--tool-names %q: use qualified (every tool as domain__tool, the default) or server (each under its server's own name, domain__tool only where two servers have the same name)", f.toolNames)
	}
	if f.reloadEvery < 0 || f.reloadEvery > 0 && f.reloadEvery < minReloadInterval {
		return usagef("--reload-interval %s: want 0 (never) or at least %s, e.g. 2s", f.reloadEvery, minReloadInterval)
	}
	if _, err := c.fb.resolve(c.fs, ""); err != nil {
		return err
	}
	if _, err := f.cf.resolve(c.fs, nil); err != nil {
		return err
	}
	if c.given("feedback-out") && !c.g.readOnly {
		return usagef("--feedback-out is for --read-only replicas: a server that writes its data dir records what agents run there")
	}
	if f.drainTimeout < 0 {
		return usagef("--drain-timeout %s: want a duration of 0 or more, e.g. 10s", f.drainTimeout)
	}
	if f.drainDelay < 0 {
		return usagef("--drain-delay %s: want a duration of 0 or more, e.g. 2s", f.drainDelay)
	}
	if f.expose != "" {
		if _, err := parseExpose(f.expose); err != nil {
			return usagef("--expose %v", err)
		}
	}
	c.httpAddr, c.idle, c.sessions = f.httpAddr, f.idle, f.maxSessions
	c.drain, c.delay, c.reload, c.callersFile = f.drainTimeout, f.drainDelay, f.reloadEvery, f.callersFile
	return nil
}

// given reports whether the flag name was given.
func (c *serveCommand) given(name string) bool {
	given := false
	c.fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// parseCallers reads the callers before anything starts, so that a
// missing token file is told at once, and the HTTP guard.
func (c *serveCommand) parseCallers(f *serveFlags) error {
	var err error
	if c.whoSpec, c.who, err = c.g.callers(f.callersFile, c.log); err != nil {
		return err
	}
	if c.httpAddr != "" {
		if c.guard, err = httpGuard(c.httpAddr, f.origins, f.tokenFile, f.insecure || c.who != nil); err != nil {
			return err
		}
		c.g.redactor().Add(c.guard.Token)
		if c.who != nil && c.guard.Token != "" {
			return usagef("toolscout.callers and a single token (--auth-token-file or TOOLSCOUT_AUTH_TOKEN) are both set: with callers, each caller's token_files or JWT names it; drop the single token")
		}
	}
	if c.who != nil && c.httpAddr == "" {
		if c.stdioWho, err = stdioCaller(c.who, os.Getenv); err != nil {
			return err
		}
	}
	return nil
}

// checkServeEnv checks the environment's values before the index opens
// and the upstream servers start, so that a typo is told at once.
func checkServeEnv(who *callers.Set, log *slog.Logger) error {
	if v := os.Getenv("TOOLSCOUT_EXPOSE"); v != "" {
		if _, err := parseExpose(v); err != nil {
			return usagef("TOOLSCOUT_EXPOSE=%v", err)
		}
	}
	switch v := os.Getenv("TOOLSCOUT_FALLBACK"); v {
	case "", "none", string(server.ExposeEager):
	default:
		return usagef("TOOLSCOUT_FALLBACK=%q: use eager (list every tool directly when the meta layer cannot serve) or none", v)
	}
	if who == nil && os.Getenv("TOOLSCOUT_CALLER") != "" {
		log.Warn("TOOLSCOUT_CALLER is set but no callers are configured (toolscout.callers): the client sees every tool")
	}
	return nil
}

// merge sets what flags, the config and the environment all say: each
// flag when given, else the config's key, else the environment, else
// the default.
func (c *serveCommand) merge(f *serveFlags) error {
	gc := c.src.gc
	if gc == nil {
		gc = &gatewayConfig{} // no --config: no key is set
	}
	c.mode = cmp.Or(f.expose, gc.Expose, os.Getenv("TOOLSCOUT_EXPOSE"), string(server.ExposeMeta)) // checked above, or by the config
	c.exp, _ = parseExpose(c.mode)
	c.exp.Pinned = append(slices.Clone([]string(f.pins)), gc.Pinned...)
	c.exp.Condense = f.condense
	if gc.Condense != nil && !c.given("condense") {
		c.exp.Condense = *gc.Condense
	}
	c.exp.Names = cmp.Or(f.toolNames, gc.ToolNames)
	c.fallback = cmp.Or(gc.Fallback, os.Getenv("TOOLSCOUT_FALLBACK")) // checked above
	if c.exp.Mode == server.ExposeCore && len(c.exp.Pinned) == 0 {
		return usagef("--expose core needs tools to pin: --pin NAME_OR_GLOB or toolscout.pinned in the config")
	}
	c.wait, c.greetWait = f.startupWait.or(gc.StartupWait), f.initializeWait.or(gc.InitializeWait)
	var err error
	if c.feedbackOn, err = c.fb.resolve(c.fs, gc.Feedback); err != nil {
		return err
	}
	if c.auditDest, c.auditArgs, err = f.au.resolve(c.fs, c.src.gc); err != nil {
		return err
	}
	if c.code, err = f.cf.resolve(c.fs, c.src.gc); err != nil {
		return err
	}
	if c.exp.Mode != server.ExposeCode {
		var given []string
		c.fs.Visit(func(f *flag.Flag) {
			if strings.HasPrefix(f.Name, "code-") {
				given = append(given, "--"+f.Name)
			}
		})
		if len(given) > 0 {
			c.log.Warn("code mode's flags are ignored: the exposure mode is not code (--expose code, or toolscout.expose)", "flags", strings.Join(given, " "), "mode", c.exp.Mode)
		}
	}
	return nil
}

// Run serves until ctx ends (a signal), the client leaves (stdio) or the
// index fails to load. The index loads behind the server (server/boot):
// the first initialize waits for the upstream servers' tools within the
// initialize wait, so that its instructions say what each is for; the
// first tools/list and meta-tool calls wait for what they need, within
// the startup wait.
func (c *serveCommand) Run(ctx context.Context, stderr io.Writer) error {
	run := running{serving: true}
	if c.g.readOnly {
		// The build served is the one the data dir leads to now: a link
		// switched while the index loads is seen by the start's watch,
		// not half-read here.
		if b, err := filepath.EvalSymlinks(c.g.dataDir); err == nil {
			run.build = b
		}
	}
	gcLoaded := lazyGCWhileLoading()
	defer gcLoaded()
	a, base, err := c.g.prepareFrom(ctx, c.log, c.src, c.base, run, false)
	if err != nil {
		return err
	}
	// ctx is the server's work (loading, upstream sessions): over stdio a
	// signal ends it at once, over HTTP only after the drain, so that the
	// calls in flight can still reach their upstream servers (an SSE
	// upstream's session lives on it).
	sig := ctx
	ctx, stop := context.WithCancelCause(context.WithoutCancel(sig))
	opts, closeOpts, err := c.serverOptions(ctx, a, base, stderr)
	if err != nil {
		closeOpts()
		stop(nil)
		a.Close()
		return err
	}
	st := c.starter(a, base, opts.Feedback, stderr, stop, gcLoaded)
	defer st.Close()
	defer a.stopEmbedder()
	defer stop(nil)
	defer closeOpts()
	if c.httpAddr == "" {
		defer context.AfterFunc(sig, func() {
			c.log.Info("shutting down: signal received") // over HTTP, the drain says so
			stop(nil)
		})()
	}
	opts.Readiness = st.Readiness()
	srv := server.New(opts)
	st.Open(ctx, srv)
	defer c.watchCallers(ctx, a)()
	what := c.describe(a)
	if c.httpAddr == "" {
		return c.serveStdio(ctx, srv, st, what)
	}
	o := httpServing{
		addr:          c.httpAddr,
		mcp:           httpguard.Wrap(srv.HTTPHandler(server.HTTPOptions{SessionIdle: c.idle, MaxSessions: c.sessions}), c.guard),
		metrics:       httpguard.Wrap(srv.MetricsHandler(), c.guard),
		callers:       c.who,
		srv:           srv,
		drainTimeout:  c.drain,
		drainDelay:    c.delay,
		what:          what,
		authenticated: c.guard.Token != "" || c.who != nil,
		jsonLogs:      c.g.logFormat == "json",
	}
	if err := serveHTTP(sig, ctx, o, stderr, c.log); err != nil {
		return err
	}
	return loadError(ctx)
}

// starter returns the start of a's index and gateway: stop stops the
// server when the index cannot load (and is not served otherwise).
func (c *serveCommand) starter(a *app, base []index.DomainSpec, fb *search.Feedback, stderr io.Writer, stop func(error), gcLoaded func()) *boot.Starter {
	g, log := &c.g, c.log
	o := boot.Options{
		Live: a.live, Store: a.st.Load(), Gateway: a.gw, StartupWait: c.wait, Feedback: fb,
		Embedder: a.embedder, Base: base, Known: a.known, Cached: a.cat,
		Fallback: c.fallback == string(server.ExposeEager), Stop: stop,
		Progress: func(emb embed.Embedder) (func(int, int), func()) {
			bar := newProgress(stderr, "embedding "+emb.Info().String())
			return bar.update, bar.finish
		},
		AfterLoad: func() { time.AfterFunc(time.Second, gcLoaded) },
		Logger:    log,
	}
	if g.readOnly {
		o.Builds = boot.Builds{DataDir: g.dataDir, Serving: a.run.build, Every: c.reload,
			Open: func(ctx context.Context, dir string) (*store.Store, error) {
				src, err := g.baseSource()
				if err != nil {
					return nil, err
				}
				return g.openStore(dir, store.Options{Set: g.set(), ReadOnly: true, Catalog: src, Logger: log})
			},
			Embedder: func(ctx context.Context) (embed.Embedder, error) { return g.newEmbedder(ctx, log, "") },
		}
	}
	return boot.New(o)
}

// serverOptions returns server.New's options, with the feedback
// channel, the audit trail and code mode's runner set up; closeAll
// closes what was opened, also after an error.
func (c *serveCommand) serverOptions(ctx context.Context, a *app, base []index.DomainSpec, stderr io.Writer) (opts server.Options, closeAll func(), err error) {
	var closers []func()
	closeAll = func() {
		for _, f := range slices.Backward(closers) {
			f()
		}
	}
	opts = server.Options{Live: a.live, Expose: c.exp, Fallback: c.fallback, StartupWait: c.wait, InitializeWait: c.greetWait,
		Version: version, Logger: c.log, Domains: a.domainSizes(base), Callers: c.who, Caller: c.stdioWho, Redactor: c.g.redactor()}
	if a.gc != nil {
		opts.Instructions = a.gc.Instructions
	}
	if a.gw != nil {
		opts.Executor = a.gw
	}
	if c.httpAddr != "" {
		opts.Metrics = server.NewMetrics()
	}
	if c.feedbackOn {
		model, sink, closeSink, err := c.fb.setUp(ctx, a.st.Load(), stderr, c.log)
		if err != nil {
			return opts, closeAll, err
		}
		closers = append(closers, closeSink)
		opts.Feedback, opts.FeedbackSink = model, sink
		// What searches need of the recorded requests is made in the
		// background from now on (the log's load, each run recorded,
		// a re-index), not in the searches that meet them.
		model.Attach(ctx, a.live.Engine(), c.log)
	}
	if c.auditDest != "" {
		w, closeAudit, err := openAudit(ctx, c.auditDest, stderr, c.log)
		if err != nil {
			return opts, closeAll, err
		}
		closers = append(closers, closeAudit)
		opts.Audit, opts.AuditArguments = w, c.auditArgs
		c.log.Info("audit trail on", "to", c.auditDest, "arguments", c.auditArgs)
	}
	if c.exp.Mode == server.ExposeCode {
		runner := codemode.New(codemode.Options{MaxConcurrent: c.code.Concurrent, Log: c.log})
		closers = append(closers, func() { runner.Close() })
		opts.Code = &server.Code{Runner: runner, Limits: c.code.Limits}
	}
	return opts, closeAll, nil
}

// watchCallers logs what each caller sees once the upstream servers
// have listed their tools and, over HTTP, re-reads the token files, key
// files and callers block when they change, or on SIGHUP: no restart to
// rotate. The returned function stops listening for SIGHUP.
func (c *serveCommand) watchCallers(ctx context.Context, a *app) (stop func()) {
	if c.who == nil {
		return func() {}
	}
	go warnCallers(ctx, c.log, c.who, a)
	if c.httpAddr == "" {
		return func() {}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go c.g.watchCallers(ctx, c.callersFile, c.whoSpec, c.who, c.log, callersPoll, hup)
	return func() { signal.Stop(hup) }
}

// describe is the start line's description of what is served.
func (c *serveCommand) describe(a *app) string {
	what := fmt.Sprintf("%s, expose %s (index loading)", plural(len(a.domain), "domain"), c.mode)
	if a.gw != nil {
		what += fmt.Sprintf(", %s connecting", plural(len(a.gc.Upstreams), "upstream server"))
		if len(a.known) > 0 {
			what += fmt.Sprintf(" (the tools of %d as they listed them last, meanwhile)", len(a.known))
		}
	}
	return what
}

// serveStdio serves over stdio until the client leaves or ctx ends.
func (c *serveCommand) serveStdio(ctx context.Context, srv *server.Server, st *boot.Starter, what string) error {
	c.log.Info("serving over stdio: " + what)
	err := srv.ServeStdio(ctx, os.Stdin, os.Stdout, c.log)
	if err == nil && ctx.Err() == nil {
		// The client left (stdin closed). A load that is about to fail
		// (an invalid catalog fails in milliseconds) still gets its
		// error said, instead of a silent exit 0.
		select {
		case <-st.Readiness().Reached(boot.Settled):
		case <-time.After(2 * time.Second):
		}
	}
	if ctx.Err() != nil {
		return loadError(ctx)
	}
	return err
}

// loadError returns the error that stopped a server whose index failed to
// load, or nil when it stopped for a signal.
func loadError(ctx context.Context) error {
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// httpGuard reads the token (file first, then TOOLSCOUT_AUTH_TOKEN) and
// refuses a non-loopback address without one unless insecure is set.
func httpGuard(addr string, origins []string, tokenFile string, insecure bool) (httpguard.Options, error) {
	o := httpguard.Options{AllowedOrigins: origins}
	for _, or := range origins {
		if or != "*" && !strings.Contains(or, "://") {
			return o, usagef("--allow-origin %q: an origin is scheme://host[:port], e.g. https://app.example", or)
		}
	}
	if tokenFile != "" {
		data, err := os.ReadFile(tokenFile)
		if err != nil {
			return o, fmt.Errorf("--auth-token-file: %w", err)
		}
		o.Token = strings.TrimSpace(string(data))
		if o.Token == "" {
			return o, fmt.Errorf("--auth-token-file %s is empty: put the token in it", tokenFile)
		}
	} else {
		o.Token = strings.TrimSpace(os.Getenv("TOOLSCOUT_AUTH_TOKEN"))
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return o, usagef("--http %q: want HOST:PORT, e.g. 127.0.0.1:8080", addr)
	}
	if !httpguard.IsLoopbackHost(host) && o.Token == "" && !insecure {
		return o, usagef("--http %s is reachable from other machines and toolscout has no token: set TOOLSCOUT_AUTH_TOKEN or --auth-token-file, or pass --insecure to serve without authentication", addr)
	}
	return o, nil
}

// httpServing is what serveHTTP serves.
type httpServing struct {
	addr string
	// mcp and metrics are guarded (Host, Origin, token: httpguard.Wrap);
	// the health endpoints are not.
	mcp, metrics  http.Handler
	srv           *server.Server
	drainTimeout  time.Duration
	drainDelay    time.Duration // serving on, not ready, before the drain
	what          string        // the log line's description of the server
	authenticated bool
	jsonLogs      bool // --log-format json: the start lines are log records too
	// callers, with toolscout.oauth, publish the protected resource
	// metadata beside /mcp.
	callers *callers.Set
}

// serveHTTP serves the MCP server over Streamable HTTP at /mcp, with the
// operations endpoints beside it, until sig is done (a signal: the server
// drains) or work is (the index failed to load).
func serveHTTP(sig, work context.Context, o httpServing, stderr io.Writer, log *slog.Logger) error {
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.addr, err)
	}
	var calls inFlight
	mux := http.NewServeMux()
	mux.Handle("/mcp", calls.count(o.mcp))
	// Probes carry no token and no Origin, and come by IP or under a
	// load balancer's own name: they are answered whatever the Host, and
	// say "ok", "ready" or why not (naming nothing), no more than a 403
	// of the guarded endpoints tells. Metrics name the upstream servers
	// and the traffic, so they are guarded as /mcp is: a foreign Host on
	// a loopback address (DNS rebinding), a foreign Origin, and the
	// token when there is one.
	mux.Handle("GET /healthz", server.HealthHandler())
	mux.Handle("GET /readyz", o.srv.ReadyHandler())
	mux.Handle("GET /metrics", o.metrics)
	if o.callers != nil {
		// Public, as the probes: a client without a token reads here
		// where to get one (RFC 9728), from any origin.
		if h := o.callers.MetadataHandler(); h != nil {
			for _, p := range o.callers.MetadataPaths() {
				mux.Handle(p, h)
			}
		}
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "toolscout speaks MCP (Streamable HTTP) at /mcp; GET /healthz, /readyz and /metrics are its operations endpoints", http.StatusNotFound)
	})
	// Requests' contexts end with streams, which a drain cancels once
	// the calls in flight are answered: that ends the event streams
	// clients hold open (GET /mcp).
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	// Stalled clients cannot hold connections: headers and bodies must
	// arrive in time (SSE streams are responses, which this does not bound).
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return streams }}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	ip := net.ParseIP(host)
	clientHost := host
	if ip != nil && ip.IsUnspecified() {
		// 0.0.0.0 and [::] are not addresses a client can dial.
		clientHost = "127.0.0.1"
	}
	url := "http://" + net.JoinHostPort(clientHost, port) + "/mcp"
	if o.jsonLogs {
		// One JSON object a line on stderr, as --log-format json promises.
		log.Info("serving over Streamable HTTP", "what", o.what, "url", url, "listen", ln.Addr().String(), "reachable_from_other_machines", ip == nil || !ip.IsLoopback(), "authenticated", o.authenticated)
		if (ip == nil || !ip.IsLoopback()) && !o.authenticated {
			log.Warn("reachable from other machines WITHOUT authentication (--insecure)", "listen", ln.Addr().String())
		}
	} else {
		fmt.Fprintf(stderr, "toolscout serving %s over Streamable HTTP at %s\n", o.what, url)
		fmt.Fprintf(stderr, "connect a client, e.g.: claude mcp add --transport http toolscout %s\n", url)
	}
	if (ip == nil || !ip.IsLoopback()) && !o.jsonLogs {
		if o.authenticated {
			fmt.Fprintf(stderr, "listening on %s: reachable from other machines (with the bearer token), at this machine's addresses\n", ln.Addr())
		} else {
			fmt.Fprintf(stderr, "warning: %s is reachable from other machines WITHOUT authentication (--insecure)\n", ln.Addr())
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-sig.Done():
	case <-work.Done():
	}
	o.srv.Drain()
	if sig.Err() != nil {
		notReadyFor(o.drainDelay, log)
	}
	drain(hs, &calls, endStreams, o.drainTimeout, log)
	return nil
}

// lazyGCWhileLoading makes the garbage collector run at a quarter of its
// usual pace until the returned function is called (once the index has
// loaded; calling it again does nothing). The heap a start builds is
// nearly all live (the catalog, the indexes' tables): collecting it as
// it grows only delays the first answer, by about 35 ms of 450 at 100k
// tools (BENCHMARKS.md). A GOGC the user set stands.
func lazyGCWhileLoading() (loaded func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(400)
	var once sync.Once
	return func() { once.Do(func() { debug.SetGCPercent(old) }) }
}
