package text

import (
	"strings"

	porterstemmer "github.com/blevesearch/go-porterstemmer"
)

// Stem returns the Porter stem of a lower-case word; words of three letters
// or fewer are kept as they are ("api", "git", "s3").
func Stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	return porterstemmer.StemString(w)
}

var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(StopwordList) {
		m[w] = true
	}
	return m
}()

// StopwordList is the built-in embedder's stop words, shared with the
// generator of its word vectors so that both skip the same words.
const StopwordList = `a an the and or of to in on for from by with at as is are was were be been
		it its this that these those i me my we our you your he she they them their what which who whom
		do does did can could would should will shall may might must please want need like just also
		all any some into about over than then there here so if not no yes up out get s t called named`

// Stopword reports whether w (lower case) carries no meaning for ranking.
func Stopword(w string) bool { return stopwords[w] }
