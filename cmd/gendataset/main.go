// Command gendataset writes a seeded synthetic eval dataset folder
// (catalog.json and queries.jsonl) of any size, for timing toolscout eval:
//
//	go run ./cmd/gendataset -tools 500 -queries 2500 -out /tmp/synth500
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolscout/toolscout/internal/synth"
)

func main() {
	tools := flag.Int("tools", 500, "number of tools")
	queries := flag.Int("queries", 2500, "number of queries")
	seed := flag.Int64("seed", 1, "random seed")
	out := flag.String("out", "", "output folder (required)")
	flag.Parse()
	if err := run(*tools, *queries, *seed, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gendataset:", err)
		os.Exit(1)
	}
}

func run(nTools, nQueries int, seed int64, out string) error {
	if out == "" {
		return fmt.Errorf("-out is required")
	}
	cat, err := synth.Catalog(nTools, seed)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	data, err := synth.CatalogJSON(cat)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "catalog.json"), data, 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(out, "queries.jsonl"))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for i, q := range synth.LabelledQueries(cat, nQueries, seed+1) {
		if err := enc.Encode(map[string]any{"id": fmt.Sprintf("s%d", i+1), "query": q.Query, "relevant": []string{q.Tool.Domain + "/" + q.Tool.Name}}); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}
