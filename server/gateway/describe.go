package gateway

import (
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/toolscout/toolscout/index"
	txt "github.com/toolscout/toolscout/internal/text"
)

// maxDescription bounds a derived domain description, in bytes.
const maxDescription = 240

// describeUpstream writes a description for an upstream whose config gives
// none, from what the server says about itself: its title (or its name in
// words: "memory-server" → "memory server"), the first sentence of its
// instructions, and the words most of its tools use ("Tools about
// entities, relations, knowledge graph."). A bare name says too little to
// rank by; the tools' own vocabulary says what the server is for.
func describeUpstream(title, instructions string, tools []index.ToolSpec, freq WordFrequency) string {
	var parts []string
	if t := strings.TrimSpace(title); t != "" {
		if !strings.ContainsAny(t, " ") {
			t = txt.NameWords(t)
		}
		parts = append(parts, t)
	}
	if s := firstSentence(instructions); s != "" {
		parts = append(parts, s)
	}
	if ws := commonWords(tools, 6, freq); len(ws) > 0 {
		parts = append(parts, "Tools about "+strings.Join(ws, ", "))
	}
	var b strings.Builder
	for _, p := range parts {
		p = strings.TrimRight(strings.TrimSpace(p), ".")
		if b.Len()+len(p)+2 > maxDescription {
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p + ".")
	}
	return b.String()
}

// firstSentence returns the first sentence of s on one line, or "" when it
// is longer than half the description budget.
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.IndexAny(s, ".!?"); i >= 0 {
		s = s[:i+1]
	}
	if len(s) > maxDescription/2 {
		return ""
	}
	return s
}

// commonWords returns up to n words that characterise the tools: words of
// their names first (a tool's name states what it does; descriptions
// repeat boilerplate such as "only works within allowed directories"), and
// description words when the names give fewer than three. A word counts
// when at least two tools use it and, with more than two tools, not all of
// them (a word every tool has, like the server's name, tells nothing).
// Words rank by (1 + log of the number of tools using them) times their
// rarity in general software text, log(1/p), p being the word's frequency
// in the built-in word vectors' corpus (freq: without it every word is
// as rare); ties go alphabetically.
func commonWords(tools []index.ToolSpec, n int, freq WordFrequency) []string {
	words := rankWords(tools, func(t index.ToolSpec) string { return t.Name }, n, freq)
	if len(words) < 3 {
		for _, w := range rankWords(tools, func(t index.ToolSpec) string { return t.Name + " " + t.Description }, n, freq) {
			if len(words) < n && !slices.Contains(words, w) {
				words = append(words, w)
			}
		}
	}
	return words
}

func rankWords(tools []index.ToolSpec, textOf func(index.ToolSpec) string, n int, freq WordFrequency) []string {
	df := map[string]int{}
	form := map[string]string{}
	for _, t := range tools {
		seen := map[string]bool{}
		for _, w := range txt.SplitIdentifier(textOf(t)) {
			if len(w) < 3 || txt.Stopword(w) || !unicode.IsLetter(rune(w[0])) {
				continue
			}
			st := txt.Stem(w)
			if seen[st] {
				continue
			}
			seen[st] = true
			df[st]++
			if f, ok := form[st]; !ok || len(w) < len(f) {
				form[st] = w
			}
		}
	}
	var words []string
	weight := map[string]float64{}
	for st, c := range df {
		if c >= 2 && (len(tools) <= 2 || c < len(tools)) {
			words = append(words, st)
			p, ok := freq.of(st)
			if !ok || p <= 0 {
				p = 1e-7 // rarer than any word of the vocabulary
			}
			weight[st] = (1 + math.Log(float64(c))) * math.Log(1/p)
		}
	}
	words = txt.TopWords(words, weight, n)
	for i, st := range words {
		words[i] = form[st]
	}
	return words
}

// WordFrequency gives a word stem's relative frequency in general text
// and whether the stem is known there (search.WordFrequency, which cmd
// passes in Options): rare words say more of what a server is for. The
// gateway does not reach ranking knowledge itself.
type WordFrequency func(stem string) (float64, bool)

// of is f(stem), or unknown without f.
func (f WordFrequency) of(stem string) (float64, bool) {
	if f == nil {
		return 0, false
	}
	return f(stem)
}
