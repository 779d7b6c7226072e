package embed

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/toolscout/toolscout/embed/fitfile"
	"github.com/toolscout/toolscout/internal/text"
)

// BuiltinModel names the built-in embedder's feature scheme: learned word
// vectors plus hashed features. Bump it when the feature code changes; the
// fingerprint of the lexicon and the word vectors is added to the
// collection name, so stored vectors of an older scheme are never mixed
// with new ones.
const BuiltinModel = "wordvec-v2"

// BuiltinOptions configures the built-in embedder.
type BuiltinOptions struct {
	// Dims is the dimension of the hashed part (384 when zero); the
	// learned part adds the word vectors' dimension.
	Dims int
	// Learned is the learned part's share of the cosine similarity, in
	// [0, 1] (DefaultLearnedShare when zero, none when negative: hashed
	// features only, model "hash-v2").
	Learned float64
	// NoLexicon leaves out the hand-written concept and translation
	// tables (model "wordvec-v2-nolexicon"), to measure what they add.
	NoLexicon bool
}

// DefaultLearnedShare is the learned word vectors' share of the built-in
// embedder's similarity, chosen on metatool-dev (BENCHMARKS.md).
const DefaultLearnedShare = 0.5

// sifA is the smoothing of the learned part's word weights a/(a+p(w)),
// p(w) the word's corpus frequency (Arora, Liang and Ma, ICLR 2017).
const sifA = 1e-3

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
	dims     int // hashed part
	wv       *WordVectors
	wl, wh   float32             // scale of the learned and hashed parts
	concepts map[string][]uint32 // stem → concept ids
	trans    map[string]string   // foreign word → English words
	cjk      []cjkEntry

	model       string
	fingerprint string

	mu  sync.RWMutex
	idf *idfTable // nil until fitted or loaded
	// counting, between StartCounting and FitCounted: document
	// frequencies of the documents embedded, and how many.
	counting bool
	df       map[uint64]int
	docs     int
}

type cjkEntry struct {
	word, english string
}

var _ Embedder = (*Builtin)(nil)
var _ FitSaver = (*Builtin)(nil)
var _ DocumentCounter = (*Builtin)(nil)

// NewBuiltin returns the built-in embedder.
func NewBuiltin(opts BuiltinOptions) *Builtin {
	dims := opts.Dims
	if dims <= 0 {
		dims = 384
	}
	b := &Builtin{dims: dims, wh: 1, model: BuiltinModel}
	lex := builtinLexicon()
	if opts.NoLexicon {
		lex = &noLexicon
		b.model += "-nolexicon"
	}
	b.concepts, b.trans, b.cjk = lex.concepts, lex.trans, lex.cjk
	share := opts.Learned
	if share == 0 {
		share = DefaultLearnedShare
	}
	if share < 0 {
		b.model = strings.Replace(b.model, "wordvec", "hash", 1)
	}
	if share > 0 {
		wv, err := builtinWordVectors()
		if err != nil {
			panic(err) // the embedded file is part of the binary
		}
		b.wv = wv
		share = min(share, 1)
		b.wl = float32(math.Sqrt(share))
		b.wh = float32(math.Sqrt(1 - share))
	}
	b.fingerprint = lex.fingerprint(max(share, 0))
	return b
}

// lexicon is the concept table and the translations of a built-in
// embedder, made once a process and read-only after (NewBuiltin used to
// stem the table and hash the 4.9 MB word-vector file on every call:
// about 20 ms of CPU a call under -race, and the tests make dozens).
type lexicon struct {
	cg, tr   string              // the texts it was made from
	concepts map[string][]uint32 // stem → concept ids
	trans    map[string]string   // foreign word → English words
	cjk      []cjkEntry

	fingerprints sync.Map // float64 (learned share) → string
}

// builtinLexicon is the lexicon of conceptGroups and translations.
var builtinLexicon = sync.OnceValue(func() *lexicon { return newLexicon(conceptGroups, translations) })

// noLexicon is BuiltinOptions.NoLexicon's: no concepts, no translations.
var noLexicon = lexicon{concepts: map[string][]uint32{}, trans: map[string]string{}}

func newLexicon(cg, tr string) *lexicon {
	l := &lexicon{cg: cg, tr: tr, concepts: map[string][]uint32{}, trans: map[string]string{}}
	for i, line := range strings.Split(strings.TrimSpace(cg), "\n") {
		for _, w := range strings.Fields(line) {
			s := stem(w)
			ids := l.concepts[s]
			if len(ids) == 0 || ids[len(ids)-1] != uint32(i) {
				l.concepts[s] = append(ids, uint32(i))
			}
		}
	}
	for _, pair := range strings.Fields(tr) {
		from, to, ok := strings.Cut(pair, ":")
		if !ok {
			continue
		}
		if hasCJK(from) {
			l.cjk = append(l.cjk, cjkEntry{from, to})
		} else {
			l.trans[from] = to
		}
	}
	return l
}

// fingerprint is fingerprint(l's texts, share), computed once per share.
func (l *lexicon) fingerprint(share float64) string {
	if f, ok := l.fingerprints.Load(share); ok {
		return f.(string)
	}
	f := fingerprint(l.cg, l.tr, share)
	l.fingerprints.Store(share, f)
	return f
}

// Info reports provider "builtin" and model BuiltinModel ("wordvec-v2"),
// or the name of a research variant ("hash-v2", "wordvec-v2-nolexicon").
// The vector collection name carries Fingerprint as well.
func (b *Builtin) Info() Info {
	return Info{Provider: "builtin", Model: b.model, Dims: b.totalDims()}
}

// Fingerprint identifies the lexicon, the word vectors and the feature
// weights, so that stored vectors are rebuilt when any of them changes.
func (b *Builtin) Fingerprint() string { return b.fingerprint }

func fingerprint(concepts, translations string, share float64) string {
	h := fnvAdd(fnvOffset, concepts)
	h = fnvAdd(h, translations)
	for _, p := range entityPatterns {
		h = fnvAdd(h, p.re.String()+strings.Join(p.words, ","))
	}
	h = fnvAdd(h, fmt.Sprint(wWord, wConcept, wBigram, wTrigram, sifA, share, text.StopwordList))
	if share > 0 {
		h = fnvAdd(h, string(wordVectorsFile))
	}
	return fmt.Sprintf("%08x", uint32(mix(h)))
}

// Fit learns inverse document frequencies of features from the indexed
// documents. Queries embedded afterwards weight features by them; document
// vectors do not change.
func (b *Builtin) Fit(docs []string) {
	// Document frequencies are counted in parallel over slices of the
	// documents (the features of a document do not depend on the others)
	// and summed: the same table as one pass, in about half the time on
	// two cores.
	parts := min(runtime.GOMAXPROCS(0), max(1, len(docs)/1024))
	dfs := make([]map[uint64]int, parts)
	var wg sync.WaitGroup
	for p := range dfs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			df := make(map[uint64]int, 4096)
			seen := make(map[uint64]bool, 512)
			for _, d := range docs[p*len(docs)/parts : (p+1)*len(docs)/parts] {
				clear(seen)
				b.features(d, false, countOnce(seen, df, nil), nil)
			}
			dfs[p] = df
		}()
	}
	wg.Wait()
	df := dfs[0]
	for _, other := range dfs[1:] {
		for h, c := range other {
			df[h] += c
		}
	}
	b.fitFrom(df, len(docs))
}

// countOnce returns a feature callback that adds 1 to df for each feature
// not yet in seen (the features of one document), then calls next, if any.
func countOnce(seen map[uint64]bool, df map[uint64]int, next func(uint64, float32)) func(uint64, float32) {
	return func(h uint64, w float32) {
		if !seen[h] {
			seen[h] = true
			df[h]++
		}
		if next != nil {
			next(h, w)
		}
	}
}

// fitFrom sets the IDF weights from the document frequencies of n
// documents.
func (b *Builtin) fitFrom(df map[uint64]int, n int) {
	idf := &idfTable{hash: make([]uint64, 0, len(df)), weight: make([]float32, len(df))}
	for h := range df {
		idf.hash = append(idf.hash, h)
	}
	slices.Sort(idf.hash)
	for i, h := range idf.hash {
		idf.weight[i] = float32(math.Log(1 + float64(n)/float64(df[h])))
	}
	b.mu.Lock()
	b.idf = idf
	b.mu.Unlock()
}

// idfTable holds the IDF weights by feature hash, sorted: 12 bytes a
// feature (at 100k synthetic tools, 332k features: 4.0 MB, where the map
// took 11.7 MB of a server's live heap, which Go's GC doubles).
//
// A table loaded from bytes that stay as they are (LoadFit from a
// StableBytes reader: the data dir's fit file, mapped) reads them in
// place (recs) instead: at 100k tools 4.0 MB less of a server's heap,
// the pages of the file that lookups touch shared between replicas.
type idfTable struct {
	hash   []uint64 // ascending
	weight []float32
	recs   fitfile.Records
}

// get returns the weight of feature h, if a document had it.
func (t *idfTable) get(h uint64) (float32, bool) {
	if t.recs != nil {
		return t.recs.Find(h)
	}
	i, ok := slices.BinarySearch(t.hash, h)
	if !ok {
		return 0, false
	}
	return t.weight[i], true
}

// len is the number of features.
func (t *idfTable) len() int {
	if t == nil {
		return 0
	}
	if t.recs != nil {
		return t.recs.Len()
	}
	return len(t.hash)
}

// StartCounting implements DocumentCounter.
func (b *Builtin) StartCounting() {
	b.mu.Lock()
	b.counting, b.df, b.docs = true, map[uint64]int{}, 0
	b.mu.Unlock()
}

// FitCounted implements DocumentCounter.
func (b *Builtin) FitCounted(n int) bool {
	b.mu.Lock()
	df, docs := b.df, b.docs
	b.counting, b.df, b.docs = false, nil, 0
	b.mu.Unlock()
	if docs != n || df == nil {
		return false
	}
	b.fitFrom(df, n)
	return true
}

// SaveFit writes the fitted IDF weights (nothing fitted: an empty
// table), in package fitfile's format.
func (b *Builtin) SaveFit(w io.Writer) error {
	b.mu.RLock()
	idf := b.idf
	b.mu.RUnlock()
	if idf == nil {
		return fitfile.Write(w, nil, nil)
	}
	if idf.recs != nil {
		_, err := w.Write(append([]byte(fitfile.Magic), binary.LittleEndian.AppendUint32(nil, uint32(idf.recs.Len()))...))
		if err == nil {
			_, err = w.Write(idf.recs)
		}
		return err
	}
	return fitfile.Write(w, idf.hash, idf.weight)
}

// StableBytes is what LoadFit asks of a reader whose bytes never change
// while the process runs (a read-only mapping of a file that is only
// ever replaced by rename, or a slice nobody writes): LoadFit then reads
// the weights in place, holding the bytes, instead of copying them.
type StableBytes interface {
	StableBytes() []byte
}

// LoadFit restores weights written by SaveFit; on an error the weights
// are left as they were. From a StableBytes reader the weights are read
// in place.
func (b *Builtin) LoadFit(r io.Reader) error {
	var idf *idfTable
	if sb, ok := r.(StableBytes); ok {
		recs, err := fitfile.Check(sb.StableBytes())
		if err != nil {
			return err
		}
		idf = &idfTable{recs: recs}
	} else {
		hash, weight, err := fitfile.Read(r)
		if err != nil {
			return err
		}
		idf = &idfTable{hash: hash, weight: weight}
	}
	b.mu.Lock()
	b.idf = idf
	b.mu.Unlock()
	return nil
}

// EmbedDocuments embeds texts without IDF weighting. Between
// StartCounting and FitCounted it also counts their features, in the same
// pass, and adds the counts once the call succeeds.
func (b *Builtin) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	b.mu.RLock()
	counting := b.counting
	b.mu.RUnlock()
	var df map[uint64]int
	var seen map[uint64]bool
	if counting {
		df, seen = make(map[uint64]int, 1024), make(map[uint64]bool, 512)
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		v := make([]float32, b.totalDims())
		emit := func(h uint64, w float32) { b.add(v, h, w) }
		if counting {
			clear(seen)
			emit = countOnce(seen, df, emit)
		}
		b.features(t, false, emit, b.learner(v))
		b.finish(v)
		out[i] = v
	}
	if counting {
		b.mu.Lock()
		if b.counting {
			for h, c := range df {
				b.df[h] += c
			}
			b.docs += len(texts)
		}
		b.mu.Unlock()
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
	v := make([]float32, b.totalDims())
	b.features(q, true, func(h uint64, w float32) {
		if idf != nil {
			// A feature no document has can only match by hash collision:
			// leave it out rather than let it add noise.
			i, ok := idf.get(h)
			if !ok {
				return
			}
			w *= i
		}
		b.add(v, h, w)
	}, b.learner(v))
	if b.finish(v) == 0 {
		// Nothing recognisable: a fixed unit vector keeps the store happy
		// and ranks nothing high.
		v[0] = 1
		return v, nil
	}
	b.fadeLearned(v, len(strings.Fields(q)))
	return v, nil
}

// The learned part's weight in a query of n words is
// min(1, (learnedFullWords/n)^learnedFalloff): whole up to 40 words, half
// at 43, a tenth at 52. The mean of many words' vectors blurs toward the
// corpus mean as a request grows, while the hashed features keep every
// word apart; long multi-step requests rank better on the hashed part
// alone. Both values were chosen on the mean of the two dev sets' hybrid
// nDCG@10 over a grid (40 words of 30-50, falloff of 1-50: BENCHMARKS.md
// "Ranking v6"). Document vectors do not change.
const (
	learnedFullWords = 40
	learnedFalloff   = 9
)

// fadeLearned scales the learned part of the query vector v, of n words,
// by its weight and makes v a unit vector again.
func (b *Builtin) fadeLearned(v []float32, n int) {
	if b.wv == nil || n <= learnedFullWords {
		return
	}
	f := float32(math.Pow(learnedFullWords/float64(n), learnedFalloff))
	for i := b.dims; i < len(v); i++ {
		v[i] *= f
	}
	normalize(v)
}

func (b *Builtin) totalDims() int {
	if b.wv == nil {
		return b.dims
	}
	return b.dims + b.wv.Dims
}

// learner returns the function that adds a word's learned vector to v's
// learned part, weighted a/(a+p(w)) by the word's corpus frequency, for
// queries and documents alike. (Weighting query words by their IDF in the
// catalog as well measured no better on metatool-dev: BENCHMARKS.md.)
func (b *Builtin) learner(v []float32) func(string, float32) {
	if b.wv == nil {
		return nil
	}
	part := v[b.dims:]
	return func(st string, w float32) {
		i, p, ok := b.wv.find(st)
		if !ok {
			return
		}
		b.wv.addTo(part, i, w*(sifA/(sifA+p)))
	}
}

// finish normalises the hashed and learned parts apart and scales them by
// their shares, so that the cosine of two vectors is the shares' weighted
// sum of the parts' cosines. It returns the squared norm before scaling.
func (b *Builtin) finish(v []float32) float64 {
	s := normalize(v[:b.dims])
	for i := range v[:b.dims] {
		v[i] *= b.wh
	}
	if b.wv != nil {
		s += normalize(v[b.dims:])
		for i := b.dims; i < len(v); i++ {
			v[i] *= b.wl
		}
	}
	return s
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
func (b *Builtin) features(s string, query bool, emit func(h uint64, w float32), learn func(stem string, w float32)) {
	var prev string
	word := func(raw string, weight float32) {
		if stopword(raw) {
			prev = ""
			return
		}
		st := stem(raw)
		emit(fnv2("w", st), wWord*weight)
		if learn != nil {
			learn(st, weight)
		}
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
	ascii := true
	for i := 0; i < len(s) && ascii; i++ {
		ascii = s[i] < utf8.RuneSelf
	}
	if ascii {
		return false
	}
	for _, r := range s {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			return true
		}
	}
	return false
}

func stem(w string) string { return text.Stem(w) }

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

// stopword reports whether w carries no meaning for ranking. "get", "all"
// and "who" are kept out of documents and queries alike.
func stopword(w string) bool { return text.Stopword(w) }
