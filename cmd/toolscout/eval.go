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
	f, err := parseEvalFlags(args, stderr)
	if err != nil {
		return err
	}
	ks, err := f.check(stderr)
	if err != nil {
		return err
	}
	log, err := f.g.logger(stderr)
	if err != nil {
		return err
	}
	embedders := map[string]embed.Embedder{}
	runs, baseline, err := f.runs(ctx, log, embedders)
	if err != nil {
		return err
	}
	emb, err := f.embedder(ctx, log, runs)
	if err != nil {
		return err
	}
	dss, err := f.loadDatasets(ctx, log)
	if err != nil {
		return err
	}
	start := time.Now()
	stores, cleanup, err := f.stores(log, append([]embed.Embedder{emb}, values(embedders)...))
	if err != nil {
		return err
	}
	defer cleanup()
	rep, err := eval.Evaluate(ctx, dss, eval.Options{
		Runs: runs, Ks: ks, Embedder: emb, Embedders: embedders, Logger: log, Stores: stores, Confidence: f.confidence || f.confidenceFit,
		FeedbackSplit: f.feedbackSplit,
		Progress:      evalProgress(stderr),
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
	return f.write(rep, metrics, stdout, stderr)
}

// evalFlags are eval's flags.
type evalFlags struct {
	g                                           globalFlags
	datasets                                    stringList
	queries, modes, ks, grid, format, out       string
	misses                                      int
	confidence, confidenceFit                   bool
	confidenceModels, runFile, perQuery, models string
	feedbackSplit                               float64
}

// parseEvalFlags parses eval's command line.
func parseEvalFlags(args []string, stderr io.Writer) (*evalFlags, error) {
	f := &evalFlags{}
	fs := newFlagSet("eval", "eval [flags]\n\nMeasures ranking strategies on labelled queries (the built-in dataset and\nits generated long-task set by default; or the servers of --config with the\nrequests of --queries): recall@k, MRR, nDCG@10 and latency per run.", stderr)
	f.g.register(fs, "warn")
	fs.Var(&f.datasets, "dataset", "dataset `DIR` holding catalog.json and queries.jsonl (repeatable; default: built-in)")
	fs.StringVar(&f.queries, "queries", "", "with --config: score the requests of `FILE` (JSON lines as a dataset's queries.jsonl, tools named server/tool) against the tools the configured servers list, connected as serve connects them")
	fs.StringVar(&f.modes, "modes", "bm25,keyword,semantic,hybrid", "comma-separated modes to run (ignored with --grid); bm25 is the plain Okapi BM25 yardstick")
	fs.StringVar(&f.ks, "k", "1,5,10", "comma-separated cut-offs for recall@k")
	fs.StringVar(&f.grid, "grid", "", "grid `FILE` (JSON or YAML) of runs to compare")
	fs.StringVar(&f.format, "format", "table", "output: table, markdown or json")
	fs.StringVar(&f.out, "out", "", "write the report to `FILE` instead of stdout")
	fs.IntVar(&f.misses, "misses", 0, "list the N worst queries of each run")
	fs.BoolVar(&f.confidence, "confidence", false, "measure each run's confidence: every query ranked again without its relevant tools, reported as AUROC and, at the server's threshold, the shares of answerable queries flagged low_confidence and of unanswerable ones caught")
	fs.BoolVar(&f.confidenceFit, "confidence-fit", false, "also print (on stderr with --format json), per run, the logistic model of confidence fitted on these datasets, each dataset counting alike, with its threshold: the highest at which at most 10% of the answerable queries are flagged on average over the datasets (how the shipped models were made)")
	fs.StringVar(&f.confidenceModels, "confidence-models", "", "with --confidence-fit and the modes keyword, semantic and hybrid of the built-in embedder, write the fitted models to `FILE` in the form of search/confidence_models.json, the models toolscout ships")
	fs.StringVar(&f.runFile, "run-file", "", "also write each run in TREC run format to `PREFIX`.<dataset>.<run>.run (qid Q0 domain/tool rank score run) and each dataset's qrels to PREFIX.<dataset>.qrels (qid 0 domain/tool grade), for trec_eval -c, ir_measures or ranx; names keep [A-Za-z0-9._+-], other characters become _")
	fs.StringVar(&f.perQuery, "per-query", "", "also write every query's answer to `FILE`, one JSON line per dataset, run and query: id, query, relevant, ranked tools with scores, metrics")
	fs.Float64Var(&f.feedbackSplit, "feedback-split", 0, "replay the first `SHARE` (0 to below 1, e.g. 0.5) of each dataset's queries, in a seeded shuffle, as runs of their relevant tools, and score every run on the rest, each beside the same run with the feedback channel (<mode>+feedback), compared with paired-bootstrap CIs")
	fs.StringVar(&f.models, "models", "", "compare Ollama embedding `MODELS` (comma-separated, or all-installed) with the built-in embedder: semantic and hybrid runs for each, against keyword")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	if err := noArgs("eval", pos); err != nil {
		return nil, err
	}
	return f, nil
}

// check checks the flags that need no embedder and no dataset, before a
// run that may take minutes, and returns the cut-offs of --k.
func (f *evalFlags) check(stderr io.Writer) ([]int, error) {
	if err := f.checkSources(stderr); err != nil {
		return nil, err
	}
	switch f.format {
	case "table", "markdown", "json":
	default:
		return nil, usagef("--format %q: use table, markdown or json", f.format)
	}
	ks, err := parseKs(f.ks)
	if err != nil {
		return nil, err
	}
	if f.misses < 0 {
		return nil, usagef("--misses %d: want 0 or more", f.misses)
	}
	if f.feedbackSplit < 0 || f.feedbackSplit >= 1 {
		return nil, usagef("--feedback-split %g: want a share from 0 (off) to below 1, e.g. 0.5", f.feedbackSplit)
	}
	return ks, f.checkOutputs()
}

// checkSources checks that the queries come from one place: --queries
// with --config, or datasets.
func (f *evalFlags) checkSources(stderr io.Writer) error {
	switch {
	case f.queries != "" && len(f.g.configs) == 0:
		return usagef("--queries %s needs --config: the servers whose tools the requests name (a dataset folder, --dataset, brings its own catalog.json)", f.queries)
	case len(f.g.configs) > 0 && f.queries == "":
		return usagef("--config needs --queries FILE: the labelled requests to score against the servers' tools")
	case f.queries != "" && len(f.datasets) > 0:
		return usagef("--queries and --dataset: give one of them (run eval twice to see both)")
	case len(f.g.catalogs) > 0:
		fmt.Fprintln(stderr, "toolscout eval: --catalog is not used: a dataset folder (--dataset) brings its own catalog.json, and --config its servers")
	}
	return nil
}

// parseKs reads --k: positive whole numbers separated by commas.
func parseKs(list string) ([]int, error) {
	var ks []int
	for _, s := range strings.Split(list, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || k < 1 {
			return nil, usagef("--k %q: want positive whole numbers separated by commas", list)
		}
		ks = append(ks, k)
	}
	return ks, nil
}

// checkOutputs checks that each file to write names a file in a folder
// that exists: said before a run that may take minutes, not after it.
func (f *evalFlags) checkOutputs() error {
	for _, o := range []struct{ flag, path string }{{"--out", f.out}, {"--run-file", f.runFile}, {"--per-query", f.perQuery}, {"--confidence-models", f.confidenceModels}} {
		if o.path == "" {
			continue
		}
		if strings.HasSuffix(o.path, string(filepath.Separator)) || strings.HasSuffix(o.path, "/") {
			return usagef("%s %s: names a folder: give a file name in it (%s)", o.flag, o.path, filepath.Join(o.path, "eval"))
		}
		if fi, err := os.Stat(filepath.Dir(o.path)); err != nil || !fi.IsDir() {
			return usagef("%s %s: folder %s does not exist: create it first", o.flag, o.path, filepath.Dir(o.path))
		}
	}
	return nil
}

// runs are the runs to measure (of --models, --grid or --modes) and the
// index of the baseline the others are compared with; the embedders the
// runs name go into embedders.
func (f *evalFlags) runs(ctx context.Context, log *slog.Logger, embedders map[string]embed.Embedder) ([]eval.RunSpec, int, error) {
	if f.confidenceModels != "" && (!f.confidenceFit || f.models != "" || f.grid != "") {
		return nil, 0, usagef("--confidence-models needs --confidence-fit and the runs of --modes (not --grid or --models)")
	}
	if f.models != "" && f.grid != "" {
		return nil, 0, usagef("--models and --grid: give one of them (a grid names its embedders per run)")
	}
	switch {
	case f.models != "":
		runs, err := f.g.modelRuns(ctx, log, f.models, embedders)
		return runs, 0, err
	case f.grid != "":
		return f.gridRuns(ctx, log, embedders)
	}
	runs, err := modeRuns(f.modes)
	return runs, 0, err
}

// gridRuns are the runs of --grid, its baseline, and the embedders its
// runs name.
func (f *evalFlags) gridRuns(ctx context.Context, log *slog.Logger, embedders map[string]embed.Embedder) ([]eval.RunSpec, int, error) {
	grid, err := eval.LoadGrid(f.grid)
	if err != nil {
		return nil, 0, err
	}
	var runs []eval.RunSpec
	baseline := 0
	for i, r := range grid.Runs {
		runs = append(runs, r.Spec())
		if r.Label == grid.Baseline {
			baseline = i
		}
		key := r.EmbedderKey()
		if key == "" || embedders[key] != nil {
			continue
		}
		sub := f.g
		sub.embedder, sub.model = r.Embedder, r.Model
		if sub.model == "" {
			sub.model = f.g.model
		}
		e, err := sub.newEmbedder(ctx, log, "")
		if err != nil {
			return nil, 0, fmt.Errorf("grid run %s: %w", r.Label, err)
		}
		embedders[key] = e
	}
	return runs, baseline, nil
}

// modeRuns are the runs of --modes.
func modeRuns(modes string) ([]eval.RunSpec, error) {
	var runs []eval.RunSpec
	for _, m := range strings.Split(modes, ",") {
		mode, err := search.ParseMode(m)
		if strings.TrimSpace(m) == string(eval.BM25) {
			mode, err = eval.BM25, nil
		}
		if err != nil || strings.TrimSpace(m) == "" {
			return nil, usagef("--modes %q: use bm25, keyword, semantic and hybrid, separated by commas", modes)
		}
		runs = append(runs, eval.RunSpec{Mode: mode})
	}
	return runs, nil
}

// embedder makes the embedder of the runs that name none, checking first
// that --confidence-models can be fitted with it.
func (f *evalFlags) embedder(ctx context.Context, log *slog.Logger, runs []eval.RunSpec) (embed.Embedder, error) {
	// Said before an embedder is made: --embedder ollama with Ollama down
	// would otherwise be told instead.
	if f.confidenceModels != "" && f.g.embedder == "ollama" {
		return nil, shippedModels(runs, "ollama")
	}
	emb, err := f.g.newEmbedder(ctx, log, "")
	if err != nil {
		return nil, err
	}
	if f.confidenceModels != "" {
		if err := shippedModels(runs, emb.Info().Provider); err != nil {
			return nil, err
		}
	}
	return emb, nil
}

// shippedModels checks that runs and the embedder provider are those the
// shipped confidence models are fitted on.
func shippedModels(runs []eval.RunSpec, provider string) error {
	have := map[search.Mode]bool{}
	for _, r := range runs {
		have[r.Mode] = true
	}
	if !have[search.Keyword] || !have[search.Semantic] || !have[search.Hybrid] || provider != "builtin" {
		return usagef("--confidence-models: the shipped models are fitted on the modes keyword, semantic and hybrid of the built-in embedder: give --modes keyword,semantic,hybrid --embedder builtin")
	}
	return nil
}

// loadDatasets loads the datasets to measure on: the servers of --config with
// --queries, the folders of --dataset, or the built-in ones.
func (f *evalFlags) loadDatasets(ctx context.Context, log *slog.Logger) ([]*eval.Dataset, error) {
	var dss []*eval.Dataset
	if f.queries != "" {
		ds, err := f.g.configDataset(ctx, log, f.queries)
		if err != nil {
			return nil, err
		}
		dss = append(dss, ds)
	} else if len(f.datasets) == 0 {
		for _, load := range []func() (*eval.Dataset, error){eval.Builtin, eval.BuiltinLong} {
			ds, err := load()
			if err != nil {
				return nil, err
			}
			dss = append(dss, ds)
		}
	}
	for _, dir := range f.datasets {
		ds, err := eval.LoadDir(dir)
		if err != nil {
			return nil, err
		}
		dss = append(dss, ds)
	}
	return dss, nil
}

// stores opens the stores that keep Ollama embeddings between runs, keyed
// by catalog content and model (nil: in memory, all the built-in embedder
// needs); cleanup removes the temporary data dir of --config's servers.
func (f *evalFlags) stores(log *slog.Logger, embedders []embed.Embedder) (stores eval.StoreOpener, cleanup func(), err error) {
	cleanup = func() {}
	storeDir := f.g.dataDir
	for _, e := range embedders {
		if e.Info().Provider == "builtin" {
			continue
		}
		if f.queries != "" && storeDir == f.g.dataDir {
			// The servers' tools are not the data dir's: their
			// vectors go to a data dir of this run's own.
			tmp, err := os.MkdirTemp("", "toolscout-eval-")
			if err != nil {
				return nil, cleanup, fmt.Errorf("eval --config: a temporary data dir: %w", err)
			}
			cleanup = func() { os.RemoveAll(tmp) }
			storeDir = tmp
		}
		stores = func(key string) (*store.Store, error) {
			return f.g.openStore(storeDir, store.Options{Cache: key, Logger: log})
		}
	}
	return stores, cleanup, nil
}

// evalProgress draws a progress bar on stderr for each run.
func evalProgress(stderr io.Writer) func(label string, done, total int) {
	bars := map[string]*progress{}
	return func(label string, done, total int) {
		b := bars[label]
		if b == nil {
			b = newProgress(stderr, label)
			bars[label] = b
		}
		b.update(done, total)
		if done == total {
			b.finish()
		}
	}
}

// write writes the report in --format (with --misses and --confidence-fit)
// to stdout or --out, and the files of --run-file and --per-query.
func (f *evalFlags) write(rep *eval.Report, metrics []string, stdout, stderr io.Writer) error {
	var buf bytes.Buffer
	var err error
	switch f.format {
	case "json":
		err = rep.WriteJSON(&buf)
	default:
		err = rep.WriteTable(&buf, metrics, f.format == "markdown")
	}
	if err != nil {
		return err
	}
	if f.misses > 0 {
		rep.WriteMisses(&buf, f.misses)
	}
	if f.confidenceFit {
		if err := f.writeConfidenceFit(rep, &buf, stderr); err != nil {
			return err
		}
	}
	if f.out == "" {
		if _, err := stdout.Write(buf.Bytes()); err != nil {
			return err
		}
	} else if err := fileio.WriteFile(f.out, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write the report to --out %s: %w", f.out, err)
	}
	return writeExports(rep, f.runFile, f.perQuery, stderr)
}

// writeConfidenceFit prints the confidence models fitted on rep after the
// report in buf (on stderr beside a JSON report, which it would make
// invalid) and writes them to --confidence-models when given.
func (f *evalFlags) writeConfidenceFit(rep *eval.Report, buf *bytes.Buffer, stderr io.Writer) error {
	fits := eval.FitConfidence(rep)
	text, err := json.MarshalIndent(fits, "", "  ")
	if err != nil {
		return err
	}
	w := io.Writer(buf)
	if f.format == "json" {
		w = stderr
	}
	fmt.Fprintf(w, "\nconfidence models fitted on these datasets (search/confidence_models.json), with their figures at their thresholds:\n%s\n", text)
	if f.confidenceModels == "" {
		return nil
	}
	shipped, err := eval.ShippableModels(rep, fits)
	if err != nil {
		return fmt.Errorf("--confidence-models: %w", err)
	}
	data, err := json.MarshalIndent(shipped, "", "  ")
	if err != nil {
		return err
	}
	if err := fileio.WriteFile(f.confidenceModels, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write --confidence-models %s: %w", f.confidenceModels, err)
	}
	fmt.Fprintf(stderr, "wrote %s\n", f.confidenceModels)
	return nil
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
