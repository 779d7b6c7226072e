package text

import (
	"fmt"
	"unicode/utf8"
)

// Prefix returns the longest prefix of s of at most n bytes that ends at
// a rune boundary, so that a cut never splits a UTF-8 sequence.
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := max(n, 0)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// Quote returns s quoted for an error message, cut to at most n bytes
// (at a rune boundary) with "…" and its size when longer, so that errors
// never echo a huge input.
func Quote(s string, n int) string {
	if len(s) <= n {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q… (%d bytes)", Prefix(s, n), len(s))
}
