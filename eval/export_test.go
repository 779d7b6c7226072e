package eval

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/search"
)

// tinyReport evaluates every mode, with confidence, on a dataset of six
// tools (two of them alike word for word, so that scores tie) and four
// queries: one graded, one with two tools, one whose id has a space, one
// that no keyword matches.
func tinyReport(t *testing.T) *Report {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tiny set")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(`{"domains":[
	 {"name":"pagerduty","description":"On-call","tools":[
	  {"name":"list_oncalls","description":"List who is on call for a schedule.","inputSchema":{"type":"object"}},
	  {"name":"create_incident","description":"Trigger an incident for a service.","inputSchema":{"type":"object"}}]},
	 {"name":"weather","description":"Forecasts","tools":[
	  {"name":"get_forecast","description":"Get the weather forecast for a city.","inputSchema":{"type":"object"}},
	  {"name":"get_alerts","description":"Get severe weather alerts for a region.","inputSchema":{"type":"object"}}]},
	 {"name":"mirror_a","description":"Mirror","tools":[
	  {"name":"fetch_page","description":"Fetch a web page by its address.","inputSchema":{"type":"object"}}]},
	 {"name":"mirror_b","description":"Mirror","tools":[
	  {"name":"fetch_page","description":"Fetch a web page by its address.","inputSchema":{"type":"object"}}]}]}`), 0o644)
	os.WriteFile(filepath.Join(dir, "queries.jsonl"), []byte(`{"id":"q1","query":"who is on call","relevant":["pagerduty/list_oncalls"],"grades":{"pagerduty/list_oncalls":2}}
{"id":"q2","query":"trigger an incident when the weather alerts say a storm comes","relevant":["pagerduty/create_incident","weather/get_alerts"]}
{"id":"query 3","query":"fetch the web page at this address","relevant":["mirror_b/fetch_page"]}
{"id":"q4","query":"zzyzx qwxv","relevant":["weather/get_forecast"]}
`), 0o644)
	ds, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Evaluate(context.Background(), []*Dataset{ds}, Options{
		Runs:       append(ModeRuns([]search.Mode{BM25, search.Keyword, search.Semantic}), RunSpec{Label: "hybrid+feedback", Mode: search.Hybrid}),
		Embedder:   embed.NewBuiltin(embed.BuiltinOptions{}),
		Confidence: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// trecLine is one parsed line of a TREC run file.
type trecLine struct {
	qid, doc, tag string
	rank          int
	score         float64
}

// TestTRECExport reads the TREC files back as trec_eval would: the names
// follow the scheme, every line parses, ranks run 1..n, scores strictly
// fall (so ordering by score, ties by docid, keeps the run's order), the
// qrels hold every relevant tool with its grade, and nDCG@10 computed
// from the files alone is the report's per-query figure.
func TestTRECExport(t *testing.T) {
	rep := tinyReport(t)
	d := rep.Datasets[0]
	files := rep.TRECFiles("out/x")
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	want := []string{"out/x.tiny_set.qrels", "out/x.tiny_set.bm25.run", "out/x.tiny_set.keyword.run", "out/x.tiny_set.semantic.run", "out/x.tiny_set.hybrid+feedback.run"}
	if !slices.Equal(paths, want) {
		t.Fatalf("TRECFiles = %q, want %q", paths, want)
	}
	write := func(f ExportFile) string {
		var buf bytes.Buffer
		if err := f.Write(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}

	// qrels
	qrels := map[string]map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(write(files[0])), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || f[1] != "0" {
			t.Fatalf("qrels line %q: want qid 0 docid grade", line)
		}
		g, err := strconv.ParseFloat(f[3], 64)
		if err != nil {
			t.Fatalf("qrels line %q: %v", line, err)
		}
		if qrels[f[0]] == nil {
			qrels[f[0]] = map[string]float64{}
		}
		qrels[f[0]][f[2]] = g
	}
	wantQrels := map[string]map[string]float64{
		"q1":      {"pagerduty/list_oncalls": 2},
		"q2":      {"pagerduty/create_incident": 1, "weather/get_alerts": 1},
		"query_3": {"mirror_b/fetch_page": 1},
		"q4":      {"weather/get_forecast": 1},
	}
	if got, _ := json.Marshal(qrels); string(got) != mustJSON(t, wantQrels) {
		t.Errorf("qrels = %s, want %s", got, mustJSON(t, wantQrels))
	}

	ties := 0
	for ri, f := range files[1:] {
		run := d.Runs[ri]
		byQuery := map[string][]trecLine{}
		for _, line := range strings.Split(strings.TrimSpace(write(f)), "\n") {
			fs := strings.Fields(line)
			if len(fs) != 6 || fs[1] != "Q0" {
				t.Fatalf("%s: line %q: want qid Q0 docid rank score run", f.Path, line)
			}
			rank, err1 := strconv.Atoi(fs[3])
			score, err2 := strconv.ParseFloat(fs[4], 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: line %q: rank %v, score %v", f.Path, line, err1, err2)
			}
			if fs[5] != fileName(run.RunName()) {
				t.Errorf("%s: run name %q, want %q", f.Path, fs[5], fileName(run.RunName()))
			}
			byQuery[fs[0]] = append(byQuery[fs[0]], trecLine{fs[0], fs[2], fs[5], rank, score})
		}
		for i, q := range d.queries {
			lines := byQuery[trecField(q.ID)]
			res := run.perQuery[i]
			if len(lines) != len(res.ranked) {
				t.Fatalf("%s %s: %d lines, want %d", f.Path, q.ID, len(lines), len(res.ranked))
			}
			for j, l := range lines {
				if l.rank != j+1 || l.doc != res.ranked[j] {
					t.Errorf("%s %s line %d: rank %d %s, want %d %s", f.Path, q.ID, j, l.rank, l.doc, j+1, res.ranked[j])
				}
				if j > 0 && !(l.score < lines[j-1].score) {
					t.Errorf("%s %s: score %g at rank %d not below %g", f.Path, q.ID, l.score, l.rank, lines[j-1].score)
				}
				if j > 0 && res.scores[j] == res.scores[j-1] {
					ties++
				}
				if math.Abs(l.score-res.scores[j]) > 1e-9*max(1, math.Abs(res.scores[j])) {
					t.Errorf("%s %s: score %g, want the run's %g", f.Path, q.ID, l.score, res.scores[j])
				}
			}
			// As trec_eval orders: by score, ties by docid (descending).
			sorted := slices.Clone(lines)
			sort.SliceStable(sorted, func(a, b int) bool {
				if sorted[a].score != sorted[b].score {
					return sorted[a].score > sorted[b].score
				}
				return sorted[a].doc > sorted[b].doc
			})
			var docs []string
			for _, l := range sorted {
				docs = append(docs, l.doc)
			}
			judged := &Query{Relevant: keys(qrels[trecField(q.ID)]), Grades: qrels[trecField(q.ID)]}
			if got, want := NDCGAt(judged, docs, 10), res.metrics["ndcg@10"]; math.Abs(got-want) > 1e-12 {
				t.Errorf("%s %s: nDCG@10 from the files %g, report %g", f.Path, q.ID, got, want)
			}
		}
	}
	if ties == 0 {
		t.Error("no run has tied scores: the test cannot show that ties keep their order")
	}
}

func keys(m map[string]float64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPerQueryExport: one line per run and query, with the query's
// labels, its ranked tools and scores, and metrics whose means are the
// report's.
func TestPerQueryExport(t *testing.T) {
	rep := tinyReport(t)
	d := rep.Datasets[0]
	var buf bytes.Buffer
	if err := rep.WritePerQuery(&buf); err != nil {
		t.Fatal(err)
	}
	sums := map[string]map[string]float64{}
	n := 0
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var l QueryLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %d %q: %v", n+1, sc.Text(), err)
		}
		run, q := d.Runs[n/len(d.queries)], d.queries[n%len(d.queries)]
		res := run.perQuery[n%len(d.queries)]
		if l.Dataset != "tiny set" || l.Run != run.RunName() || l.ID != q.ID || l.Query != q.Query || !slices.Equal(l.Relevant, q.Relevant) {
			t.Errorf("line %d = %+v, want run %s, query %s", n+1, l, run.RunName(), q.ID)
		}
		if len(l.Results) != len(res.ranked) {
			t.Fatalf("line %d: %d results, want %d", n+1, len(l.Results), len(res.ranked))
		}
		for j, r := range l.Results {
			if r.Tool != res.ranked[j] || r.Score != res.scores[j] {
				t.Errorf("line %d result %d = %+v, want %s %g", n+1, j, r, res.ranked[j], res.scores[j])
			}
		}
		if (l.Confidence != nil) != (run.Mode != BM25) {
			t.Errorf("line %d (%s): confidence %+v", n+1, run.RunName(), l.Confidence)
		}
		if sums[l.Run] == nil {
			sums[l.Run] = map[string]float64{}
		}
		for k, v := range l.Metrics {
			sums[l.Run][k] += v
		}
		n++
	}
	if n != len(d.Runs)*len(d.queries) {
		t.Fatalf("%d lines, want %d runs × %d queries", n, len(d.Runs), len(d.queries))
	}
	for _, run := range d.Runs {
		for k, want := range run.Metrics {
			if got := round4(sums[run.RunName()][k] / float64(len(d.queries))); got != want {
				t.Errorf("%s %s: mean of the lines %g, report %g", run.RunName(), k, got, want)
			}
		}
	}
	if sums["hybrid+feedback"]["ndcg@10"] == 0 {
		t.Error("hybrid+feedback: no nDCG in the lines")
	}
}

func TestExportNames(t *testing.T) {
	tests := []struct{ in, file, field string }{
		{"hybrid+feedback", "hybrid+feedback", "hybrid+feedback"},
		{"semantic nomic-embed-text:v1.5", "semantic_nomic-embed-text_v1.5", "semantic_nomic-embed-text:v1.5"},
		{"a/b\tc", "a_b_c", "a/b_c"},
		{"", "_", "_"},
	}
	for _, tc := range tests {
		if got := fileName(tc.in); got != tc.file {
			t.Errorf("fileName(%q) = %q, want %q", tc.in, got, tc.file)
		}
		if got := trecField(tc.in); got != tc.field {
			t.Errorf("trecField(%q) = %q, want %q", tc.in, got, tc.field)
		}
	}
	// Names that clean alike still get files of their own.
	rep := &Report{Datasets: []*DatasetReport{
		{Name: "a b", Runs: []*RunReport{{Mode: search.Hybrid}, {Label: "hybrid"}}},
		{Name: "a_b", Runs: []*RunReport{{Mode: search.Keyword}}},
		{Name: "a b/dev", split: true},
	}}
	var paths []string
	for _, f := range rep.TRECFiles("p") {
		paths = append(paths, f.Path)
	}
	want := []string{"p.a_b.qrels", "p.a_b.hybrid.run", "p.a_b.hybrid-2.run", "p.a_b-2.qrels", "p.a_b-2.keyword.run"}
	if !slices.Equal(paths, want) {
		t.Errorf("TRECFiles = %q, want %q", paths, want)
	}
	// Ids that clean alike too.
	d := &DatasetReport{queries: []Query{{ID: "a b"}, {ID: "a_b"}, {ID: "c"}}}
	if got := d.trecIDs(); !slices.Equal(got, []string{"a_b", "a_b-2", "c"}) {
		t.Errorf("trecIDs = %q", got)
	}
	if got := trecScores([]float64{3, 2, 2, 2, 5, 1}); !(got[0] == 3 && got[1] == 2 && got[2] < 2 && got[3] < got[2] && got[4] < got[3] && got[5] == 1) {
		t.Errorf("trecScores = %v, want strictly falling, untied scores kept", got)
	}
}
