package eval

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/toolscout/toolscout/search"
)

// A report's exports for checking it with other tools: each run in TREC
// run format with the dataset's qrels (trec_eval, ir_measures, ranx), and
// every query's ranked list and metrics as JSON lines. Both cover the
// whole datasets, not their splits (which repeat their queries; a
// per-query line names its split).
//
// TREC files, under a prefix:
//
//	PREFIX.<dataset>.qrels       qid 0 docid grade      (one line per relevant tool)
//	PREFIX.<dataset>.<run>.run   qid Q0 docid rank score runname
//
// docid is the dataset's "domain/tool" key and qid the query's id, with
// whitespace replaced by '_'; the names in file names keep
// [A-Za-z0-9._+-] and replace anything else by '_' (the TREC run name is
// that too). A grade is the query's grade of the tool, 1 when ungraded.
// A score is the run's score of the tool, except that a score not below
// the one above it (a tie, which toolscout orders by name) is written
// just below it, so that tools that order by score (trec_eval breaks ties
// by docid) keep the run's order. A query without results has no line in
// a run file: count it as 0 (trec_eval -c), as toolscout's averages do.

// ExportFile is one file of an export: its path and what it holds.
type ExportFile struct {
	Path  string
	Write func(w io.Writer) error
}

// TRECFiles lists the TREC export of r under prefix (above): for every
// dataset its qrels, then a run file per run. Names that would collide
// after cleaning get a suffix -2, -3, ...
func (r *Report) TRECFiles(prefix string) []ExportFile {
	var out []ExportFile
	used := map[string]int{}
	unique := func(base, ext string) string {
		used[base]++
		if n := used[base]; n > 1 {
			base += "-" + strconv.Itoa(n)
			used[base]++
		}
		return base + ext
	}
	for _, d := range r.Datasets {
		if d.split {
			continue
		}
		base := unique(prefix+"."+fileName(d.Name), "")
		out = append(out, ExportFile{Path: base + ".qrels", Write: d.WriteQrels})
		for i := range d.Runs {
			out = append(out, ExportFile{Path: unique(base+"."+fileName(d.Runs[i].RunName()), ".run"), Write: func(w io.Writer) error { return d.WriteTRECRun(w, i) }})
		}
	}
	return out
}

// WriteQrels writes d's relevance judgements in TREC qrels format: "qid 0
// docid grade", one line per relevant tool of each query, in the
// queries' order.
func (d *DatasetReport) WriteQrels(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for i, qid := range d.trecIDs() {
		q := &d.queries[i]
		for _, rel := range q.Relevant {
			fmt.Fprintf(bw, "%s 0 %s %s\n", qid, trecField(rel), strconv.FormatFloat(q.Gain(rel), 'g', -1, 64))
		}
	}
	return bw.Flush()
}

// WriteTRECRun writes d's run number run in TREC run format: "qid Q0
// docid rank score runname", ranks from 1, in the queries' order.
func (d *DatasetReport) WriteTRECRun(w io.Writer, run int) error {
	rr := d.Runs[run]
	tag := fileName(rr.RunName())
	bw := bufio.NewWriter(w)
	for i, qid := range d.trecIDs() {
		r := rr.perQuery[i]
		for j, s := range trecScores(r.scores) {
			fmt.Fprintf(bw, "%s Q0 %s %d %s %s\n", qid, trecField(r.ranked[j]), j+1, strconv.FormatFloat(s, 'g', -1, 64), tag)
		}
	}
	return bw.Flush()
}

// trecIDs returns d's query ids as TREC fields, in the queries' order;
// ids that clean to the same field get a suffix -2, -3, ...
func (d *DatasetReport) trecIDs() []string {
	out := make([]string, len(d.queries))
	used := map[string]bool{}
	for i, q := range d.queries {
		id := trecField(q.ID)
		for n := 2; used[id]; n++ {
			id = trecField(q.ID) + "-" + strconv.Itoa(n)
		}
		used[id] = true
		out[i] = id
	}
	return out
}

// trecScores returns scores made strictly decreasing: a score not below
// the one before it becomes the next float64 below that one.
func trecScores(scores []float64) []float64 {
	out := make([]float64, len(scores))
	for i, s := range scores {
		if i > 0 && !(s < out[i-1]) {
			s = math.Nextafter(out[i-1], math.Inf(-1))
		}
		out[i] = s
	}
	return out
}

// trecField is s with whitespace replaced by '_' ("_" when empty): one
// field of a whitespace-separated TREC line.
func trecField(s string) string {
	if s == "" {
		return "_"
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return '_'
		}
		return r
	}, s)
}

// fileName is s with everything but [A-Za-z0-9._+-] replaced by '_'
// ("_" when empty).
func fileName(s string) string {
	if s == "" {
		return "_"
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._+-", r) {
			return r
		}
		return '_'
	}, s)
}

// QueryLine is one line of WritePerQuery: a query's answer in one run.
type QueryLine struct {
	Dataset  string             `json:"dataset"`
	Run      string             `json:"run"`
	ID       string             `json:"id"`
	Query    string             `json:"query"`
	Split    string             `json:"split,omitempty"`
	Category string             `json:"category,omitempty"`
	Relevant []string           `json:"relevant"`
	Grades   map[string]float64 `json:"grades,omitempty"`
	// Results are the ranked tools ("domain/tool"), best first, with the
	// run's scores.
	Results   []ScoredTool       `json:"results"`
	Metrics   map[string]float64 `json:"metrics"`
	LatencyMs float64            `json:"latency_ms"`
	// Confidence, when measured: the first result's with the query's
	// tools (present) and with them left out (absent).
	Confidence *QueryConfidence `json:"confidence,omitempty"`
}

// ScoredTool is one ranked tool of a QueryLine.
type ScoredTool struct {
	Tool  string  `json:"tool"`
	Score float64 `json:"score"`
}

// QueryConfidence is a query's confidence with and without its tools.
type QueryConfidence struct {
	Present search.Confidence `json:"present"`
	Absent  search.Confidence `json:"absent"`
}

// WritePerQuery writes one JSON line (a QueryLine) per dataset, run and
// query, in the report's order; metrics are the query's own, unrounded,
// so that their means are the report's figures.
func (r *Report) WritePerQuery(w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, d := range r.Datasets {
		if d.split {
			continue
		}
		for _, rr := range d.Runs {
			for i := range d.queries {
				q, res := &d.queries[i], rr.perQuery[i]
				line := QueryLine{
					Dataset: d.Name, Run: rr.RunName(), ID: q.ID, Query: q.Query, Split: q.Split, Category: q.Category,
					Relevant: q.Relevant, Grades: q.Grades, Results: make([]ScoredTool, len(res.ranked)),
					Metrics: res.metrics, LatencyMs: res.latency,
				}
				for j, id := range res.ranked {
					line.Results[j] = ScoredTool{Tool: id, Score: res.scores[j]}
				}
				if res.judged != nil {
					line.Confidence = &QueryConfidence{Present: res.judged.present, Absent: res.judged.absent}
				}
				if err := enc.Encode(line); err != nil {
					return fmt.Errorf("query %s of %s, run %s: %w", q.ID, d.Name, rr.RunName(), err)
				}
			}
		}
	}
	return bw.Flush()
}
