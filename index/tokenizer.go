package index

import (
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/registry"
)

// wordsTokenizerName is the Bleve tokenizer type of the text analyzer:
// the tokens Bleve's regexp tokenizer makes with `[\p{L}\p{N}]+` (the
// analyzer's tokenizer until toolscout 0.3, still what indexes written
// then use), without a regular expression. Indexing 100k tools spent
// 2.6 s of CPU in that tokenizer: the expression's matcher, and for
// every token a second expression (ideographs) and a strconv.ParseFloat
// whose error allocates (180 MB). The tokens, offsets, positions and
// types are the same (TestWordsTokenizerMatchesRegexp).
const wordsTokenizerName = "toolscout_letters_numbers"

func init() {
	if err := registry.RegisterTokenizer(wordsTokenizerName, func(map[string]any, *registry.Cache) (analysis.Tokenizer, error) {
		return wordsTokenizer{}, nil
	}); err != nil {
		panic(err)
	}
}

type wordsTokenizer struct{}

// Tokenize returns the maximal runs of letters and numbers (Unicode
// categories L and N) of input; invalid UTF-8 separates them, as it does
// for the regular expression.
func (wordsTokenizer) Tokenize(input []byte) analysis.TokenStream {
	var rv analysis.TokenStream
	start := -1
	for i := 0; i <= len(input); {
		r, size := utf8.RuneError, 1
		if i < len(input) {
			if input[i] < utf8.RuneSelf {
				r = rune(input[i])
			} else {
				r, size = utf8.DecodeRune(input[i:])
			}
		}
		word := i < len(input) && (unicode.IsLetter(r) || unicode.IsNumber(r))
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			term := input[start:i]
			rv = append(rv, &analysis.Token{Term: term, Start: start, End: i, Position: len(rv) + 1, Type: tokenType(term)})
			start = -1
		}
		i += size
	}
	return rv
}

// tokenType is the type Bleve's regexp tokenizer gives a token of
// letters and numbers: Ideographic if any of its characters is Han,
// Hangul, Hiragana or Katakana, else Numeric if strconv.ParseFloat reads
// it, else AlphaNumeric. ParseFloat can read such a token only if it
// starts with an ASCII digit or is "inf", "infinity" or "nan" in any
// case, so it is called only then.
func tokenType(term []byte) analysis.TokenType {
	ascii := true
	for _, b := range term {
		if b >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if !ascii {
		for i := 0; i < len(term); {
			r, size := utf8.DecodeRune(term[i:])
			if unicode.In(r, unicode.Han, unicode.Hangul, unicode.Hiragana, unicode.Katakana) {
				return analysis.Ideographic
			}
			i += size
		}
	}
	switch c := term[0]; {
	case c >= '0' && c <= '9', c == 'i', c == 'I', c == 'n', c == 'N':
		if _, err := strconv.ParseFloat(string(term), 64); err == nil {
			return analysis.Numeric
		}
	}
	return analysis.AlphaNumeric
}
