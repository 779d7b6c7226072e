package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The data dir holds one folder of indexes per catalog set, so that a
// server on the built-in catalog and an `index --catalog other.json` on the
// same data dir never delete each other's vectors, and switching back and
// forth re-embeds nothing:
//
//	DATA_DIR/sets/<id>/keyword.bleve, vectors/, sources.json
//
// A set is identified by its sources (the built-in catalog, or the
// absolute paths of its --catalog and --config files), not their content:
// edits to a file stay incremental inside its set.

// setSources names the sources of the current catalog set.
type setSources struct {
	Sources  []string  `json:"sources"`
	LastUsed time.Time `json:"last_used"`
}

// sources returns the sorted sources of the flags' catalog set.
func (g *globalFlags) sources() ([]string, error) {
	var out []string
	for _, c := range g.catalogs {
		abs, err := filepath.Abs(c)
		if err != nil {
			return nil, err
		}
		out = append(out, "catalog "+abs)
	}
	for _, c := range g.configs {
		abs, err := filepath.Abs(c)
		if err != nil {
			return nil, err
		}
		out = append(out, "config "+abs)
	}
	if len(out) == 0 {
		out = []string{"builtin"}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// storeDir returns the folder of the current set's indexes, creating it
// and recording its sources and last use.
func (g *globalFlags) storeDir() (string, error) {
	src, err := g.sources()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(strings.Join(src, "\n")))
	dir := filepath.Join(g.dataDir, "sets", hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("data dir: %w", err)
	}
	data, _ := json.MarshalIndent(setSources{Sources: src, LastUsed: time.Now().UTC()}, "", "  ")
	// Best effort: the file only helps --prune and people.
	tmp := filepath.Join(dir, ".sources.json.tmp")
	if os.WriteFile(tmp, data, 0o644) == nil {
		os.Rename(tmp, filepath.Join(dir, "sources.json"))
	}
	return dir, nil
}

// pruneAge is how long a set may go unused before --prune removes it.
const pruneAge = 30 * 24 * time.Hour

// prune removes the sets other than keep whose source files are gone or
// that were not used for pruneAge, and the indexes of the data dir's old
// single-set layout. It returns what it removed.
func (g *globalFlags) prune(keep string) ([]string, error) {
	var removed []string
	for _, legacy := range []string{"keyword.bleve", "vectors"} {
		p := filepath.Join(g.dataDir, legacy)
		if _, err := os.Stat(p); err == nil {
			if err := os.RemoveAll(p); err != nil {
				return removed, err
			}
			removed = append(removed, p+" (the layout before catalog sets)")
		}
	}
	sets, err := os.ReadDir(filepath.Join(g.dataDir, "sets"))
	if err != nil {
		return removed, nil
	}
	for _, e := range sets {
		dir := filepath.Join(g.dataDir, "sets", e.Name())
		if !e.IsDir() || dir == keep {
			continue
		}
		why := ""
		var s setSources
		data, err := os.ReadFile(filepath.Join(dir, "sources.json"))
		switch {
		case err != nil || json.Unmarshal(data, &s) != nil:
			why = "no readable sources.json"
		case time.Since(s.LastUsed) > pruneAge:
			why = fmt.Sprintf("unused since %s", s.LastUsed.Format("2006-01-02"))
		default:
			for _, src := range s.Sources {
				if kind, path, ok := strings.Cut(src, " "); ok && kind != "builtin" {
					if _, err := os.Stat(path); err != nil {
						why = path + " is gone"
						break
					}
				}
			}
		}
		if why == "" {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			return removed, err
		}
		removed = append(removed, fmt.Sprintf("%s (%s: %s)", dir, strings.Join(s.Sources, ", "), why))
	}
	return removed, nil
}
