package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server"
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// globalFlags are the flags every command accepts.
type globalFlags struct {
	dataDir  string
	catalogs stringList
	configs  stringList
	embedder string
	model    string
	prompts  stringList
	logLevel string
}

func (g *globalFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&g.dataDir, "data-dir", defaultDataDir(), "where the indexes are kept")
	fs.Var(&g.catalogs, "catalog", "catalog.json `FILE` to load (repeatable; default: the built-in catalog)")
	fs.Var(&g.configs, "config", "mcpServers config `FILE` (repeatable)")
	fs.StringVar(&g.embedder, "embedder", "auto", "embedder: auto (Ollama when it answers, else built-in), ollama or builtin")
	fs.StringVar(&g.model, "model", "", "Ollama embedding `MODEL` (default: the config's toolscout.model, else the best installed embedding model)")
	fs.Var(&g.prompts, "prompt", "query/document prompts of a model: `MODEL=QUERY_PREFIX|DOC_PREFIX` (repeatable)")
	level := "warn"
	if strings.HasSuffix(fs.Name(), " serve") {
		// A server says which embedder it picked and which upstreams came up.
		level = "info"
	}
	fs.StringVar(&g.logLevel, "log-level", level, "log level on stderr: debug, info, warn or error")
}

func defaultDataDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "toolscout")
}

// newFlagSet returns a flag set whose --help prints the command's usage.
func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("toolscout "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: toolscout %s\n\nFlags:\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, turning flag errors into usage errors. It accepts
// flags after positional arguments too ("search QUERY --json").
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func (g *globalFlags) logger(stderr io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(g.logLevel)); err != nil {
		return nil, usagef("--log-level %q: use debug, info, warn or error", g.logLevel)
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl})), nil
}

// baseSpecs returns the domains of --catalog files; with neither --catalog
// nor --config, the built-in catalog's.
func (g *globalFlags) baseSpecs() ([]index.DomainSpec, error) {
	if len(g.catalogs) > 0 {
		return index.LoadCatalogSpecs(g.catalogs)
	}
	if len(g.configs) > 0 {
		return nil, nil
	}
	return index.BuiltinSpecs()
}

// loadCatalog loads --catalog files, or the built-in catalog.
func (g *globalFlags) loadCatalog() (*index.Catalog, error) {
	specs, err := g.baseSpecs()
	if err != nil {
		return nil, err
	}
	return index.NewCatalog(specs)
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
			log.Warn(reason)
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

// app is what a command works with: the engine over a synced store and,
// with --config, the gateway to the upstream servers.
type app struct {
	eng    *search.Engine
	store  *index.Store
	gw     *server.Gateway // nil without --config
	gc     *gatewayConfig
	stats  index.StoreStats
	domain []string // configured domains, base first
}

func (a *app) Close() {
	if a.gw != nil {
		a.gw.Close()
	}
	a.store.Close()
}

// open loads the catalog files and --config, picks the embedder, syncs the
// persistent index and returns an engine over it. With waitUpstreams it
// first connects to every upstream server (each within its connect
// timeout) so that their tools are indexed; otherwise the gateway is
// returned unstarted, for serve to start once its server follows it.
func (g *globalFlags) open(ctx context.Context, stderr io.Writer, log *slog.Logger, waitUpstreams bool) (*app, error) {
	base, err := g.baseSpecs()
	if err != nil {
		return nil, err
	}
	a := &app{}
	for _, d := range base {
		a.domain = append(a.domain, d.Name)
	}
	if len(g.configs) > 0 {
		gc, err := loadConfigs(g.configs)
		if err != nil {
			return nil, err
		}
		for _, u := range gc.Upstreams {
			for _, d := range base {
				if d.Name == u.Domain {
					return nil, fmt.Errorf("domain %q is both an upstream server in --config and a domain of --catalog %s: rename one", u.Domain, d.Source)
				}
			}
			a.domain = append(a.domain, u.Domain)
		}
		a.gc = gc
		for _, d := range gc.Skipped {
			log.Warn("skipping an upstream server that is toolscout itself", "server", d)
		}
		a.gw = server.NewGateway(server.GatewayOptions{Upstreams: gc.Upstreams, Base: base, Version: version, Logger: log})
		if waitUpstreams {
			a.gw.Start(ctx)
			a.gw.WaitReady(ctx)
			base = a.gw.Specs()
		}
	}
	if a.gc != nil && a.gc.Quarantine {
		var dropped []string
		if base, dropped = index.Quarantine(base); len(dropped) > 0 {
			log.Warn("quarantined tools with poisoning flags (toolscout.quarantine)", "tools", dropped)
		}
	}
	cat, err := index.NewCatalog(base)
	if err != nil {
		a.closeGateway()
		return nil, err
	}
	configured := ""
	if a.gc != nil {
		configured = a.gc.Model
	}
	emb, err := g.newEmbedder(ctx, log, configured)
	if err != nil {
		a.closeGateway()
		return nil, err
	}
	dir, err := g.storeDir()
	if err != nil {
		a.closeGateway()
		return nil, err
	}
	a.store, err = index.OpenStore(dir)
	if err != nil {
		a.closeGateway()
		return nil, err
	}
	for _, h := range a.store.Healed {
		log.Warn(h)
	}
	if a.store.MemoryKeyword {
		log.Warn("another toolscout process uses the keyword index in the data dir; this one keeps its keyword index in memory and shares the vectors", "data_dir", dir)
	}
	bar := newProgress(stderr, "embedding "+emb.Info().String())
	a.eng, a.stats, err = search.Build(ctx, search.BuildOptions{
		Store: a.store, Catalog: cat, Embedder: emb, Progress: bar.update, Logger: log,
	})
	bar.finish()
	if err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
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

// noArgs rejects positional arguments for commands that take none.
func noArgs(cmd string, pos []string) error {
	if len(pos) > 0 {
		return usagef("%s takes no arguments, got %q", cmd, pos)
	}
	return nil
}

func (a *app) closeGateway() {
	if a.gw != nil {
		a.gw.Close()
	}
}
