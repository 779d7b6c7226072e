package text

import (
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"
)

// Closest returns up to n of names within edit distance 3 of s (compared
// in lower case), closest first: the did-you-mean of a misspelt name.
func Closest(s string, names []string, n int) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, name := range names {
		if d := levenshtein.ComputeDistance(strings.ToLower(s), name); d <= 3 {
			cs = append(cs, cand{name, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].name)
	}
	return out
}
