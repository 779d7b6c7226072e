package search

import (
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/text"
)

// Suggest returns up to n qualified names of tools whose names are closest
// to name by edit distance (over qualified names, bare names and name
// words), for "did you mean" answers to unknown tool names.
func Suggest(cat *index.Catalog, name string, n int) []string {
	type cand struct {
		id   string
		dist float64
	}
	lname := strings.ToLower(strings.TrimSpace(name))
	if lname == "" || n <= 0 {
		return nil
	}
	qWords := index.SplitIdentifier(name)
	var cs []cand
	for _, t := range cat.Tools() {
		d := float64(min(
			levenshtein.ComputeDistance(lname, strings.ToLower(t.Name)),
			levenshtein.ComputeDistance(lname, strings.ToLower(t.QualifiedName)),
		))
		// Shared name words pull a candidate closer: "issue_create" and
		// "create_issue" are far apart by edits but share every word.
		tWords := index.SplitIdentifier(t.Name)
		shared := 0
		for _, w := range qWords {
			for _, tw := range tWords {
				if w == tw {
					shared++
					break
				}
			}
		}
		if len(qWords) > 0 && shared == len(qWords) && len(tWords) == len(qWords) {
			d = min(d, 1)
		} else if shared > 0 {
			d -= float64(shared) * 1.5
		}
		limit := max(2.0, float64(len(lname))/2)
		if d <= limit {
			cs = append(cs, cand{t.QualifiedName, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].dist != cs[j].dist {
			return cs[i].dist < cs[j].dist
		}
		return cs[i].id < cs[j].id
	})
	out := make([]string, 0, n)
	for _, c := range cs {
		if len(out) == n {
			break
		}
		out = append(out, c.id)
	}
	return out
}

// Closest returns up to n of names within edit distance 3 of s, closest
// first: the did-you-mean of a misspelt name (internal/text's Closest,
// which the packages below search use).
func Closest(s string, names []string, n int) []string { return text.Closest(s, names, n) }

func closest(s string, names []string, n int) []string { return text.Closest(s, names, n) }
