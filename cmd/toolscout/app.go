package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/internal/redact"
	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server"
	"github.com/toolscout/toolscout/server/gateway"
)

// This file is the composition root: it turns flags and config files into
// the embedder, the gateway and the live index the commands work with.

// app is what a command works with: the live index over a synced store
// and, with --config, the gateway to the upstream servers.
type app struct {
	// src is the catalog files when there is no --config: the store
	// gives their catalog (cat), from the data dir's cache of them when
	// it is there, else built from them.
	src  *index.CatalogSource
	cat  *index.Catalog
	live *search.Live
	eng  *search.Engine
	// st is the store prepare opened, which live keeps in sync (a
	// read-only server's newer builds are the start's: boot.Starter.Store).
	st     atomic.Pointer[store.Store]
	gw     *gateway.Gateway // nil without --config
	gc     *gatewayConfig
	stats  store.Stats
	domain []string // configured domains, base first
	// known are the upstream servers' domains as the gateway knows them
	// when the index loads: the tools each listed on its last run (kept
	// in the data dir), or, for commands that wait for the servers, now.
	known []index.DomainSpec
	// embedder makes the embedder once; prepare starts it, and
	// stopEmbedder cancels it and waits for it.
	embedder     func() (embed.Embedder, error)
	stopEmbedder func()
	// run is how the command runs, as prepareFrom was told.
	run running
}

// running is how a command runs, decided when it begins to run, not a
// flag: what prepareFrom opens the data dir and the live index by.
type running struct {
	// serving: the command answers queries as soon as the index loads
	// (serve).
	serving bool
	// build is, with --read-only, the folder the data dir led to when
	// the server opened it (a symbolic link resolved once): the build it
	// serves until the start's watch swaps in another ("": the data dir).
	build string
}

// Close stops the embedder's making (when a load never asked for it),
// the gateway, then the live index and its store.
func (a *app) Close() {
	if a.stopEmbedder != nil {
		a.stopEmbedder()
	}
	a.closeGateway()
	a.live.Close()
}

func (a *app) closeGateway() {
	if a.gw != nil {
		a.gw.Close()
	}
}

// open loads the catalog files and --config, picks the embedder, syncs the
// persistent index and returns the app over it. With waitUpstreams it
// first connects to every upstream server (each within its connect
// timeout) so that their tools are indexed; otherwise the gateway is
// returned unstarted, for serve's start (server/boot) to follow and start.
func (g *globalFlags) open(ctx context.Context, stderr io.Writer, log *slog.Logger, waitUpstreams bool) (*app, error) {
	a, base, err := g.prepare(ctx, log, waitUpstreams)
	if err != nil {
		return nil, err
	}
	if a.src != nil {
		// The store builds the catalog from its files' specs, and lets
		// them go once built; the live index does not read them. Passed
		// on, they would stay alive through the whole sync (at 100k
		// tools about 54 MB of heap, at 1M 538 MB, twice that with GC).
		base = nil
	}
	if err := g.load(ctx, a, base, stderr, log); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// readSources reads --config and the catalog files and returns the app
// (its gateway config checked) and the catalog files' domains, unchecked.
func (g *globalFlags) readSources(log *slog.Logger) (*app, []index.DomainSpec, error) {
	if len(g.configs) == 0 {
		// Parsed by prepare, unless the data dir has them cached.
		src, err := g.baseSource()
		if err != nil {
			return nil, nil, err
		}
		return &app{src: src}, nil, nil
	}
	base, err := g.baseSpecs()
	if err != nil {
		return nil, nil, err
	}
	a := &app{}
	for _, d := range base {
		a.domain = append(a.domain, d.Name)
	}
	gc, err := g.gatewayConfig()
	if err != nil {
		return nil, nil, err
	}
	if err := checkDepth(gc, os.Environ()); err != nil {
		return nil, nil, err
	}
	for _, u := range gc.Upstreams {
		for _, d := range base {
			if d.Name == u.Domain {
				return nil, nil, fmt.Errorf("domain %q is both an upstream server in --config and a domain of --catalog %s: rename one", u.Domain, d.Source)
			}
		}
		a.domain = append(a.domain, u.Domain)
	}
	a.gc = gc
	for _, d := range gc.Skipped {
		log.Warn("skipping an upstream server that is toolscout itself", "server", d)
	}
	return a, base, nil
}

// listNow returns base followed by the domains of a's upstream servers
// as they list them now: each is connected and waited for until it has
// answered or failed once. The data dir is not used (lint reads no index).
// What they send back is redacted of secrets.
func (a *app) listNow(ctx context.Context, log *slog.Logger, base []index.DomainSpec, secrets *redact.Redactor) []index.DomainSpec {
	if a.gc == nil {
		return base
	}
	gw := gateway.New(gateway.Options{Upstreams: a.gc.Upstreams, Base: base, Version: version, Logger: log, WordFrequency: search.WordFrequency, Redactor: secrets})
	gw.Start(ctx)
	defer gw.Close()
	gw.WaitReady(ctx)
	return gw.Specs()
}

// gatewayConfig reads the --config files, with --connect-timeout (else
// the config's toolscout.connect_timeout) as the connect timeout of the
// servers that set none.
func (g *globalFlags) gatewayConfig() (*gatewayConfig, error) {
	gc, err := loadConfigs(g.configs)
	if err != nil {
		return nil, err
	}
	g.redactor().Add(gc.Secrets...)
	if err := g.attachOAuth(gc); err != nil {
		return nil, err
	}
	timeout := g.connectTimeout.or(gc.ConnectTimeout)
	for i := range gc.Upstreams {
		if gc.Upstreams[i].ConnectTimeout == 0 {
			gc.Upstreams[i].ConnectTimeout = timeout
		}
	}
	return gc, nil
}

// prepare does the quick part of open: it reads --config and the catalog
// files (unchecked: load checks them), opens the data dir and returns the
// app with a Live index still empty, and the catalog files' domains to
// load into it (a.known: the upstreams'). With --config it makes the
// gateway, knowing the tools each server listed on its last run; with
// waitUpstreams it starts it and waits until every server has answered
// or failed once.
func (g *globalFlags) prepare(ctx context.Context, log *slog.Logger, waitUpstreams bool) (*app, []index.DomainSpec, error) {
	a, base, err := g.readSources(log)
	if err != nil {
		return nil, nil, err
	}
	return g.prepareFrom(ctx, log, a, base, running{}, waitUpstreams)
}

// prepareFrom is prepare after readSources: a and base are what it
// read (serve reads them while it checks its flags); run is how the
// command runs.
func (g *globalFlags) prepareFrom(ctx context.Context, log *slog.Logger, a *app, base []index.DomainSpec, run running, waitUpstreams bool) (*app, []index.DomainSpec, error) {
	a.run = run
	st, err := g.openStore(g.setRoot(run.build), store.Options{Set: g.set(), ReadOnly: g.readOnly, Exclusive: g.writer, Stream: g.writer, Catalog: a.src, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	if a.gc != nil {
		a.gw = gateway.New(gateway.Options{Upstreams: a.gc.Upstreams, Base: base, Version: version, Logger: log, WordFrequency: search.WordFrequency, Redactor: g.redactor(),
			Known: st.ListedTools(), Keep: st.SaveListedTools, Pins: a.pinner(st)})
		if waitUpstreams {
			a.gw.Start(ctx)
			a.gw.WaitReady(ctx)
		}
		// Specs lists the base domains first, then the upstreams'.
		specs := a.gw.Specs()
		base, a.known = specs[:len(base)], specs[len(base):]
	}
	// The embedder (the built-in one reads its word vectors, Ollama's is
	// asked for its model) is made beside the catalog's read: both take
	// tens of ms at 100k tools, and the first answer waits for both.
	configured := ""
	if a.gc != nil {
		configured = a.gc.Model
	}
	// A prepare that fails, and Close, stop it and wait for it: it logs,
	// and nothing may be written after the command's error.
	ectx, cancel := context.WithCancel(ctx)
	a.embedder = sync.OnceValues(func() (embed.Embedder, error) { return g.newEmbedder(ectx, log, configured) })
	a.stopEmbedder = func() { cancel(); a.embedder() }
	go a.embedder()
	if a.src != nil {
		if base, err = a.catalogFrom(st); err != nil {
			a.stopEmbedder()
			st.Close()
			if errors.Is(err, index.ErrNoIndex) {
				err = g.noIndex(err) // read-only: building it would write the data dir
			}
			return nil, nil, err
		}
	}
	a.live, err = search.NewLive(search.LiveOptions{Store: st, Quarantine: a.gc != nil && a.gc.Quarantine, Known: a.known, Serving: run.serving, Logger: log})
	if err != nil {
		a.stopEmbedder()
		st.Close()
		a.closeGateway()
		return nil, nil, err
	}
	a.eng = a.live.Engine()
	a.st.Store(st)
	return a, base, nil
}

// openStore opens the store in dir (with o.Set, the catalog set's
// folder in the data dir dir): the one call of store.OpenWith in
// toolscout, so that serve, index, search, eval, doctor and a read-only
// server's newer builds all open their data the same way
// (TestOneStartUpPath). A read-only data dir without the index is said
// with the command that builds it.
func (g *globalFlags) openStore(dir string, o store.Options) (*store.Store, error) {
	st, err := store.OpenWith(dir, o)
	if errors.Is(err, index.ErrNoIndex) {
		err = g.noIndex(err)
	}
	return st, err
}

// catalogFrom sets a.cat to the catalog the store caches for a.src, or
// else returns a.src's domains, which the store builds it from when
// load asks; a.domain names the domains either way.
func (a *app) catalogFrom(st *store.Store) ([]index.DomainSpec, error) {
	cat, base, err := st.CatalogSpecs()
	a.cat = cat
	if cat != nil {
		for _, d := range cat.Domains() {
			a.domain = append(a.domain, d.Name)
		}
		return nil, nil
	}
	for _, d := range base {
		a.domain = append(a.domain, d.Name)
	}
	return base, err
}

// load picks the embedder and loads base into the app's Live index: the
// slow part of open, which serve runs while it already answers.
func (g *globalFlags) load(ctx context.Context, a *app, base []index.DomainSpec, stderr io.Writer, log *slog.Logger) error {
	emb, err := a.embedder()
	if err != nil {
		return err
	}
	// With catalog files the catalog is the store's (cached in the data
	// dir, or built from the files and saved): the live index asks it.
	bar := newProgress(stderr, "embedding "+emb.Info().String())
	a.stats, err = a.live.Load(ctx, base, emb, bar.update)
	bar.finish()
	return err
}

// openApp sets up logging and opens the app: the prelude every command
// that searches shares.
func (g *globalFlags) openApp(ctx context.Context, stderr io.Writer, waitUpstreams bool) (*app, *slog.Logger, error) {
	log, err := g.logger(stderr)
	if err != nil {
		return nil, nil, err
	}
	a, err := g.open(ctx, stderr, log, waitUpstreams)
	return a, log, err
}

// newEmbedder picks the embedder for --embedder. configured is the
// model a config file names ("" for none).
func (g *globalFlags) newEmbedder(ctx context.Context, log *slog.Logger, configured string) (embed.Embedder, error) {
	switch g.embedder {
	case "builtin":
		return embed.NewBuiltin(embed.BuiltinOptions{}), nil
	case "builtin-hashed":
		// Research variants for eval grids: hashed features only, or
		// without the hand-written lexicon.
		return embed.NewBuiltin(embed.BuiltinOptions{Learned: -1}), nil
	case "builtin-nolexicon":
		return embed.NewBuiltin(embed.BuiltinOptions{NoLexicon: true}), nil
	case "ollama":
		host, err := g.ollamaHost()
		if err != nil {
			return nil, err
		}
		model := g.model
		if model == "" {
			model = configured
		}
		if model == "" {
			lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			installed, err := embed.ListEmbeddingModels(lctx, host, nil)
			cancel()
			if err != nil {
				return nil, err
			}
			c, ok := embed.ChooseOllamaModel(installed, "", "")
			if !ok {
				return nil, fmt.Errorf("%w: ollama at %s has no embedding model: run `ollama pull %s`", embed.ErrModelNotFound, host, embed.DefaultOllamaModel)
			}
			model = c.Model
		}
		o, err := g.newOllama(host, model, log)
		if err != nil {
			return nil, err
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := o.Check(cctx); err != nil {
			return nil, err
		}
		return o, nil
	case "auto", "":
		host, err := g.ollamaHost()
		if err != nil {
			return nil, err
		}
		choice, reason := g.autoModel(ctx, host, configured)
		if reason != "" {
			// The built-in embedder is auto's offline default, not a
			// fault: said at info level (serve's default, --log-level
			// info), and by doctor as a note.
			log.Info(reason)
			return embed.NewBuiltin(embed.BuiltinOptions{}), nil
		}
		o, err := g.newOllama(host, choice.Model, log)
		if err != nil {
			return nil, err
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := o.Check(cctx); err != nil {
			log.Warn(fmt.Sprintf("ranking with the built-in embedder: %v", err))
			return embed.NewBuiltin(embed.BuiltinOptions{}), nil
		}
		log.Info("embedder: ollama", "host", o.Host(), "model", choice.Model, "chosen_by", choice.Reason)
		return o, nil
	}
	return nil, usagef("--embedder %q: use auto, ollama or builtin", g.embedder)
}

// autoModel picks the Ollama model auto mode uses, or says in one line why
// it uses the built-in embedder instead.
func (g *globalFlags) autoModel(ctx context.Context, host *url.URL, configured string) (embed.ModelChoice, string) {
	lctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	installed, err := embed.ListEmbeddingModels(lctx, host, nil)
	cancel()
	if err != nil {
		return embed.ModelChoice{}, fmt.Sprintf("Ollama not reachable at %s; ranking with the built-in embedder (start `ollama serve` for better ranking, or pass --embedder builtin)", host)
	}
	c, ok := embed.ChooseOllamaModel(installed, g.model, configured)
	if !ok {
		return c, fmt.Sprintf("Ollama at %s answers but has no embedding model; ranking with the built-in embedder (run `ollama pull %s` for better ranking)", host, embed.DefaultOllamaModel)
	}
	return c, ""
}

func (g *globalFlags) ollamaHost() (*url.URL, error) {
	host, err := embed.ParseOllamaHost(os.Getenv("OLLAMA_HOST"))
	if err != nil {
		return nil, usageError{err}
	}
	return host, nil
}

// newOllama returns the Ollama embedder of model with the known prompts
// and the --prompt ones.
func (g *globalFlags) newOllama(host *url.URL, model string, log *slog.Logger) (*embed.Ollama, error) {
	prompts := embed.KnownPrompts()
	for _, p := range g.prompts {
		m, pr, err := embed.ParsePrompt(p)
		if err != nil {
			return nil, usageError{err}
		}
		prompts[m] = pr
	}
	return embed.NewOllama(embed.OllamaOptions{Host: host, Model: model, Prompts: prompts, Logger: log}), nil
}

// domainSizes returns the configured domains with the number of enabled
// tools each is known to have before the index loads (0 for an upstream
// server whose tools are not known yet) and what each is for, so that
// the instructions a client gets then are the ones it gets after, as far
// as they are known.
func (a *app) domainSizes(base []index.DomainSpec) []server.DomainSize {
	var s server.Selves
	if a.gw != nil {
		s = server.SelvesOf(a.gw)
	}
	return server.KnownDomains(a.domain, a.cat, s, base, a.known)
}
