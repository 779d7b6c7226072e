package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/toolscout/toolscout/search"
)

// searchResultJSON is one result of `toolscout search --json`.
type searchResultJSON struct {
	Name        string              `json:"name"`
	Domain      string              `json:"domain"`
	Group       string              `json:"group"`
	Summary     string              `json:"summary"`
	Score       float64             `json:"score"`
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
	resp, err := a.eng.Search(ctx, search.Request{
		Query: strings.Join(pos, " "), Mode: m, Domain: *domain, Group: *group, Limit: *limit, Explain: *explain,
	})
	if err != nil {
		return err
	}
	if *asJSON {
		out := struct {
			Query   string             `json:"query"`
			Mode    search.Mode        `json:"search_mode"`
			Emb     string             `json:"embedder"`
			Notice  string             `json:"notice,omitempty"`
			Results []searchResultJSON `json:"results"`
		}{resp.Query, resp.Mode, resp.Embedder, resp.Notice, []searchResultJSON{}}
		for _, r := range resp.Results {
			out.Results = append(out.Results, searchResultJSON{
				Name: r.Tool.QualifiedName, Domain: r.Tool.Domain, Group: r.Tool.Group,
				Summary: r.Tool.Summary, Score: r.Score, Explanation: r.Explanation,
			})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(stdout, "mode %s, embedder %s\n", resp.Mode, resp.Embedder)
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
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.4f\t%s\n", i+1, r.Tool.QualifiedName, r.Tool.Group, r.Score, r.Tool.Summary)
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
