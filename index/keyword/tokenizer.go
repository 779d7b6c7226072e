package keyword

import (
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/token/camelcase"
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

// Both are registered with Bleve by type name: an index's stored mapping
// names them, and opening it looks them up.
func init() {
	err := registry.RegisterTokenizer(wordsTokenizerName, func(map[string]any, *registry.Cache) (analysis.Tokenizer, error) {
		return wordsTokenizer{}, nil
	})
	if err == nil {
		err = registry.RegisterTokenFilter(camelFilterName, func(map[string]any, *registry.Cache) (analysis.TokenFilter, error) {
			return camelFilter{}, nil
		})
	}
	if err != nil {
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

// camelFilterName is the Bleve token filter type of the text analyzer:
// Bleve's camelCase filter ("readFile" → "read", "File"; "HTTPServer" →
// "HTTP", "Server"; "v2" → "v", "2") without its allocations. Bleve's
// decodes every token into runes, makes a parser with two buffers per
// token and re-encodes each part (about 800 MB allocated for 100k tools);
// this one returns the parts as slices of the token. Terms, offsets and
// positions are the same (TestCamelFilterMatchesBleve).
const camelFilterName = "toolscout_camel_case"

type camelFilter struct{}

// The classes of camelFilter, as Bleve's camelCase states: a run of
// lower-case letters, of upper-case letters (or one capital and the
// lower-case letters after it), of numbers, or of anything else
// (letters without case, such as ideographs, included).
const (
	camelLower = iota
	camelUpper
	camelNumber
	camelOther
)

func camelClass(r rune) int {
	switch {
	case unicode.IsLower(r):
		return camelLower
	case unicode.IsUpper(r):
		return camelUpper
	case unicode.IsNumber(r):
		return camelNumber
	}
	return camelOther
}

func (camelFilter) Filter(input analysis.TokenStream) analysis.TokenStream {
	for _, tok := range input {
		if !utf8.Valid(tok.Term) {
			// Bleve's filter turns invalid bytes into U+FFFD, which moves
			// offsets: let it do so. The words tokenizer never makes such
			// tokens.
			return camelcase.NewCamelCaseFilter().Filter(input)
		}
	}
	rv := make(analysis.TokenStream, 0, len(input))
	pos := 1
	for _, tok := range input {
		term, index := tok.Term, tok.Start
		emit := func(part []byte) {
			rv = append(rv, &analysis.Token{Term: part, Position: pos, Start: index, End: index + len(part)})
			pos++
			index += len(part)
		}
		start, class := 0, camelOther
		// An upper-case run is decided by its second letter: all capitals
		// ("HTTP"), or one capital and lower case ("Server").
		started, capitals := false, false
		for i := 0; i < len(term); {
			r, w := utf8.DecodeRune(term[i:])
			if i == 0 {
				class = camelClass(r)
				i += w
				continue
			}
			member := false
			switch class {
			case camelLower:
				member = unicode.IsLower(r)
			case camelNumber:
				member = unicode.IsNumber(r)
			case camelOther:
				member = camelClass(r) == camelOther
			case camelUpper:
				upper := unicode.IsUpper(r)
				if upper || unicode.IsLower(r) {
					// A capital followed by a lower-case letter starts
					// the next part ("HTTPServer": "HTTP", "Server").
					nextLower := false
					if i+w < len(term) {
						next, _ := utf8.DecodeRune(term[i+w:])
						nextLower = unicode.IsLower(next)
					}
					switch {
					case upper && nextLower:
					case !started:
						started, capitals, member = true, upper, true
					default:
						member = capitals == upper
					}
				}
			}
			if !member {
				emit(term[start:i])
				start, class, started = i, camelClass(r), false
			}
			i += w
		}
		emit(term[start:])
	}
	return rv
}
