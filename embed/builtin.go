package embed

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
	"unicode"

	porterstemmer "github.com/blevesearch/go-porterstemmer"
	"github.com/toolscout/toolscout/internal/text"
)

// BuiltinModel names the built-in embedder's feature scheme. Bump it when
// the feature code changes; the lexicon's fingerprint is added to the model
// name by Info, so stored vectors of an older scheme are never mixed with
// new ones.
const BuiltinModel = "hash-v1"

// BuiltinOptions configures the built-in embedder.
type BuiltinOptions struct {
	// Dims is the vector dimension (384 when zero).
	Dims int
}

// Builtin is an offline embedder that needs no model: it hashes features
// that carry meaning across wordings into a fixed-size vector.
//
// Features of a text: stemmed words; concepts from a hand-written table of
// near-synonyms for tool vocabulary ("ticket" and "issue" share one);
// English words for common words of other languages (Spanish, German,
// French, Portuguese, Chinese); word bigrams; character trigrams, which
// survive misspellings. Document vectors depend only on their text, so they
// stay valid as the catalog changes; queries are weighted by inverse
// document frequency learned by Fit, so rare, telling features count most.
type Builtin struct {
	dims     int
	concepts map[string][]uint32 // stem → concept ids
	trans    map[string]string   // foreign word → English words
	cjk      []cjkEntry

	mu  sync.RWMutex
	idf map[uint64]float32
}

type cjkEntry struct {
	word, english string
}

var _ Embedder = (*Builtin)(nil)
var _ Fitter = (*Builtin)(nil)

// NewBuiltin returns the built-in embedder.
func NewBuiltin(opts BuiltinOptions) *Builtin {
	dims := opts.Dims
	if dims <= 0 {
		dims = 384
	}
	b := &Builtin{
		dims:     dims,
		concepts: map[string][]uint32{},
		trans:    map[string]string{},
	}
	for i, line := range strings.Split(strings.TrimSpace(conceptGroups), "\n") {
		for _, w := range strings.Fields(line) {
			s := stem(w)
			ids := b.concepts[s]
			if len(ids) == 0 || ids[len(ids)-1] != uint32(i) {
				b.concepts[s] = append(ids, uint32(i))
			}
		}
	}
	for _, pair := range strings.Fields(translations) {
		from, to, ok := strings.Cut(pair, ":")
		if !ok {
			continue
		}
		if hasCJK(from) {
			b.cjk = append(b.cjk, cjkEntry{from, to})
		} else {
			b.trans[from] = to
		}
	}
	return b
}

// Info reports provider "builtin" and model "hash-v1". The vector
// collection name carries Fingerprint as well.
func (b *Builtin) Info() Info { return Info{Provider: "builtin", Model: BuiltinModel, Dims: b.dims} }

// Fingerprint identifies the lexicon and feature weights, so that stored
// vectors are rebuilt when either changes.
func (b *Builtin) Fingerprint() string { return lexiconFingerprint }

var lexiconFingerprint = func() string {
	h := fnvAdd(fnvOffset, conceptGroups)
	h = fnvAdd(h, translations)
	for _, p := range entityPatterns {
		h = fnvAdd(h, p.re.String()+strings.Join(p.words, ","))
	}
	h = fnvAdd(h, fmt.Sprint(wWord, wConcept, wBigram, wTrigram, stopwordList))
	return fmt.Sprintf("%08x", uint32(mix(h)))
}()

// Fit learns inverse document frequencies of features from the indexed
// documents. Queries embedded afterwards weight features by them; document
// vectors do not change.
func (b *Builtin) Fit(docs []string) {
	df := make(map[uint64]int, 4096)
	seen := make(map[uint64]bool, 512)
	for _, d := range docs {
		clear(seen)
		b.features(d, false, func(h uint64, _ float32) {
			if !seen[h] {
				seen[h] = true
				df[h]++
			}
		})
	}
	n := float64(len(docs))
	idf := make(map[uint64]float32, len(df))
	for h, c := range df {
		idf[h] = float32(math.Log(1 + n/float64(c)))
	}
	b.mu.Lock()
	b.idf = idf
	b.mu.Unlock()
}

// EmbedDocuments embeds texts without IDF weighting.
func (b *Builtin) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		v := make([]float32, b.dims)
		b.features(t, false, func(h uint64, w float32) { b.add(v, h, w) })
		normalize(v)
		out[i] = v
	}
	return out, nil
}

// EmbedQuery embeds a query, weighting features by the IDF Fit learned.
func (b *Builtin) EmbedQuery(ctx context.Context, q string) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.RLock()
	idf := b.idf
	b.mu.RUnlock()
	v := make([]float32, b.dims)
	b.features(q, true, func(h uint64, w float32) {
		if idf != nil {
			// A feature no document has can only match by hash collision:
			// leave it out rather than let it add noise.
			i, ok := idf[h]
			if !ok {
				return
			}
			w *= i
		}
		b.add(v, h, w)
	})
	if normalize(v) == 0 {
		// Nothing recognisable: a fixed unit vector keeps the store happy
		// and ranks nothing high.
		v[0] = 1
	}
	return v, nil
}

func (b *Builtin) add(v []float32, h uint64, w float32) {
	idx := int(h % uint64(b.dims))
	if h&(1<<63) != 0 {
		w = -w
	}
	v[idx] += w
}

func normalize(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return 0
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return s
}

// Feature weights.
const (
	wWord    = 1.0
	wConcept = 1.0
	wBigram  = 0.4
	wTrigram = 0.25
)

// features calls emit with the hash and weight of every feature of s, a
// query or a document.
func (b *Builtin) features(s string, query bool, emit func(h uint64, w float32)) {
	var prev string
	word := func(raw string, weight float32) {
		if stopword(raw) {
			prev = ""
			return
		}
		st := stem(raw)
		emit(fnv2("w", st), wWord*weight)
		for _, c := range b.concepts[st] {
			emit(fnvConcept(c), wConcept*weight)
		}
		if prev != "" {
			emit(fnv3("b", prev, st), wBigram*weight)
		}
		prev = st
		// Character trigrams of the word with boundary marks.
		if len(raw) >= 4 {
			padded := "<" + raw + ">"
			for i := 0; i+3 <= len(padded); i++ {
				emit(fnv2("g", padded[i:i+3]), wTrigram*weight)
			}
		}
	}
	// Things a request names by their form: "#design" is a channel,
	// "notes.txt" a file, "/var/log" a path, "ana@x.io" an email address.
	// Queries only: tool descriptions say "channel" and "file" in words, and
	// six regular expressions would cost documents two thirds of their speed.
	if query {
		for _, m := range entityPatterns {
			if m.re.MatchString(s) {
				for _, w := range m.words {
					word(w, 0.8)
				}
			}
		}
		prev = ""
	}
	words := text.SplitIdentifier(s)
	for i := 0; i < len(words); i++ {
		w := words[i]
		// "on call" → "oncall", "log in" → "login", "e mail" → "email": a
		// pair that the lexicon knows as one word counts as that word, not
		// as its parts ("call" alone would pull in phone-call tools).
		if i+1 < len(words) {
			if joined := w + words[i+1]; b.known(joined) {
				word(joined, 1)
				i++
				continue
			}
		}
		if hasCJK(w) {
			for _, e := range b.cjk {
				if strings.Contains(w, e.word) {
					for _, en := range strings.Fields(e.english) {
						word(en, 1)
					}
				}
			}
			rs := []rune(w)
			for i := 0; i+1 < len(rs); i++ {
				emit(fnv2("z", string(rs[i:i+2])), wBigram)
			}
			prev = ""
			continue
		}
		if en, ok := b.trans[w]; ok {
			for _, e := range strings.Fields(en) {
				word(e, 0.9)
			}
			continue
		}
		word(w, 1)
	}
}

// known reports whether w is a word of the concept table.
func (b *Builtin) known(w string) bool {
	_, ok := b.concepts[stem(w)]
	return ok
}

var entityPatterns = []struct {
	re    *regexp.Regexp
	words []string
}{
	{regexp.MustCompile(`(^|\s)#[\p{L}\p{N}_-]+`), []string{"channel"}},
	{regexp.MustCompile(`[\w.+-]+@[\w-]+\.[\w.]+`), []string{"email"}},
	{regexp.MustCompile(`(^|\s)@[\w.-]+`), []string{"user"}},
	{regexp.MustCompile(`https?://\S+`), []string{"url", "web"}},
	{regexp.MustCompile(`(^|\s)(~?/[\w.-]+)+/?`), []string{"path", "directory"}},
	{regexp.MustCompile(`(?i)\b[\w-]+\.(txt|md|json|ya?ml|csv|tsv|pdf|log|conf|cfg|ini|toml|xml|html?|png|jpe?g|gif|docx?|xlsx?|pptx?|zip|tar|gz|sql|go|py|js|ts|rs|java|sh)\b`), []string{"file"}},
}

func hasCJK(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			return true
		}
	}
	return false
}

func stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	return porterstemmer.StemString(w)
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvAdd(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

func fnv2(kind, a string) uint64 { return mix(fnvAdd(fnvAdd(fnvOffset, kind), a)) }

func fnv3(kind, a, b string) uint64 {
	return mix(fnvAdd(fnvAdd(fnvAdd(fnvAdd(fnvOffset, kind), a), " "), b))
}

func fnvConcept(id uint32) uint64 {
	h := fnvAdd(fnvOffset, "c")
	for i := 0; i < 4; i++ {
		h ^= uint64(byte(id >> (8 * i)))
		h *= fnvPrime
	}
	return mix(h)
}

// mix spreads FNV's low-entropy high bits (splitmix64 finaliser), since the
// sign comes from the top bit and the bucket from the modulus.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(stopwordList) {
		m[w] = true
	}
	return m
}()

const stopwordList = `a an the and or of to in on for from by with at as is are was were be been
		it its this that these those i me my we our you your he she they them their what which who whom
		do does did can could would should will shall may might must please want need like just also
		all any some into about over than then there here so if not no yes up out get s t called named`

// stopword reports whether w carries no meaning for ranking. "get", "all"
// and "who" are kept out of documents and queries alike.
func stopword(w string) bool { return stopwords[w] }
