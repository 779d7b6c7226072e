package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/search"
)

// searchResultJSON is one result of `toolscout search --json`.
type searchResultJSON struct {
	Name        string              `json:"name"`
	Domain      string              `json:"domain"`
	Group       string              `json:"group"`
	Summary     string              `json:"summary"`
	Score       float64             `json:"score"`
	Confidence  *float64            `json:"confidence,omitempty"`
	Step        int                 `json:"step,omitempty"`
	Disabled    bool                `json:"disabled,omitempty"`
	Deprecated  index.Deprecation   `json:"deprecated,omitempty"`
	Explanation *search.Explanation `json:"explanation,omitempty"`
}

func runSearch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var g globalFlags
	fs := newFlagSet("search", "search [flags] QUERY\n\nRanks the catalog's tools for a request in natural language.", stderr)
	g.register(fs, "warn")
	mode := fs.String("mode", "hybrid", "ranking: keyword, semantic or hybrid")
	domain := fs.String("domain", "", "only tools of this domain")
	group := fs.String("group", "", "only tools of this group (with --domain)")
	limit := fs.Int("limit", 10, fmt.Sprintf("number of results (1-%d)", search.MaxLimit))
	explain := fs.Bool("explain", false, "show each result's rank and score in both lists")
	asJSON := fs.Bool("json", false, "print JSON")
	withDisabled := fs.Bool("include-disabled", false, "rank disabled tools too, marked (as discover_tools' include_disabled); without it they are left out")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		fs.Usage()
		return usagef("search needs a QUERY")
	}
	m, err := search.ParseMode(*mode)
	if err != nil {
		return usageError{err}
	}
	if search.CheckLimit(*limit) != nil {
		// Checked before the index is opened: a typo costs nothing.
		return usagef("--limit %d: use 1 to %d", *limit, search.MaxLimit)
	}
	a, _, err := g.openApp(ctx, stderr, true)
	if err != nil {
		return err
	}
	defer a.Close()
	req := search.Request{
		Query: strings.Join(pos, " "), Mode: m, Domain: *domain, Group: *group, Limit: *limit, Explain: *explain,
	}
	if !*withDisabled {
		for _, t := range a.eng.Catalog().Tools() {
			if t.Disabled {
				req.Exclude = append(req.Exclude, t.QualifiedName)
			}
		}
	}
	resp, err := a.eng.Search(ctx, req)
	if err != nil {
		return err
	}
	if *asJSON {
		out := struct {
			Query   string             `json:"query"`
			Mode    search.Mode        `json:"search_mode"`
			Emb     string             `json:"embedder"`
			Notice  string             `json:"notice,omitempty"`
			Steps   []string           `json:"steps,omitempty"`
			Conf    *search.Confidence `json:"confidence,omitempty"`
			Results []searchResultJSON `json:"results"`
		}{resp.Query, resp.Mode, resp.Embedder, resp.Notice, resp.Steps, resp.Confidence, []searchResultJSON{}}
		for _, r := range resp.Results {
			j := searchResultJSON{
				Name: r.Tool.QualifiedName, Domain: r.Tool.Domain, Group: r.Tool.Group,
				Summary: r.Tool.Summary, Score: r.Score, Step: r.Step, Disabled: r.Tool.Disabled,
				Deprecated: index.Deprecation(r.Tool.Deprecated), Explanation: r.Explanation,
			}
			if resp.Confidence != nil {
				j.Confidence = &r.Confidence
			}
			out.Results = append(out.Results, j)
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(stdout, "mode %s, embedder %s", resp.Mode, resp.Embedder)
	if c := resp.Confidence; c != nil {
		fmt.Fprintf(stdout, ", confidence %.2f%s", c.Value, map[bool]string{true: " (low: no tool may fit)", false: ""}[c.Low])
	}
	fmt.Fprintln(stdout)
	if resp.Notice != "" {
		fmt.Fprintf(stdout, "notice: %s\n", resp.Notice)
	}
	if len(resp.Results) == 0 {
		fmt.Fprintln(stdout, "no matching tools")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tTOOL\tGROUP\tSCORE\tSUMMARY")
	for i, r := range resp.Results {
		name := r.Tool.QualifiedName
		if r.Tool.Disabled {
			name += " (disabled)"
		}
		if r.Tool.Deprecated != "" {
			name += " (deprecated)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.4f\t%s\n", i+1, name, r.Tool.Group, r.Score, r.Tool.Summary)
		if x := r.Explanation; x != nil {
			fmt.Fprintf(tw, "\t\t\t\t  keyword rank %d (bm25 %.3f), semantic rank %d (cos %.3f)%s\n",
				x.KeywordRank, x.KeywordScore, x.SemanticRank, x.SemanticScore, map[bool]string{true: ", exact name", false: ""}[x.ExactName])
			if len(x.BM25) > 0 {
				var terms []string
				for _, ts := range x.BM25[:min(3, len(x.BM25))] {
					terms = append(terms, fmt.Sprintf("%s:%s %.3f", ts.Field, ts.Term, ts.Score))
				}
				fmt.Fprintf(tw, "\t\t\t\t  matched %s\n", strings.Join(terms, ", "))
			}
		}
	}
	return tw.Flush()
}
