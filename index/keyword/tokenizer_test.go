package keyword

import (
	"math/rand"
	stdregexp "regexp"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/token/camelcase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/regexp"
)

// The words tokenizer must make exactly the tokens of the regexp
// tokenizer it replaced: indexes written before keep using that one, and
// a difference would change rankings between old and new indexes.
func TestWordsTokenizerMatchesRegexp(t *testing.T) {
	want := regexp.NewRegexpTokenizer(stdregexp.MustCompile(`[\p{L}\p{N}]+`))
	got := wordsTokenizer{}
	inputs := []string{
		"", " ", "readFile", "read_file from S3 (v2.1)", "get-issue #42, 3.14 and 1e5",
		"inf Infinity NaN nano info 0x1p3 1_000 ½ ٣٤ 12abc", "日本語のテキスト 한국어 中文 カタカナ mixed日本",
		"café naïve e\u0301 Ünïcödé", "emoji 🙂 and symbols ©®™ — dashes – ok", "tab\tnew\nline",
		"\xff\xfe broken \xc3 utf8 \xef\xbf\xbd", "ǅungla Ⅻ ⑫ ²³",
	}
	// Random strings over a mix of the categories that matter.
	r := rand.New(rand.NewSource(1))
	pieces := []string{"a", "Z", "é", "\u0301", "7", "٣", "½", "日", "한", "カ", "ひ", " ", "-", ".", "_", "🙂", "\xff", "\xc3", "inf", "nan", "e", "x", "p", "0x", "1e"}
	for i := 0; i < 3000; i++ {
		var b strings.Builder
		for j := r.Intn(12); j >= 0; j-- {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		inputs = append(inputs, b.String())
	}
	for _, in := range inputs {
		w, g := want.Tokenize([]byte(in)), got.Tokenize([]byte(in))
		if !sameTokens(w, g) {
			t.Fatalf("Tokenize(%q):\n got %v\nwant %v", in, g, w)
		}
	}
}

func sameTokens(a, b analysis.TokenStream) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if string(x.Term) != string(y.Term) || x.Start != y.Start || x.End != y.End || x.Position != y.Position || x.Type != y.Type {
			return false
		}
	}
	return true
}

// BenchmarkTextTokenizer compares the two on tool descriptions.
func BenchmarkTextTokenizer(b *testing.B) {
	text := []byte(strings.Repeat("Create a new issue in the GitHub repository with a title, body (markdown) and labels; returns issue #42 and its htmlUrl. ", 4))
	for _, tc := range []struct {
		name string
		tok  analysis.Tokenizer
	}{
		{"regexp", regexp.NewRegexpTokenizer(stdregexp.MustCompile(`[\p{L}\p{N}]+`))},
		{"words", wordsTokenizer{}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				tc.tok.Tokenize(text)
			}
		})
	}
}

// The camel-case filter must split exactly as Bleve's, for the same
// reason.
func TestCamelFilterMatchesBleve(t *testing.T) {
	inputs := []string{
		"", "readFile", "HTTPServer", "getHTTPResponseCode", "ABc", "Abc", "ABC", "aB", "v2", "S3Bucket", "iOS",
		"XMLHttpRequest", "ǅungla ǅU", "日本語Text", "abc日本", "ŞehirİÇİ", "ΣΑΣ σας", "ȺȾ", "ⅫⅫa ⅻ", "a1b2C3",
		"\xffAbc\xfe", "naïveCafé",
	}
	r := rand.New(rand.NewSource(2))
	pieces := []string{"a", "b", "Z", "Q", "é", "É", "7", "٣", "½", "日", "カ", "ǅ", "ß", "Σ", "ς", " ", "-", "\xff", "Ⅻ"}
	for i := 0; i < 3000; i++ {
		var b strings.Builder
		for j := r.Intn(14); j >= 0; j-- {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		inputs = append(inputs, b.String())
	}
	bleveCamel := camelcase.NewCamelCaseFilter()
	for _, in := range inputs {
		// Each filter gets tokens of its own: the words tokenizer's, and
		// one token of the whole input, which may hold anything.
		streams := func() []analysis.TokenStream {
			whole := analysis.TokenStream{{Term: []byte(in), Start: 3, End: 3 + len(in), Position: 1}}
			return []analysis.TokenStream{wordsTokenizer{}.Tokenize([]byte(in)), whole}
		}
		w, g := streams(), streams()
		for k := range w {
			want, got := bleveCamel.Filter(w[k]), camelFilter{}.Filter(g[k])
			if !sameTokens(want, got) {
				t.Fatalf("Filter(%q) #%d:\n got %v\nwant %v", in, k, got, want)
			}
		}
	}
}

// BenchmarkCamelFilter compares Bleve's camel-case filter and
// camelFilter on a tokenized description.
func BenchmarkCamelFilter(b *testing.B) {
	text := []byte(strings.Repeat("Create a new issue in the GitHub repository with a title, body (markdown) and labels; returns issue #42 and its htmlUrl. ", 4))
	for _, tc := range []struct {
		name string
		f    analysis.TokenFilter
	}{
		{"bleve", camelcase.NewCamelCaseFilter()},
		{"toolscout", camelFilter{}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				tc.f.Filter(wordsTokenizer{}.Tokenize(text))
			}
		})
	}
}
