package eval

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolscout/toolscout/index"
)

// Query is one labelled query.
type Query struct {
	ID       string             `json:"id"`
	Query    string             `json:"query"`
	Relevant []string           `json:"relevant"` // "domain/tool"
	Grades   map[string]float64 `json:"grades,omitempty"`
	// Split is "dev" or "test" in the built-in dataset; other datasets may
	// leave it empty.
	Split    string `json:"split,omitempty"`
	Category string `json:"category,omitempty"`
}

// Gain returns the graded gain of a relevant tool (1 when ungraded), or 0.
func (q *Query) Gain(key string) float64 {
	if g, ok := q.Grades[key]; ok {
		return g
	}
	for _, r := range q.Relevant {
		if r == key {
			return 1
		}
	}
	return 0
}

// Dataset is a catalog and the queries labelled against it.
type Dataset struct {
	Name    string
	Catalog *index.Catalog
	Queries []Query
}

//go:embed datasets/builtin/queries.jsonl datasets/builtin/longtasks.jsonl
var builtinFS embed.FS

// Builtin returns the built-in dataset: the built-in catalog and its
// labelled queries.
func Builtin() (*Dataset, error) { return builtinDataset("builtin", "queries.jsonl") }

// BuiltinLong returns the built-in long-task dataset: 200 multi-step task
// paragraphs over the built-in catalog, each joined mechanically from 2 to
// 4 single-tool queries of the built-in dataset and labelled with the
// union of their tools (cmd/genlongtasks writes them, seeded).
func BuiltinLong() (*Dataset, error) { return builtinDataset("builtin-long", "longtasks.jsonl") }

func builtinDataset(name, file string) (*Dataset, error) {
	cat, err := index.BuiltinCatalog()
	if err != nil {
		return nil, err
	}
	data, err := builtinFS.ReadFile("datasets/builtin/" + file)
	if err != nil {
		return nil, err
	}
	qs, err := ParseQueries("builtin "+file, data, cat)
	if err != nil {
		return nil, err
	}
	return &Dataset{Name: name, Catalog: cat, Queries: qs}, nil
}

// LoadDir loads a dataset folder holding catalog.json and queries.jsonl.
func LoadDir(dir string) (*Dataset, error) {
	cat, err := index.LoadCatalogFiles([]string{filepath.Join(dir, "catalog.json")})
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", dir, err)
	}
	qpath := filepath.Join(dir, "queries.jsonl")
	data, err := os.ReadFile(qpath)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", dir, err)
	}
	qs, err := ParseQueries(qpath, data, cat)
	if err != nil {
		return nil, err
	}
	return &Dataset{Name: filepath.Base(filepath.Clean(dir)), Catalog: cat, Queries: qs}, nil
}

// SpecsDataset is the dataset name of the queries of file (its bytes,
// data) labelled against the catalog built from specs: the tools that
// servers list now. An error of that build is a *CatalogBuildError; one
// of the queries, ParseQueries' error.
func SpecsDataset(name, file string, data []byte, specs []index.DomainSpec) (*Dataset, error) {
	cat, err := index.NewCatalog(specs)
	if err != nil {
		return nil, &CatalogBuildError{Err: err}
	}
	qs, err := ParseQueries(file, data, cat)
	if err != nil {
		return nil, err
	}
	return &Dataset{Name: name, Catalog: cat, Queries: qs}, nil
}

// CatalogBuildError is SpecsDataset's error building the catalog of its
// specs: it reads as the build's error.
type CatalogBuildError struct{ Err error }

// Error reads as the build's error.
func (e *CatalogBuildError) Error() string { return e.Err.Error() }

// Unwrap returns the build's error.
func (e *CatalogBuildError) Unwrap() error { return e.Err }

// ParseQueries parses queries.jsonl and checks every label against cat.
// Errors name the file and line.
func ParseQueries(file string, data []byte, cat *index.Catalog) ([]Query, error) {
	var qs []Query
	ids := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var q Query
		if err := json.Unmarshal([]byte(text), &q); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", file, line, err)
		}
		if strings.TrimSpace(q.Query) == "" {
			return nil, fmt.Errorf("%s:%d: empty \"query\"", file, line)
		}
		if q.ID == "" {
			q.ID = fmt.Sprintf("line%d", line)
		}
		if prev, ok := ids[q.ID]; ok {
			return nil, fmt.Errorf("%s:%d: duplicate id %q (first on line %d)", file, line, q.ID, prev)
		}
		ids[q.ID] = line
		if len(q.Relevant) == 0 {
			return nil, fmt.Errorf("%s:%d: query %s has no \"relevant\" tools", file, line, q.ID)
		}
		for _, r := range q.Relevant {
			if cat.ToolByKey(r) == nil {
				return nil, fmt.Errorf("%s:%d: query %s: relevant tool %q is not in the catalog (write domain/tool)%s", file, line, q.ID, r, notFoundHint(cat, r))
			}
		}
		for k := range q.Grades {
			if cat.ToolByKey(k) == nil {
				return nil, fmt.Errorf("%s:%d: query %s: graded tool %q is not in the catalog", file, line, q.ID, k)
			}
		}
		qs = append(qs, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("%s: no queries", file)
	}
	return qs, nil
}

// notFoundHint says what the catalog holds near a missing domain/tool key:
// the domains when the domain is unknown, else the domain's tools.
func notFoundHint(cat *index.Catalog, key string) string {
	dom, _, _ := strings.Cut(key, "/")
	list := func(what string, names []string) string {
		if len(names) > 40 {
			names = append(names[:40:40], "...")
		}
		return fmt.Sprintf(": %s %s", what, strings.Join(names, ", "))
	}
	if d := cat.Domain(dom); d != nil {
		var names []string
		for _, t := range d.Tools {
			names = append(names, t.Name)
		}
		return list(fmt.Sprintf("%s lists", dom), names)
	}
	var names []string
	for _, d := range cat.Domains() {
		names = append(names, d.Name)
	}
	return list(fmt.Sprintf("no domain %q; the domains are", dom), names)
}

// Splits returns the dataset split by Query.Split: "name/dev", "name/test"
// and so on. A dataset without splits comes back whole.
func (d *Dataset) Splits() []*Dataset {
	order := []string{}
	by := map[string][]Query{}
	for _, q := range d.Queries {
		if _, ok := by[q.Split]; !ok {
			order = append(order, q.Split)
		}
		by[q.Split] = append(by[q.Split], q)
	}
	if len(order) == 1 {
		return []*Dataset{d}
	}
	var out []*Dataset
	for _, s := range order {
		name := d.Name
		if s != "" {
			name += "/" + s
		}
		out = append(out, &Dataset{Name: name, Catalog: d.Catalog, Queries: by[s]})
	}
	return out
}
