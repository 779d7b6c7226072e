// Command fusionfit fits the learned fusion of hybrid search
// (search.FusionModel) on labelled datasets and prints the model, each
// dataset's nDCG@10 before and after, and, with -cv, how the fit does on
// each dataset when that dataset is left out of it (leave-one-dataset-out).
// This is how search/learned.go's shipped models were made:
//
//	go run ./cmd/fusionfit -gates -floors base.json $(for d in DATASETS; do echo -dataset $d; done)
//	OLLAMA_HOST=... go run ./cmd/fusionfit -embedder ollama -model use-lite ...
//
// -floors reads a `toolscout eval --format json` report with bm25,
// keyword and semantic runs of the same datasets and embedder: a fit is
// penalised on a dataset where hybrid falls below plain BM25 or more than
// -slack (default 0: the standing rule) below the better of its own
// keyword and semantic runs; -penalty weighs the mean shortfall and
// -worst the largest one. With -cv each fold is fitted with the same
// options, its start centred on its own sets, and the set left out is
// scored against its floor without having been fitted to it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/eval"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/search"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

func main() {
	var datasets, frozen multi
	flag.Var(&datasets, "dataset", "dataset `DIR` (repeatable)")
	flag.Var(&frozen, "freeze", "parameter `NAME` kept at its start (repeatable; e.g. weights.similarity)")
	embedder := flag.String("embedder", "builtin", "builtin or ollama")
	model := flag.String("model", "", "Ollama embedding `MODEL`")
	dataDir := flag.String("data-dir", "", "where Ollama embeddings are kept between runs (`DIR`; default: a temporary folder)")
	floors := flag.String("floors", "", "eval JSON `FILE` with bm25, keyword and semantic runs: each dataset's floor")
	rounds := flag.Int("rounds", 20, "most passes of coordinate ascent")
	cv := flag.Bool("cv", false, "also fit once without each dataset and score it (leave-one-dataset-out)")
	start := flag.String("start", "", "JSON `FILE` of a FusionModel to start from (default: the convex fusion)")
	oracle := flag.Bool("oracle", false, "print instead, per dataset, the best nDCG@10 per query among the keyword list alone, the semantic list alone and the start (oracle3), and among nine keyword weights (oracle-weights): what choosing per request could gain at most")
	slack := flag.Float64("slack", 0, "how far below its better channel a set may fall before -floors penalises it")
	penalty := flag.Float64("penalty", 2, "weight of the mean shortfall below the floors in the objective")
	worst := flag.Float64("worst", 0, "weight of the largest shortfall of one set below its floor in the objective")
	gates := flag.Bool("gates", false, "hold the built-in dataset and its long tasks (the regression gates) within 0.005 nDCG@10 of the convex fusion, without counting them in the mean")
	flag.Parse()
	if len(datasets) == 0 {
		fmt.Fprintln(os.Stderr, "fusionfit: give at least one -dataset DIR")
		os.Exit(2)
	}
	obj := objective{slack: *slack, penalty: *penalty, worst: *worst}
	if err := run(context.Background(), datasets, frozen, *embedder, *model, *dataDir, *floors, *rounds, *cv, *start, *gates, *oracle, obj); err != nil {
		fmt.Fprintln(os.Stderr, "fusionfit:", err)
		os.Exit(1)
	}
}

// objective is how a fit weighs the floors: the slack below a set's
// better channel, and the weights of the mean and largest shortfalls.
type objective struct{ slack, penalty, worst float64 }

func run(ctx context.Context, dirs, frozen []string, embedder, model, dataDir, floorsFile string, rounds int, cv bool, startFile string, gates, oracle bool, obj objective) error {
	var emb embed.Embedder
	switch embedder {
	case "builtin":
		emb = embed.NewBuiltin(embed.BuiltinOptions{})
	case "ollama":
		host, err := embed.ParseOllamaHost(os.Getenv("OLLAMA_HOST"))
		if err != nil {
			return err
		}
		o := embed.NewOllama(embed.OllamaOptions{Host: host, Model: model})
		if err := o.Check(ctx); err != nil {
			return err
		}
		emb = o
		if dataDir == "" {
			d, err := os.MkdirTemp("", "fusionfit")
			if err != nil {
				return err
			}
			defer os.RemoveAll(d)
			dataDir = d
		}
	default:
		return fmt.Errorf("-embedder %q: use builtin or ollama", embedder)
	}
	if embedder == "builtin" {
		dataDir = "" // in memory: fast to build
	}
	floors := map[string]float64{}
	if floorsFile != "" {
		var err error
		if floors, err = readFloors(floorsFile, obj.slack); err != nil {
			return err
		}
	}
	var stores eval.StoreOpener // nil: in memory
	if dataDir != "" {
		// This program's start-up: the one place it opens its data dir.
		stores = func(key string) (*store.Store, error) { return store.Open(filepath.Join(dataDir, key)) }
	}
	var sets []*eval.FusionSet
	var load []func() (*eval.Dataset, error)
	for _, dir := range dirs {
		load = append(load, func() (*eval.Dataset, error) { return eval.LoadDir(dir) })
	}
	if gates {
		load = append(load, eval.Builtin, eval.BuiltinLong)
	}
	for li, ld := range load {
		ds, err := ld()
		if err != nil {
			return err
		}
		t0 := time.Now()
		eng, closeEng, err := eval.OpenEngine(ctx, ds, emb, stores, slog.New(slog.DiscardHandler), nil)
		if err != nil {
			return err
		}
		set, err := eval.CaptureFusion(ctx, eng, ds, nil)
		closeEng()
		if err != nil {
			return err
		}
		set.Floor = floors[filepath.Base(filepath.Clean(ds.Name))]
		if set.Gate = li >= len(dirs); set.Gate {
			convex := search.ConvexModel(search.Params{})
			_, v := eval.FusionObjective([]*eval.FusionSet{set}, &convex, 0)
			set.Floor = v[0] - 0.005
		}
		sets = append(sets, set)
		fmt.Fprintf(os.Stderr, "captured %s: %d queries in %s (floor %.4f)\n", ds.Name, len(set.Samples), time.Since(t0).Round(time.Millisecond), set.Floor)
	}
	base := search.ConvexModel(search.Params{})
	if startFile != "" {
		data, err := os.ReadFile(startFile)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, &base); err != nil {
			return fmt.Errorf("%s: %w", startFile, err)
		}
	} else {
		eval.CenterShapes(&base, sets)
	}
	if oracle {
		kwOnly, semOnly := base, base
		kwOnly.Weights = [len(base.Weights)]float64{1}
		semOnly.Weights = [len(base.Weights)]float64{0, 1}
		var models []search.FusionModel
		for _, w := range []float64{0, 0.25, 0.5, 1, 1.5, 2, 3, 5, 100} {
			m := base
			m.Weights[0] = w
			models = append(models, m)
		}
		for i, o := range eval.FusionOracle(sets, []search.FusionModel{base, kwOnly, semOnly}) {
			_, k := eval.FusionObjective(sets[i:i+1], &kwOnly, 0)
			_, sm := eval.FusionObjective(sets[i:i+1], &semOnly, 0)
			fmt.Printf("%-28s kw %.4f sem %.4f oracle3 %.4f oracle-weights %.4f\n", filepath.Base(sets[i].Name), k[0], sm[0], o, eval.FusionOracle(sets[i:i+1], models)[0])
		}
		return nil
	}
	opts := eval.FitOptions{Rounds: rounds, Frozen: map[string]bool{}, NonNegative: true, Penalty: obj.penalty, Worst: obj.worst, Log: func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }}
	for _, f := range frozen {
		opts.Frozen[f] = true
	}
	opts.Frozen["weights.semantic"] = true // the scale: only ratios rank
	fit := eval.FitFusion(sets, base, opts)
	_, before := eval.FusionObjective(sets, &base, 0)
	_, after := eval.FusionObjective(sets, &fit, 0)
	fmt.Printf("%-28s %8s %8s %8s %8s\n", "dataset", "floor", "start", "fitted", "held-out")
	short := func(v, floor float64) string {
		if floor > 0 && v < floor {
			return fmt.Sprintf(" (%.4f below its floor)", floor-v)
		}
		return ""
	}
	var held []float64
	if cv {
		for i := range sets {
			if sets[i].Gate {
				held = append(held, after[i])
				continue
			}
			rest := append(append([]*eval.FusionSet{}, sets[:i]...), sets[i+1:]...)
			foldStart := base
			if startFile == "" {
				eval.CenterShapes(&foldStart, rest) // nothing of the set left out
			}
			foldOpts := opts
			foldOpts.Log = nil
			m := eval.FitFusion(rest, foldStart, foldOpts)
			fmt.Fprintf(os.Stderr, "fold without %s: %s\n", filepath.Base(sets[i].Name), modelJSON(m))
			_, one := eval.FusionObjective(sets[i:i+1], &m, 0)
			held = append(held, one[0])
		}
	}
	var sb, sa, sh float64
	for i, s := range sets {
		h := "-"
		name := filepath.Base(s.Name)
		if cv && !s.Gate {
			h = fmt.Sprintf("%.4f", held[i])
			sh += held[i]
		}
		if s.Gate {
			fmt.Printf("%-28s %8.4f %8.4f %8.4f %8s\n", name+" (gate)", s.Floor, before[i], after[i], "-")
			continue
		}
		sb += before[i]
		sa += after[i]
		w := short(after[i], s.Floor)
		if cv {
			w = short(held[i], s.Floor)
		}
		fmt.Printf("%-28s %8.4f %8.4f %8.4f %8s%s\n", name, s.Floor, before[i], after[i], h, w)
	}
	n := float64(len(dirs))
	h := "-"
	if cv {
		h = fmt.Sprintf("%.4f", sh/n)
	}
	fmt.Printf("%-28s %8s %8.4f %8.4f %8s\n", "mean", "", sb/n, sa/n, h)
	out, err := json.MarshalIndent(fit, "", "  ")
	if err != nil {
		return err
	}
	fmt.Printf("\nmodel:\n%s\n\nas Go (search/learned.go):\n%s\n", out, strings.TrimPrefix(fmt.Sprintf("%#v", fit), "search."))
	return nil
}

// readFloors reads each dataset's floor from an eval JSON report: the
// higher of plain BM25 and the better of keyword and semantic less slack.
func readFloors(path string, slack float64) (map[string]float64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rep struct {
		Datasets []struct {
			Name string `json:"name"`
			Runs []struct {
				Mode    string             `json:"mode"`
				Label   string             `json:"label"`
				Metrics map[string]float64 `json:"metrics"`
			} `json:"runs"`
		} `json:"datasets"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]float64{}
	for _, d := range rep.Datasets {
		m := map[string]float64{}
		for _, r := range d.Runs {
			if r.Label == "" {
				m[r.Mode] = r.Metrics["ndcg@10"]
			}
		}
		out[filepath.Base(filepath.Clean(d.Name))] = max(m["bm25"], max(m["keyword"], m["semantic"])-slack)
	}
	return out, nil
}

// modelJSON is m on one line.
func modelJSON(m search.FusionModel) string {
	out, err := json.Marshal(m)
	if err != nil {
		return err.Error()
	}
	return string(out)
}
