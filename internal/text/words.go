// Package text holds the word splitting that the index and the built-in
// embedder share, so both see the same words, and the string helpers of
// messages that search and the packages beside it (server/gateway,
// server/arguments, which must not import search) share: Quote, Closest.
package text

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SplitIdentifier splits a tool or parameter name into lower-case words at
// snake_case, kebab-case, dots, slashes, camelCase boundaries, and before
// an upper-case letter that follows a digit: "getUserByID" gives [get user by id], "s3_put-object.v2" gives
// [s3 put object v2], "HTMLParser" gives [html parser].
func SplitIdentifier(s string) []string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return splitRunes(s)
		}
	}
	return splitASCII(s)
}

// splitASCII is SplitIdentifier for ASCII text, byte by byte: the same
// rules without decoding runes or copying words (a word that is already
// lower case is a slice of s). The built-in embedder splits every
// document with it: 1 s of CPU for 100k tools through splitRunes.
func splitASCII(s string) []string {
	var words []string
	for start, end := nextASCIIWord(s, 0); start < end; start, end = nextASCIIWord(s, end) {
		words = append(words, strings.ToLower(s[start:end]))
	}
	return words
}

// nextASCIIWord returns the bounds of the first word of the ASCII text s
// at or after i, by SplitIdentifier's rules: a run of letters and digits,
// cut between a lower-case letter and an upper-case one, before the last
// of a run of upper-case letters followed by a lower-case one, and
// between a digit and an upper-case letter. start == end when there is
// none.
func nextASCIIWord(s string, i int) (start, end int) {
	lower := func(c byte) bool { return c >= 'a' && c <= 'z' }
	upper := func(c byte) bool { return c >= 'A' && c <= 'Z' }
	digit := func(c byte) bool { return c >= '0' && c <= '9' }
	for i < len(s) && !lower(s[i]) && !upper(s[i]) && !digit(s[i]) {
		i++
	}
	if start = i; i == len(s) {
		return start, start
	}
	for i++; i < len(s); i++ {
		c, prev := s[i], s[i-1]
		if !lower(c) && !upper(c) && !digit(c) ||
			lower(prev) && upper(c) ||
			upper(prev) && upper(c) && i+1 < len(s) && lower(s[i+1]) ||
			digit(prev) && upper(c) {
			break
		}
	}
	return start, i
}

// EachWord calls f with each word of s, as SplitIdentifier gives them,
// in order. The word is in a buffer that the next word overwrites: f
// must not keep it. buf is memory for that buffer (nil is fine); the
// buffer, grown as needed, is returned for the next call. For ASCII text
// nothing is allocated, so that a caller that looks each word up in a
// map (m[string(w)], which Go does not allocate for) splits a catalog's
// text without a string and a slice per word: a server's domain text
// splits every tool's name and summary as it starts.
func EachWord(s string, buf []byte, f func(w []byte)) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			for _, w := range splitRunes(s) {
				buf = append(buf[:0], w...)
				f(buf)
			}
			return buf
		}
	}
	for start, end := nextASCIIWord(s, 0); start < end; start, end = nextASCIIWord(s, end) {
		buf = buf[:0]
		for _, c := range []byte(s[start:end]) {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf = append(buf, c)
		}
		f(buf)
	}
	return buf
}

// splitRunes is SplitIdentifier for any text.
func splitRunes(s string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if len(cur) > 0 {
			prev := cur[len(cur)-1]
			switch {
			case unicode.IsLower(prev) && unicode.IsUpper(r):
				// fooBar
				flush()
			case unicode.IsUpper(prev) && unicode.IsUpper(r) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
				// HTMLParser: split before the P
				flush()
			case unicode.IsDigit(prev) && unicode.IsUpper(r):
				// EC2Instances → ec2 instances; s3, oauth2 and 2fa stay whole
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return words
}

// NameWords returns an identifier split into words and joined by spaces.
func NameWords(name string) string { return strings.Join(SplitIdentifier(name), " ") }

// TopWords sorts words by score, highest first, ties alphabetically, and
// keeps the first n.
func TopWords[N int | float64](words []string, score map[string]N, n int) []string {
	sort.Slice(words, func(i, j int) bool {
		if score[words[i]] != score[words[j]] {
			return score[words[i]] > score[words[j]]
		}
		return words[i] < words[j]
	})
	if len(words) > n {
		words = words[:n]
	}
	return words
}
