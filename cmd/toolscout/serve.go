package main

import (
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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server"
	"github.com/toolscout/toolscout/server/callers"
	"github.com/toolscout/toolscout/server/codemode"
	"github.com/toolscout/toolscout/server/httpguard"
)

// minReloadInterval bounds how often a read-only server looks where its
// data dir leads: a shorter interval would only keep a core busy.
const minReloadInterval = 10 * time.Millisecond

// verifyDelay is how long after its index has loaded serve checks the
// data dir's files that no start reads (store.Verify).
const verifyDelay = 10 * time.Second

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var g globalFlags
	fs := newFlagSet("serve", "serve [flags]\n\nServes discover_tools, get_tool_schema and execute_tool over MCP: stdio by\ndefault (logs go to stderr), Streamable HTTP with --http. With --config it\nconnects to the upstream servers in the background and indexes their tools\nas they come; the tools they listed last (kept in the data dir) are served\nat once. Over HTTP it also answers GET /healthz (alive), GET /readyz\n(ready to answer) and GET /metrics (Prometheus), and drains on SIGTERM;\nwith callers configured it re-reads their token and key files when they\nchange, or on SIGHUP.\n\nEnvironment:\n  TOOLSCOUT_EXPOSE      the exposure mode (as --expose) when neither --expose nor\n                        the config's toolscout.expose sets it\n  TOOLSCOUT_FALLBACK    eager: list every tool directly when the meta layer cannot\n                        serve (the index fails to load, searches keep failing);\n                        none: do not (the default); the config's\n                        toolscout.fallback wins\n  TOOLSCOUT_AUTH_TOKEN  with --http: the bearer token (--auth-token-file wins)\n  TOOLSCOUT_CALLER      over stdio, with callers configured (toolscout.callers):\n                        the caller this client is, whose view it gets\n  OLLAMA_HOST           where Ollama listens, as Ollama reads it", stderr)
	g.register(fs, "info")
	httpAddr := fs.String("http", "", "serve Streamable HTTP on `ADDR` (e.g. 127.0.0.1:8080) instead of stdio")
	expose := fs.String("expose", "", "what tools/list shows: "+exposeChoices+"; auto lists every tool while their schemas cost fewer than TOKENS (default "+strconv.Itoa(server.DefaultAutoBudget)+"), else the meta-tools; compact lists every tool with a condensed description and its required arguments (default meta, or the config's toolscout.expose, or TOOLSCOUT_EXPOSE)")
	condense := fs.Bool("condense", false, "list the tools that eager, core, dynamic and auto mode show directly with descriptions condensed to at most 9 words, as compact mode does (get_tool_schema gives them whole); without this flag the config's toolscout.condense sets it")
	toolNames := fs.String("tool-names", "", "what the tools listed directly and the prompts are called: qualified (domain__tool, the default) or server (the name each server gives them, domain__tool only where two servers have the same name); without this flag the config's toolscout.tool_names sets it")
	var pins stringList
	fs.Var(&pins, "pin", "with --expose core: a qualified tool name or `GLOB` to list directly (repeatable)")
	var origins stringList
	fs.Var(&origins, "allow-origin", "with --http: also accept browser requests from `ORIGIN` (scheme://host[:port], or *; repeatable); loopback origins are always accepted")
	tokenFile := fs.String("auth-token-file", "", "with --http: require \"Authorization: Bearer TOKEN\", the token read from `FILE` (or set TOOLSCOUT_AUTH_TOKEN)")
	callersFile := fs.String("callers", "", "read the callers (toolscout.callers, and toolscout.jwt or toolscout.oauth) from `FILE`, a JSON file {\"toolscout\": {\"callers\": ..., \"jwt\": ...}}: for --read-only replicas, which take no --config (a --config file may define them too)")
	insecure := fs.Bool("insecure", false, "with --http: allow a non-loopback address without a token")
	idle := fs.Duration("session-idle", 30*time.Minute, "with --http: close a session after this long without a request (0: never)")
	maxSessions := fs.Int("max-sessions", 1000, "with --http: the most sessions open at once; more get 503 (0: no limit)")
	fs.BoolVar(&g.readOnly, "read-only", false, "serve the indexes that toolscout index built in the data dir without writing there, beside any number of other read-only servers (not with --config)")
	reloadEvery := fs.Duration("reload-interval", 2*time.Second, "with --read-only: how often to look where the data dir (a symbolic link) leads, and swap in a newer build found there (0: never)")
	drainTimeout := fs.Duration("drain-timeout", 10*time.Second, "with --http: on SIGTERM or SIGINT, stop accepting connections and wait this long for the requests in flight before exiting (0: do not wait)")
	drainDelay := fs.Duration("drain-delay", 0, "with --http: on SIGTERM or SIGINT, first answer /readyz with 503 and keep serving for this long, so that a load balancer's health checks take this server out before it stops accepting connections (e.g. the check interval times the failed checks it needs, and a little more); a second signal ends the wait")
	startupWait := durationFlag{d: search.DefaultStartupWait}
	initializeWait := durationFlag{d: server.DefaultInitializeWait}
	var fb feedbackFlags
	fb.register(fs)
	var au auditFlags
	au.register(fs)
	var cf codeFlags
	cf.register(fs)
	fs.Var(&startupWait, "startup-wait", "how long (`DURATION`) the first tools/list (with --expose eager, core, auto or compact, or the eager fallback) and the first meta-tool calls wait for the index to load and the upstream servers to list their tools, when the data dir does not have them yet; without this flag the config's toolscout.startup_wait sets it")
	fs.Var(&initializeWait, "initialize-wait", "how long (`DURATION`), counted from the start, a client's initialize waits for the upstream servers to list their tools, so that the first session's instructions say what each server is for; without this flag the config's toolscout.initialize_wait sets it")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs("serve", pos); err != nil {
		return err
	}
	if g.readOnly && len(g.configs) > 0 {
		return usagef("--read-only serves catalogs (--catalog, or the built-in one), not --config: a gateway re-indexes its upstream servers' tools as they change, which writes the data dir")
	}
	switch *toolNames {
	case "", server.ToolNamesQualified, server.ToolNamesServer:
	default:
		return usagef("--tool-names %q: use qualified (every tool as domain__tool, the default) or server (each under its server's own name, domain__tool only where two servers have the same name)", *toolNames)
	}
	if *reloadEvery < 0 || *reloadEvery > 0 && *reloadEvery < minReloadInterval {
		return usagef("--reload-interval %s: want 0 (never) or at least %s, e.g. 2s", *reloadEvery, minReloadInterval)
	}
	if _, err := fb.resolve(fs, ""); err != nil {
		return err
	}
	if _, err := cf.resolve(fs, nil); err != nil {
		return err
	}
	outGiven := false
	fs.Visit(func(f *flag.Flag) { outGiven = outGiven || f.Name == "feedback-out" })
	if outGiven && !g.readOnly {
		return usagef("--feedback-out is for --read-only replicas: a server that writes its data dir records what agents run there")
	}
	if *drainTimeout < 0 {
		return usagef("--drain-timeout %s: want a duration of 0 or more, e.g. 10s", *drainTimeout)
	}
	if *drainDelay < 0 {
		return usagef("--drain-delay %s: want a duration of 0 or more, e.g. 2s", *drainDelay)
	}
	if *expose != "" {
		if _, err := parseExpose(*expose); err != nil {
			return usagef("--expose %v", err)
		}
	}
	log, err := g.logger(stderr)
	if err != nil {
		return err
	}
	// The callers are read before anything starts, so that a missing
	// token file is told at once.
	whoSpec, who, err := g.callers(*callersFile, log)
	if err != nil {
		return err
	}
	var guard httpguard.Options
	if *httpAddr != "" {
		if guard, err = httpGuard(*httpAddr, origins, *tokenFile, *insecure || who != nil); err != nil {
			return err
		}
		g.redactor().Add(guard.Token)
		if who != nil && guard.Token != "" {
			return usagef("toolscout.callers and a single token (--auth-token-file or TOOLSCOUT_AUTH_TOKEN) are both set: with callers, each caller's token_files or JWT names it; drop the single token")
		}
	}
	var stdioWho *callers.Caller
	if who != nil && *httpAddr == "" {
		if stdioWho, err = stdioCaller(who, os.Getenv); err != nil {
			return err
		}
	}
	// The environment's values are checked before the index opens and
	// the upstream servers start, so that a typo is told at once.
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
	if g.readOnly {
		// The build served is the one the data dir leads to now: a
		// link switched while the index loads is seen by watchBuilds,
		// not half-read here.
		if g.build, err = filepath.EvalSymlinks(g.dataDir); err != nil {
			g.build = ""
		}
	}
	g.serving = true
	gcLoaded := lazyGCWhileLoading()
	defer gcLoaded()
	a, base, err := g.prepare(ctx, log, false)
	if err != nil {
		return err
	}
	defer a.Close()
	if err := checkCallerHeaders(a.gc, who); err != nil {
		return err
	}
	mode := *expose
	fallback := ""
	if a.gc != nil {
		if mode == "" {
			mode = a.gc.Expose
		}
		fallback = a.gc.Fallback
	}
	if mode == "" {
		mode = os.Getenv("TOOLSCOUT_EXPOSE") // checked above
	}
	if mode == "" {
		mode = string(server.ExposeMeta)
	}
	exp, _ := parseExpose(mode) // checked above, or by the config
	exp.Pinned = pins
	exp.Condense = *condense
	condenseGiven := false
	fs.Visit(func(f *flag.Flag) { condenseGiven = condenseGiven || f.Name == "condense" })
	if a.gc != nil && a.gc.Condense != nil && !condenseGiven {
		exp.Condense = *a.gc.Condense
	}
	exp.Names = *toolNames
	if exp.Names == "" && a.gc != nil {
		exp.Names = a.gc.ToolNames
	}
	if a.gc != nil {
		exp.Pinned = append(exp.Pinned, a.gc.Pinned...)
	}
	if fallback == "" {
		fallback = os.Getenv("TOOLSCOUT_FALLBACK") // checked above
	}
	if exp.Mode == server.ExposeCore && len(exp.Pinned) == 0 {
		return usagef("--expose core needs tools to pin: --pin NAME_OR_GLOB or toolscout.pinned in the config")
	}
	wait, greetWait := startupWait.d, initializeWait.d
	configuredFeedback := ""
	if a.gc != nil {
		wait, greetWait = startupWait.or(a.gc.StartupWait), initializeWait.or(a.gc.InitializeWait)
		configuredFeedback = a.gc.Feedback
	}
	feedbackOn, err := fb.resolve(fs, configuredFeedback)
	if err != nil {
		return err
	}
	auditDest, auditArgs, err := au.resolve(fs, a.gc)
	if err != nil {
		return err
	}
	code, err := cf.resolve(fs, a.gc)
	if err != nil {
		return err
	}
	// The index loads behind the server (keyword first). The first
	// initialize waits for the upstream servers' tools within the
	// initialize wait, so that its instructions say what each is for;
	// the first tools/list and meta-tool calls wait for what they need,
	// within the startup wait.
	// ctx is the server's work (loading, upstream sessions): over stdio a
	// signal ends it at once, over HTTP only after the drain, so that the
	// calls in flight can still reach their upstream servers (an SSE
	// upstream's session lives on it).
	sig := ctx
	ctx, stop := context.WithCancelCause(context.WithoutCancel(sig))
	defer stop(nil)
	if *httpAddr == "" {
		defer context.AfterFunc(sig, func() {
			log.Info("shutting down: signal received") // over HTTP, the drain says so
			stop(nil)
		})()
	}
	loadDone := make(chan struct{})
	opts := server.Options{Live: a.live, Expose: exp, Fallback: fallback, LoadDone: loadDone, StartupWait: wait, InitializeWait: greetWait, Version: version, Logger: log, Domains: a.domainSizes(base)}
	if a.gc != nil {
		opts.Instructions = a.gc.Instructions
	}
	opts.Callers, opts.Caller = who, stdioWho
	opts.Redactor = g.redactor()
	if *httpAddr != "" {
		opts.Metrics = server.NewMetrics()
	}
	if feedbackOn {
		model, sink, closeSink, err := fb.setUp(ctx, a.st.Load(), stderr, log)
		if err != nil {
			return err
		}
		defer closeSink()
		opts.Feedback, opts.FeedbackSink, a.feedback = model, sink, model
	}
	if auditDest != "" {
		w, closeAudit, err := openAudit(ctx, auditDest, stderr, log)
		if err != nil {
			return err
		}
		defer closeAudit()
		opts.Audit, opts.AuditArguments = w, auditArgs
		log.Info("audit trail on", "to", auditDest, "arguments", auditArgs)
	}
	if exp.Mode == server.ExposeCode {
		runner := codemode.New(codemode.Options{MaxConcurrent: code.Concurrent, Log: log})
		defer runner.Close()
		opts.Code = &server.Code{Runner: runner, Limits: code.Limits}
	} else {
		var given []string
		fs.Visit(func(f *flag.Flag) {
			if strings.HasPrefix(f.Name, "code-") {
				given = append(given, "--"+f.Name)
			}
		})
		if len(given) > 0 {
			log.Warn("code mode's flags are ignored: the exposure mode is not code (--expose code, or toolscout.expose)", "flags", strings.Join(given, " "), "mode", exp.Mode)
		}
	}
	if a.gw != nil {
		opts.Executor = a.gw
		// The live index re-indexes when the gateway's tools change; the
		// server follows the live index.
		a.live.Follow(ctx, a.gw, search.FollowOptions{StartupWait: wait})
	}
	srv := server.New(opts)
	go func() {
		defer close(loadDone)
		start := time.Now()
		err := g.load(ctx, a, base, stderr, log)
		time.AfterFunc(time.Second, gcLoaded)
		if err == nil {
			cat := a.eng.Catalog()
			log.Info("index loaded", "tools", cat.Len(), "domains", len(cat.Domains()), "embedder", a.eng.EmbedderName(), "in", time.Since(start).Round(time.Millisecond))
			cat.PrepareLookups() // built on first use otherwise: not in a query
			// Damage in a file no start reads (another catalog's delta,
			// another embedder's statistics) is said soon, not when it
			// matters; its reader rebuilds it then. Not at once: reading
			// every file (tens of MB at 100k tools) beside the first
			// queries cost them a core.
			go func() {
				select {
				case <-ctx.Done():
					return
				case <-time.After(verifyDelay):
				}
				for _, d := range a.st.Load().Verify() {
					log.Warn("data dir: a file fails its check; it is removed and rebuilt when next used", "file", d.Path, "problem", d.Problem)
				}
				// What it read is garbage now: give it back, as after
				// loading.
				debug.FreeOSMemory()
			}()
			if g.readOnly && *reloadEvery > 0 {
				go g.watchBuilds(ctx, a, log, *reloadEvery)
			}
			// Loading parsed the whole catalog file and synced both
			// indexes: give that transient memory back to the system
			// instead of holding it for the server's lifetime.
			debug.FreeOSMemory()
			return
		}
		// With the eager fallback, a catalog that is valid but cannot be
		// indexed (a data dir that cannot be written) is still served:
		// every tool listed directly. Otherwise the server stops with the
		// error (an invalid catalog stops it either way).
		if fallback == string(server.ExposeEager) && ctx.Err() == nil {
			if cat, cerr := a.catalog(base); cerr == nil {
				a.live.UseCatalog(cat)
				srv.FallBackToEager("the index could not load: " + err.Error())
				return
			}
		}
		stop(err)
	}()
	if a.gw != nil {
		a.gw.Start(ctx)
	}
	if who != nil {
		go warnCallers(ctx, log, who, a)
		if *httpAddr != "" {
			// Token files, key files and the callers block are re-read
			// when they change, or on SIGHUP: no restart to rotate.
			hup := make(chan os.Signal, 1)
			signal.Notify(hup, syscall.SIGHUP)
			defer signal.Stop(hup)
			go g.watchCallers(ctx, *callersFile, whoSpec, who, log, callersPoll, hup)
		}
	}
	what := fmt.Sprintf("%s, expose %s (index loading)", plural(len(a.domain), "domain"), mode)
	if a.gw != nil {
		what += fmt.Sprintf(", %s connecting", plural(len(a.gc.Upstreams), "upstream server"))
		if len(a.known) > 0 {
			what += fmt.Sprintf(" (the tools of %d as they listed them last, meanwhile)", len(a.known))
		}
	}
	if *httpAddr == "" {
		log.Info("serving over stdio: " + what)
		err := srv.ServeStdio(ctx, os.Stdin, os.Stdout, log)
		if err == nil && ctx.Err() == nil {
			// The client left (stdin closed). A load that is about to fail
			// (an invalid catalog fails in milliseconds) still gets its
			// error said, instead of a silent exit 0.
			select {
			case <-loadDone:
			case <-time.After(2 * time.Second):
			}
		}
		if ctx.Err() != nil {
			return loadError(ctx)
		}
		return err
	}
	o := httpServing{
		addr:          *httpAddr,
		mcp:           httpguard.Wrap(srv.HTTPHandler(server.HTTPOptions{SessionIdle: *idle, MaxSessions: *maxSessions}), guard),
		metrics:       httpguard.Wrap(srv.MetricsHandler(), guard),
		callers:       who,
		srv:           srv,
		drainTimeout:  *drainTimeout,
		drainDelay:    *drainDelay,
		what:          what,
		authenticated: guard.Token != "" || who != nil,
		jsonLogs:      g.logFormat == "json",
	}
	if err := serveHTTP(sig, ctx, o, stderr, log); err != nil {
		return err
	}
	return loadError(ctx)
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
