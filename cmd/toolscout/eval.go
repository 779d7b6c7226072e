package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/eval"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/internal/fileio"
	"github.com/toolscout/toolscout/search"
)

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var g globalFlags
	fs := newFlagSet("eval", "eval [flags]\n\nMeasures ranking strategies on labelled queries (the built-in dataset and\nits generated long-task set by default; or the servers of --config with the\nrequests of --queries): recall@k, MRR, nDCG@10 and latency per run.", stderr)
	g.register(fs, "warn")
	var datasets stringList
	fs.Var(&datasets, "dataset", "dataset `DIR` holding catalog.json and queries.jsonl (repeatable; default: built-in)")
	queries := fs.String("queries", "", "with --config: score the requests of `FILE` (JSON lines as a dataset's queries.jsonl, tools named server/tool) against the tools the configured servers list, connected as serve connects them")
	modes := fs.String("modes", "bm25,keyword,semantic,hybrid", "comma-separated modes to run (ignored with --grid); bm25 is the plain Okapi BM25 yardstick")
	ksFlag := fs.String("k", "1,5,10", "comma-separated cut-offs for recall@k")
	gridPath := fs.String("grid", "", "grid `FILE` (JSON or YAML) of runs to compare")
	format := fs.String("format", "table", "output: table, markdown or json")
	out := fs.String("out", "", "write the report to `FILE` instead of stdout")
	misses := fs.Int("misses", 0, "list the N worst queries of each run")
	confidence := fs.Bool("confidence", false, "measure each run's confidence: every query ranked again without its relevant tools, reported as AUROC and, at the server's threshold, the shares of answerable queries flagged low_confidence and of unanswerable ones caught")
	confidenceFit := fs.Bool("confidence-fit", false, "also print (on stderr with --format json), per run, the logistic model of confidence fitted on these datasets, each dataset counting alike, with its threshold: the highest at which at most 10% of the answerable queries are flagged on average over the datasets (how the shipped models were made)")
	confidenceModels := fs.String("confidence-models", "", "with --confidence-fit and the modes keyword, semantic and hybrid of the built-in embedder, write the fitted models to `FILE` in the form of search/confidence_models.json, the models toolscout ships")
	runFile := fs.String("run-file", "", "also write each run in TREC run format to `PREFIX`.<dataset>.<run>.run (qid Q0 domain/tool rank score run) and each dataset's qrels to PREFIX.<dataset>.qrels (qid 0 domain/tool grade), for trec_eval -c, ir_measures or ranx; names keep [A-Za-z0-9._+-], other characters become _")
	perQuery := fs.String("per-query", "", "also write every query's answer to `FILE`, one JSON line per dataset, run and query: id, query, relevant, ranked tools with scores, metrics")
	feedbackSplit := fs.Float64("feedback-split", 0, "replay the first `SHARE` (0 to below 1, e.g. 0.5) of each dataset's queries, in a seeded shuffle, as runs of their relevant tools, and score every run on the rest, each beside the same run with the feedback channel (<mode>+feedback), compared with paired-bootstrap CIs")
	models := fs.String("models", "", "compare Ollama embedding `MODELS` (comma-separated, or all-installed) with the built-in embedder: semantic and hybrid runs for each, against keyword")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs("eval", pos); err != nil {
		return err
	}
	switch {
	case *queries != "" && len(g.configs) == 0:
		return usagef("--queries %s needs --config: the servers whose tools the requests name (a dataset folder, --dataset, brings its own catalog.json)", *queries)
	case len(g.configs) > 0 && *queries == "":
		return usagef("--config needs --queries FILE: the labelled requests to score against the servers' tools")
	case *queries != "" && len(datasets) > 0:
		return usagef("--queries and --dataset: give one of them (run eval twice to see both)")
	case len(g.catalogs) > 0:
		fmt.Fprintln(stderr, "toolscout eval: --catalog is not used: a dataset folder (--dataset) brings its own catalog.json, and --config its servers")
	}
	switch *format {
	case "table", "markdown", "json":
	default:
		return usagef("--format %q: use table, markdown or json", *format)
	}
	var ks []int
	for _, s := range strings.Split(*ksFlag, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || k < 1 {
			return usagef("--k %q: want positive whole numbers separated by commas", *ksFlag)
		}
		ks = append(ks, k)
	}
	if *misses < 0 {
		return usagef("--misses %d: want 0 or more", *misses)
	}
	if *feedbackSplit < 0 || *feedbackSplit >= 1 {
		return usagef("--feedback-split %g: want a share from 0 (off) to below 1, e.g. 0.5", *feedbackSplit)
	}
	// Say so before a run that may take minutes, not after it.
	for _, f := range []struct{ flag, path string }{{"--out", *out}, {"--run-file", *runFile}, {"--per-query", *perQuery}, {"--confidence-models", *confidenceModels}} {
		if f.path == "" {
			continue
		}
		if strings.HasSuffix(f.path, string(filepath.Separator)) || strings.HasSuffix(f.path, "/") {
			return usagef("%s %s: names a folder: give a file name in it (%s)", f.flag, f.path, filepath.Join(f.path, "eval"))
		}
		if fi, err := os.Stat(filepath.Dir(f.path)); err != nil || !fi.IsDir() {
			return usagef("%s %s: folder %s does not exist: create it first", f.flag, f.path, filepath.Dir(f.path))
		}
	}
	log, err := g.logger(stderr)
	if err != nil {
		return err
	}

	var runs []eval.RunSpec
	baseline := 0
	embedders := map[string]embed.Embedder{}
	if *confidenceModels != "" && (!*confidenceFit || *models != "" || *gridPath != "") {
		return usagef("--confidence-models needs --confidence-fit and the runs of --modes (not --grid or --models)")
	}
	if *models != "" && *gridPath != "" {
		return usagef("--models and --grid: give one of them (a grid names its embedders per run)")
	}
	if *models != "" {
		var err error
		runs, err = g.modelRuns(ctx, log, *models, embedders)
		if err != nil {
			return err
		}
	} else if *gridPath != "" {
		grid, err := eval.LoadGrid(*gridPath)
		if err != nil {
			return err
		}
		for i, r := range grid.Runs {
			runs = append(runs, r.Spec())
			if r.Label == grid.Baseline {
				baseline = i
			}
			key := r.EmbedderKey()
			if key == "" || embedders[key] != nil {
				continue
			}
			sub := g
			sub.embedder, sub.model = r.Embedder, r.Model
			if sub.model == "" {
				sub.model = g.model
			}
			e, err := sub.newEmbedder(ctx, log, "")
			if err != nil {
				return fmt.Errorf("grid run %s: %w", r.Label, err)
			}
			embedders[key] = e
		}
	} else {
		for _, m := range strings.Split(*modes, ",") {
			mode, err := search.ParseMode(m)
			if strings.TrimSpace(m) == string(eval.BM25) {
				mode, err = eval.BM25, nil
			}
			if err != nil || strings.TrimSpace(m) == "" {
				return usagef("--modes %q: use bm25, keyword, semantic and hybrid, separated by commas", *modes)
			}
			runs = append(runs, eval.RunSpec{Mode: mode})
		}
	}
	// Said before an embedder is made: --embedder ollama with Ollama down
	// would otherwise be told instead.
	shippedModels := func(provider string) error {
		have := map[search.Mode]bool{}
		for _, r := range runs {
			have[r.Mode] = true
		}
		if !have[search.Keyword] || !have[search.Semantic] || !have[search.Hybrid] || provider != "builtin" {
			return usagef("--confidence-models: the shipped models are fitted on the modes keyword, semantic and hybrid of the built-in embedder: give --modes keyword,semantic,hybrid --embedder builtin")
		}
		return nil
	}
	if *confidenceModels != "" && g.embedder == "ollama" {
		return shippedModels("ollama")
	}
	emb, err := g.newEmbedder(ctx, log, "")
	if err != nil {
		return err
	}
	if *confidenceModels != "" {
		if err := shippedModels(emb.Info().Provider); err != nil {
			return err
		}
	}

	var dss []*eval.Dataset
	if *queries != "" {
		ds, err := g.configDataset(ctx, log, *queries)
		if err != nil {
			return err
		}
		dss = append(dss, ds)
	} else if len(datasets) == 0 {
		for _, load := range []func() (*eval.Dataset, error){eval.Builtin, eval.BuiltinLong} {
			ds, err := load()
			if err != nil {
				return err
			}
			dss = append(dss, ds)
		}
	}
	for _, dir := range datasets {
		ds, err := eval.LoadDir(dir)
		if err != nil {
			return err
		}
		dss = append(dss, ds)
	}
	start := time.Now()
	bars := map[string]*progress{}
	// Ollama embeddings are slow to make: keep them between runs, keyed by
	// catalog content and model. The built-in embedder indexes in memory.
	var stores eval.StoreOpener // nil: in memory
	storeDir := g.dataDir
	for _, e := range append([]embed.Embedder{emb}, values(embedders)...) {
		if e.Info().Provider != "builtin" {
			if *queries != "" && storeDir == g.dataDir {
				// The servers' tools are not the data dir's: their
				// vectors go to a data dir of this run's own.
				tmp, err := os.MkdirTemp("", "toolscout-eval-")
				if err != nil {
					return fmt.Errorf("eval --config: a temporary data dir: %w", err)
				}
				defer os.RemoveAll(tmp)
				storeDir = tmp
			}
			stores = func(key string) (*store.Store, error) {
				return g.openStore(storeDir, store.Options{Cache: key, Logger: log})
			}
		}
	}
	rep, err := eval.Evaluate(ctx, dss, eval.Options{
		Runs: runs, Ks: ks, Embedder: emb, Embedders: embedders, Logger: log, Stores: stores, Confidence: *confidence || *confidenceFit,
		FeedbackSplit: *feedbackSplit,
		Progress: func(label string, done, total int) {
			b := bars[label]
			if b == nil {
				b = newProgress(stderr, label)
				bars[label] = b
			}
			b.update(done, total)
			if done == total {
				b.finish()
			}
		},
	})
	if err != nil {
		return err
	}
	metrics := eval.MetricNames(ks)
	if len(runs) > 1 {
		eval.Compare(rep, baseline, metrics)
	}
	eval.CompareFeedback(rep, metrics)
	fmt.Fprintf(stderr, "evaluated %s in %s\n", plural(len(runs), "run"), time.Since(start).Round(time.Millisecond))

	var buf bytes.Buffer
	switch *format {
	case "json":
		err = rep.WriteJSON(&buf)
	default:
		err = rep.WriteTable(&buf, metrics, *format == "markdown")
	}
	if err != nil {
		return err
	}
	if *misses > 0 {
		rep.WriteMisses(&buf, *misses)
	}
	if *confidenceFit {
		fits := eval.FitConfidence(rep)
		text, err := json.MarshalIndent(fits, "", "  ")
		if err != nil {
			return err
		}
		// Beside a JSON report (which it would make invalid), on stderr.
		w := io.Writer(&buf)
		if *format == "json" {
			w = stderr
		}
		fmt.Fprintf(w, "\nconfidence models fitted on these datasets (search/confidence_models.json), with their figures at their thresholds:\n%s\n", text)
		if *confidenceModels != "" {
			shipped, err := eval.ShippableModels(rep, fits)
			if err != nil {
				return fmt.Errorf("--confidence-models: %w", err)
			}
			data, err := json.MarshalIndent(shipped, "", "  ")
			if err != nil {
				return err
			}
			if err := fileio.WriteFile(*confidenceModels, append(data, '\n'), 0o644); err != nil {
				return fmt.Errorf("write --confidence-models %s: %w", *confidenceModels, err)
			}
			fmt.Fprintf(stderr, "wrote %s\n", *confidenceModels)
		}
	}
	if *out == "" {
		if _, err := stdout.Write(buf.Bytes()); err != nil {
			return err
		}
	} else if err := fileio.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write the report to --out %s: %w", *out, err)
	}
	return writeExports(rep, *runFile, *perQuery, stderr)
}

// writeExports writes the TREC files of --run-file and the JSON lines of
// --per-query (when asked for), each as --out is written, and says on
// stderr what it wrote.
func writeExports(rep *eval.Report, runFile, perQuery string, stderr io.Writer) error {
	var files []eval.ExportFile
	if runFile != "" {
		files = rep.TRECFiles(runFile)
	}
	if perQuery != "" {
		files = append(files, eval.ExportFile{Path: perQuery, Write: rep.WritePerQuery})
	}
	for _, f := range files {
		var buf bytes.Buffer
		if err := f.Write(&buf); err != nil {
			return fmt.Errorf("write %s: %w", f.Path, err)
		}
		if err := fileio.WriteFile(f.Path, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", f.Path, err)
		}
		fmt.Fprintf(stderr, "wrote %s\n", f.Path)
	}
	return nil
}

func values(m map[string]embed.Embedder) []embed.Embedder {
	out := make([]embed.Embedder, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// modelRuns builds the runs of --models: keyword, then semantic and hybrid
// with the built-in embedder and with each Ollama model named (all the
// installed embedding models for "all-installed").
func (g *globalFlags) modelRuns(ctx context.Context, log *slog.Logger, list string, embedders map[string]embed.Embedder) ([]eval.RunSpec, error) {
	host, err := g.ollamaHost()
	if err != nil {
		return nil, err
	}
	var names []string
	if strings.TrimSpace(list) == "all-installed" {
		lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		names, err = embed.ListEmbeddingModels(lctx, host, nil)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("--models all-installed: %w", err)
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("--models all-installed: ollama at %s has no embedding model: run `ollama pull %s`", host, embed.DefaultOllamaModel)
		}
	} else {
		for _, m := range strings.Split(list, ",") {
			if m = strings.TrimSpace(m); m != "" {
				names = append(names, m)
			}
		}
	}
	embedders["builtin"] = embed.NewBuiltin(embed.BuiltinOptions{})
	runs := []eval.RunSpec{{Label: "keyword", Mode: search.Keyword},
		{Label: "semantic builtin", Mode: search.Semantic, Embedder: "builtin"},
		{Label: "hybrid builtin", Mode: search.Hybrid, Embedder: "builtin"}}
	for _, m := range names {
		o, err := g.newOllama(host, m, log)
		if err != nil {
			return nil, err
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = o.Check(cctx)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("--models %s: %w", m, err)
		}
		key := "ollama:" + m
		embedders[key] = o
		runs = append(runs, eval.RunSpec{Label: "semantic " + m, Mode: search.Semantic, Embedder: key},
			eval.RunSpec{Label: "hybrid " + m, Mode: search.Hybrid, Embedder: key})
	}
	return runs, nil
}
