package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolscout/toolscout/eval"
	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server/gateway"
)

// configDataset builds the dataset of eval --config --queries: it connects
// every server of the --config files through the gateway serve uses,
// waits until each has listed its tools or failed (each within its
// connect timeout), and labels the requests of the queries file against
// what they listed. A server that does not come up is an error that says
// why and what to do: scoring without it would score another catalog.
func (g *globalFlags) configDataset(ctx context.Context, log *slog.Logger, queries string) (*eval.Dataset, error) {
	data, err := os.ReadFile(queries)
	if err != nil {
		return nil, fmt.Errorf("--queries: %w", err)
	}
	gc, err := g.gatewayConfig()
	if err != nil {
		return nil, err
	}
	if err := checkDepth(gc, os.Environ()); err != nil {
		return nil, err
	}
	if len(gc.Upstreams) == 0 {
		return nil, usagef("--config %s: no server to evaluate (every server is disabled or the files list none)", strings.Join(g.configs, ", "))
	}
	base, err := g.baseSpecs()
	if err != nil {
		return nil, err
	}
	gw := gateway.New(gateway.Options{Upstreams: gc.Upstreams, Base: base, Version: version, Logger: log, WordFrequency: search.WordFrequency, Redactor: g.redactor()})
	gw.Start(ctx)
	defer gw.Close()
	gw.WaitReady(ctx)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	stdio := map[string]bool{}
	for _, u := range gc.Upstreams {
		stdio[u.Domain] = u.Command != ""
	}
	var down []string
	for _, st := range gw.Upstreams().Status() {
		if st.State == "up" {
			continue
		}
		why := "did not answer in time"
		if st.Err != nil {
			why = st.Err.Error()
		}
		down = append(down, fmt.Sprintf("server %s: %s (%s)", st.Domain, g.redactor().String(why), upstreamAdvice(st, stdio[st.Domain])))
	}
	if len(down) > 0 {
		return nil, fmt.Errorf("eval --config: %s; fix it, or set \"disabled\": true on the server to evaluate without it (its requests must then go too)", strings.Join(down, "; "))
	}
	ds, err := eval.SpecsDataset(queriesName(queries), queries, data, gw.Specs())
	var build *eval.CatalogBuildError
	if errors.As(err, &build) {
		return nil, fmt.Errorf("eval --config: %w", build.Err)
	}
	return ds, err
}

// queriesName names the dataset of a queries file: its folder's name for
// a file called queries.jsonl (as a dataset folder is named), else the
// file's name without its extension.
func queriesName(path string) string {
	base := filepath.Base(path)
	if base == "queries.jsonl" {
		if dir := filepath.Base(filepath.Dir(filepath.Clean(path))); dir != "." && dir != string(filepath.Separator) {
			return dir
		}
	}
	return strings.TrimSuffix(base, filepath.Ext(base))
}
