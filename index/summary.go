package index

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxSummary is the longest summary Summarize returns, in characters.
const MaxSummary = 80

// Summarize derives a one-line summary of at most 80 characters from a
// description: its first sentence when that fits, otherwise the text cut at
// the last word boundary with an ellipsis.
func Summarize(desc string) string {
	// First paragraph, white space folded.
	if i := strings.Index(desc, "\n\n"); i >= 0 {
		desc = desc[:i]
	}
	s := strings.Join(strings.Fields(desc), " ")
	if s == "" {
		return ""
	}
	if end := sentenceEnd(s); end > 0 && utf8.RuneCountInString(s[:end]) <= MaxSummary {
		return s[:end]
	}
	if utf8.RuneCountInString(s) <= MaxSummary {
		return s
	}
	// Cut at the last space that leaves room for the ellipsis.
	runes := []rune(s)
	cut := runes[:MaxSummary-1]
	if i := lastSpace(cut); i > MaxSummary/2 {
		cut = cut[:i]
	}
	return strings.TrimRightFunc(string(cut), func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }) + "…"
}

// sentenceEnd returns the byte offset just after the first sentence-ending
// period, question or exclamation mark that is followed by a space, or 0.
func sentenceEnd(s string) int {
	for i := 0; i < len(s)-1; i++ {
		switch s[i] {
		case '.', '!', '?':
			if s[i+1] == ' ' && !abbreviation(s[:i]) {
				return i + 1
			}
		}
	}
	return 0
}

// abbreviation reports whether the word before a period is a common
// abbreviation such as "e.g" or "i.e".
func abbreviation(before string) bool {
	w := before[strings.LastIndexByte(before, ' ')+1:]
	switch strings.ToLower(w) {
	case "e.g", "i.e", "etc", "vs", "approx", "incl":
		return true
	}
	return false
}

func lastSpace(r []rune) int {
	for i := len(r) - 1; i >= 0; i-- {
		if r[i] == ' ' {
			return i
		}
	}
	return -1
}
