package search

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolscout/toolscout/internal/text"
)

// Bounds on a request, so that one request's cost stays bounded whatever
// a client sends (BENCHMARKS.md measures the largest accepted request).
const (
	// MaxQueryBytes and MaxQueryWords bound the query that is ranked;
	// longer queries are cut at a word boundary, with a notice.
	MaxQueryBytes = 4096
	MaxQueryWords = 400
	// MaxNameBytes bounds a domain, group or tool name: longer ones are
	// rejected (real names are at most 64 bytes).
	MaxNameBytes = 256
	// maxSentences bounds the sentences searched one by one.
	maxSentences = 8
)

// boundQuery cuts q to MaxQueryWords words and MaxQueryBytes bytes, at a
// word boundary, and says so when it cut.
func boundQuery(q string) (string, string) {
	if !utf8.ValidString(q) {
		q = strings.ToValidUTF8(q, " ")
	}
	orig := len(q)
	cut := false
	words := 0
	inWord := false
	for i, r := range q {
		if i >= MaxQueryBytes {
			cut = true
			q = q[:i]
			break
		}
		if unicode.IsSpace(r) {
			inWord = false
			continue
		}
		if !inWord {
			inWord = true
			words++
			if words > MaxQueryWords {
				cut = true
				q = q[:i]
				break
			}
		}
	}
	if !cut {
		return q, ""
	}
	// Do not end inside a word that the cut split.
	if i := strings.LastIndexFunc(q, unicode.IsSpace); i > 0 && len(q) >= MaxQueryBytes {
		q = q[:i]
	}
	q = strings.TrimSpace(q)
	return q, fmt.Sprintf("query cut to its first %d words (%d of %d bytes): rank with a shorter description of the task", len(strings.Fields(q)), len(q), orig)
}

// Quote returns s quoted for an error message, cut to at most n bytes
// (at a rune boundary) with "…" when longer, so that errors never echo a
// huge input (internal/text's Quote).
func Quote(s string, n int) string { return text.Quote(s, n) }

// checkName rejects an over-long domain, group or tool name.
func checkName(kind, s string) error {
	if len(s) > MaxNameBytes {
		return invalidf("%s %s is longer than %d bytes: no %s is", kind, Quote(s, 100), MaxNameBytes, kind)
	}
	return nil
}
