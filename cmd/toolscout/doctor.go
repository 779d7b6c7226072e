package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
)

// check is one doctor check: what it looked at, and the problem with what
// to do about it, or "" when it works.
type check struct {
	name, detail, fix string
}

func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var g globalFlags
	fs := newFlagSet("doctor", "doctor [flags]\n\nChecks the catalog, the config's upstream servers, Ollama and the data dir,\nand prints what to fix. Exits 0 only when every check passes.", stderr)
	g.register(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs("doctor", pos); err != nil {
		return err
	}
	var checks []check
	add := func(name, detail string, err error, fix string) {
		if err != nil {
			checks = append(checks, check{name, err.Error(), fix})
			return
		}
		checks = append(checks, check{name, detail, ""})
	}

	cat, err := g.loadCatalog()
	switch {
	case err == nil && len(g.catalogs) == 0 && len(g.configs) > 0:
		add("catalog", "no catalog files: tools come from --config", nil, "")
	case err == nil:
		add("catalog", fmt.Sprintf("%d tools in %d domains", cat.Len(), len(cat.Domains())), nil, "")
	default:
		add("catalog", "", err, "fix the file at the JSON path shown")
	}
	checks = append(checks, g.checkUpstreams(ctx)...)

	switch g.embedder {
	case "builtin":
		add("embedder", "built-in (offline); Ollama not checked", nil, "")
	default:
		host, herr := embed.ParseOllamaHost(os.Getenv("OLLAMA_HOST"))
		if herr != nil {
			add("ollama", "", herr, "fix OLLAMA_HOST")
			break
		}
		o := embed.NewOllama(embed.OllamaOptions{Host: host, Model: g.model})
		cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		start := time.Now()
		err := o.Check(cctx)
		cancel()
		fix := ""
		switch {
		case errors.Is(err, embed.ErrUnavailable):
			fix = "start Ollama with `ollama serve` (or set OLLAMA_HOST); until then --embedder auto uses the built-in embedder"
		case errors.Is(err, embed.ErrModelNotFound):
			fix = fmt.Sprintf("run `ollama pull %s`", g.model)
		case err != nil:
			fix = "see the message from Ollama"
		}
		add("ollama", fmt.Sprintf("%s at %s answers: %d dimensions in %s", g.model, host, o.Info().Dims, time.Since(start).Round(time.Millisecond)), err, fix)
	}

	if err := os.MkdirAll(g.dataDir, 0o755); err != nil {
		add("data dir", "", err, "choose a writable --data-dir")
	} else if f, err := os.CreateTemp(g.dataDir, ".doctor"); err != nil {
		add("data dir", "", err, "choose a writable --data-dir")
	} else {
		f.Close()
		os.Remove(f.Name())
		store, err := index.OpenStore(g.dataDir)
		switch {
		case err == nil && store.MemoryKeyword:
			store.Close()
			add("data dir", fmt.Sprintf("%s writable; its keyword index is in use by another toolscout process (a second one keeps its own in memory)", filepath.Clean(g.dataDir)), nil, "")
		case err == nil:
			n, _ := store.Keyword.Count()
			store.Close()
			add("data dir", fmt.Sprintf("%s writable; keyword index holds %d tools", filepath.Clean(g.dataDir), n), nil, "")
		default:
			add("data dir", "", err, "stop the other toolscout process, or delete the folder to rebuild it")
		}
	}

	failed := 0
	for _, c := range checks {
		if c.fix == "" {
			fmt.Fprintf(stdout, "ok    %-10s %s\n", c.name, c.detail)
			continue
		}
		failed++
		fmt.Fprintf(stdout, "FAIL  %-10s %s\n      fix: %s\n", c.name, c.detail, c.fix)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d checks failed", failed, len(checks))
	}
	return nil
}
