package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

type upfront struct {
	Way    string `json:"way"`
	Tools  int    `json:"tools_listed"`
	Tokens int    `json:"tokens"`
}

// report is the benchmark's output.
type report struct {
	Upfront  []upfront      `json:"upfront"`
	Tasks    []*taskReport  `json:"tasks"`
	Mistakes []mistake      `json:"mistakes"`
	Latency  *latencyReport `json:"latency,omitempty"`
	Failed   int            `json:"failed"`
}

// totals sums each way over the tasks.
func (r *report) totals() map[string]*result {
	out := map[string]*result{}
	for _, w := range ways {
		out[w] = &result{OK: true, Parts: map[string]int{}}
	}
	for _, t := range r.Tasks {
		for w, x := range t.Ways {
			o := out[w]
			o.Tokens += x.Tokens
			o.Upfront += x.Upfront
			o.Processed += x.Processed
			o.RoundTrips += x.RoundTrips
			o.WallMS += x.WallMS
			o.OK = o.OK && x.OK
			for p, n := range x.Parts {
				o.Parts[p] += n
			}
		}
	}
	return out
}

func (r *report) write(w io.Writer, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case "markdown":
	default:
		return fmt.Errorf("-format %q: use markdown or json", format)
	}
	fmt.Fprintln(w, "| way | tools listed | tools/list + instructions (tokens) |")
	fmt.Fprintln(w, "|---|---:|---:|")
	for _, u := range r.Upfront {
		fmt.Fprintf(w, "| %s | %d | %d |\n", u.Way, u.Tools, u.Tokens)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Per task: tokens that reached the model's context (tools/list, instructions and the request included) / model round trips / the calls' wall time in ms; then the tokens the model read over its turns (each turn reads the whole context so far); code ÷ meta compares code mode with the meta-tools step by step, on each measure.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| task | steps | eager | meta | code | code ÷ meta | read over the turns: eager / meta / code | code ÷ meta | code result |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---|")
	cell := func(x *result) string {
		if x == nil {
			return "–"
		}
		s := fmt.Sprintf("%d / %d / %.0f", x.Tokens, x.RoundTrips, x.WallMS)
		if !x.OK {
			s += " ✗"
		}
		return s
	}
	processed := func(t map[string]*result) string {
		var p []string
		for _, w := range ways {
			if x := t[w]; x != nil {
				p = append(p, fmt.Sprint(x.Processed))
			} else {
				p = append(p, "–")
			}
		}
		return strings.Join(p, " / ")
	}
	for _, t := range r.Tasks {
		code, meta := t.Ways["code"], t.Ways["meta"]
		ratio, pratio, ok := "–", "–", "–"
		if code != nil && meta != nil && meta.Tokens > 0 {
			ratio = fmt.Sprintf("%.0f%%", 100*float64(code.Tokens)/float64(meta.Tokens))
			pratio = fmt.Sprintf("%.0f%%", 100*float64(code.Processed)/float64(meta.Processed))
		}
		if code != nil {
			ok = "right"
			if !code.OK {
				ok = "wrong: " + strings.ReplaceAll(code.Note, "|", "\\|")
			}
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", t.ID, t.Steps, cell(t.Ways["eager"]), cell(meta), cell(code), ratio, processed(t.Ways), pratio, ok)
	}
	tot := r.totals()
	ratio, pratio := 0.0, 0.0
	if tot["meta"].Tokens > 0 {
		ratio = 100 * float64(tot["code"].Tokens) / float64(tot["meta"].Tokens)
		pratio = 100 * float64(tot["code"].Processed) / float64(tot["meta"].Processed)
	}
	fmt.Fprintf(w, "| **all %d** | | %s | %s | %s | **%.0f%%** | %s | **%.0f%%** | |\n", len(r.Tasks), cell(tot["eager"]), cell(tot["meta"]), cell(tot["code"]), ratio, processed(tot), pratio)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Tokens without tools/list and instructions (what the task itself added):")
	fmt.Fprintln(w)
	for _, way := range ways {
		x := tot[way]
		fmt.Fprintf(w, "- %s: %d\n", way, x.Tokens-x.Upfront)
	}
	fmt.Fprintln(w)
	writeParts(w, tot)
	if len(r.Mistakes) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| mistake | error.kind | what the answer says | actionable |")
		fmt.Fprintln(w, "|---|---|---|---|")
		for _, m := range r.Mistakes {
			kind := m.Kind
			if m.Limit != "" {
				kind += " (" + m.Limit + ")"
			}
			if kind == "" {
				kind = "(cut result)"
			}
			said := m.Message
			if len(said) > 160 {
				said = said[:160] + "…"
			}
			mark := "yes"
			if !m.OK {
				mark = "**no**"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", m.Name, kind, strings.ReplaceAll(strings.ReplaceAll(said, "|", "\\|"), "\n", " "), mark)
		}
	}
	if l := r.Latency; l != nil {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "Three fast calls (everything's echo, get-sum, echo) in one program, %d programs one after another: run_code p50 %.1f ms, of which the calls %.1f ms; overhead over the calls p50 **%.1f ms**, p99 **%.1f ms**.\n",
			l.Programs, l.ProgramP50, l.CallsP50, l.OverheadP50, l.OverheadP99)
	}
	return nil
}

// writeParts writes where each way's tokens went, over all the tasks:
// tokens and share of the way's total, one row a part.
func writeParts(w io.Writer, tot map[string]*result) {
	fmt.Fprintln(w, "Where the tokens went, over all the tasks (tokens, and share of the way's total):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| part | "+strings.Join(ways, " | ")+" |")
	fmt.Fprintln(w, "|---|"+strings.Repeat("---:|", len(ways)))
	for _, p := range append(partOrder, "all") {
		cells := make([]string, len(ways))
		for i, way := range ways {
			x := tot[way]
			n := x.Tokens
			if p != "all" {
				n = x.Parts[p]
			}
			switch {
			case x.Tokens == 0:
				cells[i] = "–"
			case p == "all":
				cells[i] = fmt.Sprintf("**%d**", n)
			default:
				cells[i] = fmt.Sprintf("%d (%.0f%%)", n, 100*float64(n)/float64(x.Tokens))
			}
		}
		fmt.Fprintf(w, "| %s | %s |\n", p, strings.Join(cells, " | "))
	}
}
