package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/search"
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
	fs.StringVar(&g.model, "model", embed.DefaultOllamaModel, "Ollama embedding model")
	fs.Var(&g.prompts, "prompt", "query/document prompts of a model: `MODEL=QUERY_PREFIX|DOC_PREFIX` (repeatable)")
	fs.StringVar(&g.logLevel, "log-level", "warn", "log level on stderr: debug, info, warn or error")
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

// loadCatalog loads --catalog files, or the built-in catalog.
func (g *globalFlags) loadCatalog() (*index.Catalog, error) {
	if len(g.catalogs) == 0 {
		return index.BuiltinCatalog()
	}
	return index.LoadCatalogFiles(g.catalogs)
}

// newEmbedder picks the embedder for --embedder.
func (g *globalFlags) newEmbedder(ctx context.Context, log *slog.Logger) (embed.Embedder, error) {
	prompts := embed.KnownPrompts()
	for _, p := range g.prompts {
		model, pr, err := embed.ParsePrompt(p)
		if err != nil {
			return nil, usageError{err}
		}
		prompts[model] = pr
	}
	newOllama := func() (*embed.Ollama, error) {
		host, err := embed.ParseOllamaHost(os.Getenv("OLLAMA_HOST"))
		if err != nil {
			return nil, usageError{err}
		}
		return embed.NewOllama(embed.OllamaOptions{Host: host, Model: g.model, Prompts: prompts, Logger: log}), nil
	}
	switch g.embedder {
	case "builtin":
		return embed.NewBuiltin(embed.BuiltinOptions{}), nil
	case "ollama":
		o, err := newOllama()
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
		o, err := newOllama()
		if err != nil {
			return nil, err
		}
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		if err := o.Check(cctx); err != nil {
			log.Info("using the built-in embedder", "reason", err)
			return embed.NewBuiltin(embed.BuiltinOptions{}), nil
		}
		log.Info("using ollama", "host", o.Host(), "model", g.model)
		return o, nil
	}
	return nil, usagef("--embedder %q: use auto, ollama or builtin", g.embedder)
}

// openEngine loads the catalog, picks the embedder, syncs the persistent
// index and returns a search engine over it.
func (g *globalFlags) openEngine(ctx context.Context, stderr io.Writer, log *slog.Logger) (*search.Engine, *index.Store, index.StoreStats, error) {
	cat, err := g.loadCatalog()
	if err != nil {
		return nil, nil, index.StoreStats{}, err
	}
	emb, err := g.newEmbedder(ctx, log)
	if err != nil {
		return nil, nil, index.StoreStats{}, err
	}
	store, err := index.OpenStore(g.dataDir)
	if err != nil {
		return nil, nil, index.StoreStats{}, err
	}
	bar := newProgress(stderr, "embedding "+emb.Info().String())
	eng, st, err := search.Build(ctx, search.BuildOptions{
		Store: store, Catalog: cat, Embedder: emb, Progress: bar.update, Logger: log,
	})
	bar.finish()
	if err != nil {
		store.Close()
		return nil, nil, st, err
	}
	return eng, store, st, nil
}
