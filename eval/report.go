package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes the report in the JSON shape docs/eval.md documents
// ("toolscout eval --format json").
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes a readable table per dataset; markdown selects GitHub
// table syntax. The best value of each metric is marked with '*'.
func (r *Report) WriteTable(w io.Writer, metrics []string, markdown bool) error {
	for _, d := range r.Datasets {
		fmt.Fprintf(w, "\n%s%s: %d tools, %d queries\n\n", map[bool]string{true: "### ", false: "== "}[markdown], d.Name, d.Tools, d.Queries)
		cols := append([]string{"run", "embedder"}, metrics...)
		cols = append(cols, "p50 ms", "p95 ms")
		best := map[string]float64{}
		for _, m := range metrics {
			for _, run := range d.Runs {
				best[m] = max(best[m], run.Metrics[m])
			}
		}
		rows := [][]string{}
		for _, run := range d.Runs {
			row := []string{run.RunName(), run.Embedder}
			for _, m := range metrics {
				cell := fmt.Sprintf("%.3f", run.Metrics[m])
				if len(d.Runs) > 1 && run.Metrics[m] == best[m] {
					cell += "*"
				}
				row = append(row, cell)
			}
			row = append(row, fmt.Sprintf("%.2f", run.LatencyMs["p50"]), fmt.Sprintf("%.2f", run.LatencyMs["p95"]))
			rows = append(rows, row)
		}
		writeRows(w, cols, rows, markdown)
		if len(d.Runs) > 1 {
			fmt.Fprintln(w, "\n* = best in its column")
		}
		writeCategories(w, d, markdown)
		writeConfidence(w, d, markdown)
		if len(d.Comparisons) > 0 {
			fmt.Fprintf(w, "\nagainst %s (paired bootstrap, 95%% CI; * = interval excludes 0):\n\n", d.Comparisons[0].Baseline)
			var crow [][]string
			for _, c := range d.Comparisons {
				mark := ""
				if c.Significant {
					mark = "*"
				}
				crow = append(crow, []string{c.Run, c.Metric, fmt.Sprintf("%+.3f%s", c.Diff, mark), fmt.Sprintf("[%+.3f, %+.3f]", c.Low, c.High)})
			}
			writeRows(w, []string{"run", "metric", "diff", "95% CI"}, crow, markdown)
		}
	}
	return nil
}

func writeRows(w io.Writer, cols []string, rows [][]string, markdown bool) {
	if markdown {
		fmt.Fprintf(w, "| %s |\n", strings.Join(cols, " | "))
		fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(cols)))
		for _, r := range rows {
			fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
		}
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(cols, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

// WriteMisses lists the n worst queries of every run of every dataset.
func (r *Report) WriteMisses(w io.Writer, n int) {
	for _, d := range r.Datasets {
		for ri, run := range d.Runs {
			fmt.Fprintf(w, "\nworst %d queries of %s on %s:\n", n, run.RunName(), d.Name)
			for _, m := range d.Misses(ri, n) {
				fmt.Fprintf(w, "  %s ndcg@10=%.3f %q\n    relevant %v %s; above: %s\n", m.ID, m.NDCG, m.Query, m.Relevant, ranksText(m.RelevantRanks), strings.Join(m.Above, ", "))
			}
		}
	}
}

// writeCategories prints nDCG@10 per query category and run, for the
// whole dataset only (splits would repeat it).
func writeCategories(w io.Writer, d *DatasetReport, markdown bool) {
	if strings.Contains(d.Name, "/") || len(d.Runs) == 0 || len(d.Runs[0].Categories) == 0 {
		return
	}
	var names []string
	for name := range d.Runs[0].Categories {
		names = append(names, name)
	}
	sort.Strings(names)
	cols := []string{"category", "queries"}
	for _, run := range d.Runs {
		cols = append(cols, run.RunName())
	}
	var rows [][]string
	for _, name := range names {
		row := []string{name, fmt.Sprint(d.Runs[0].Categories[name].Queries)}
		for _, run := range d.Runs {
			row = append(row, fmt.Sprintf("%.3f", run.Categories[name].NDCG10))
		}
		rows = append(rows, row)
	}
	fmt.Fprintf(w, "\nnDCG@10 by query category:\n\n")
	writeRows(w, cols, rows, markdown)
}

// ranksText says where the relevant tools ranked: "at rank 4", "at ranks 2
// and not found", "not found" (0 = not in the results).
func ranksText(ranks []int) string {
	parts := make([]string, len(ranks))
	found := 0
	for i, r := range ranks {
		if r == 0 {
			parts[i] = "not found"
		} else {
			parts[i] = fmt.Sprint(r)
			found++
		}
	}
	switch {
	case found == 0:
		return "not found"
	case len(ranks) == 1:
		return "at rank " + parts[0]
	}
	return "at ranks " + strings.Join(parts, ", ")
}
