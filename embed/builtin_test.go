package embed

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/toolscout/toolscout/embed/fitfile"
)

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestBuiltinVectors(t *testing.T) {
	ctx := context.Background()
	b := NewBuiltin(BuiltinOptions{Dims: 256})
	wv, err := builtinWordVectors()
	if err != nil {
		t.Fatal(err)
	}
	want := 256 + wv.Dims
	if info := b.Info(); info.Provider != "builtin" || info.Model != BuiltinModel || info.Dims != want {
		t.Errorf("Info() = %+v, want builtin/%s with %d dims", info, BuiltinModel, want)
	}
	vs, err := b.EmbedDocuments(ctx, []string{"Send a message to a Slack channel", "Send a message to a Slack channel", ""})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 3 || len(vs[0]) != want {
		t.Fatalf("EmbedDocuments returned %d vectors of %d dims", len(vs), len(vs[0]))
	}
	if n := dot(vs[0], vs[0]); math.Abs(n-1) > 1e-5 {
		t.Errorf("|v|² = %f, want 1 (L2-normalised)", n)
	}
	if dot(vs[0], vs[1]) < 0.99999 {
		t.Error("the same text gave different vectors: not deterministic")
	}
	q, err := b.EmbedQuery(ctx, "...")
	if err != nil || math.Abs(dot(q, q)-1) > 1e-5 {
		t.Errorf("EmbedQuery of a text with no words = %v, %v; want a unit vector", q, err)
	}
}

// The built-in embedder must rank a paraphrase's tool above unrelated ones.
func TestBuiltinRanksParaphrases(t *testing.T) {
	ctx := context.Background()
	docs := []string{
		"list oncalls. List who is on call now or in a time range, per schedule and escalation policy.",
		"post message. Send a message to a Slack channel or direct message.",
		"create issue. Open a new issue in a GitHub repository.",
		"get forecast. Get the daily or hourly weather forecast for up to 10 days.",
		"create refund. Refund a payment in full or in part.",
		"send email. Send an email to one or more recipients.",
		"find free slots. Find times when all given people are free for a meeting.",
	}
	b := NewBuiltin(BuiltinOptions{})
	b.Fit(docs)
	dv, _ := b.EmbedDocuments(ctx, docs)
	tests := []struct {
		query string
		want  int
	}{
		{"who is on call tonight", 0},
		{"ping the team in chat", 1},
		{"file a bug ticket", 2},
		{"will it rain tomorrow", 3},
		{"give the customer their money back", 4},
		{"mail the report to Ana", 5},
		{"when can we all meet", 6},
		{"weahter forcast", 3},  // misspelt
		{"enviar un correo", 5}, // Spanish
		{"Wetter morgen", 3},    // German
		{"创建问题", 2},             // Chinese: create issue
	}
	for _, tc := range tests {
		q, err := b.EmbedQuery(ctx, tc.query)
		if err != nil {
			t.Fatal(err)
		}
		best, bestSim := -1, -2.0
		for i, d := range dv {
			if s := dot(q, d); s > bestSim {
				best, bestSim = i, s
			}
		}
		if best != tc.want {
			t.Errorf("EmbedQuery(%q) is nearest to %q, want %q", tc.query, docs[best], docs[tc.want])
		}
	}
}

func TestBuiltinCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := NewBuiltin(BuiltinOptions{})
	if _, err := b.EmbedDocuments(ctx, []string{"a"}); err == nil {
		t.Error("EmbedDocuments ignored a cancelled context")
	}
}

func benchTexts(n int) []string {
	r := rand.New(rand.NewSource(1))
	words := strings.Fields("create list update delete issue message channel file folder payment invoice customer calendar event meeting search query database table pod deployment weather forecast repository branch commit review comment user team")
	out := make([]string, n)
	for i := range out {
		var sb strings.Builder
		fmt.Fprintf(&sb, "%s %s. ", words[r.Intn(len(words))], words[r.Intn(len(words))])
		for j := 0; j < 25; j++ {
			sb.WriteString(words[r.Intn(len(words))])
			sb.WriteByte(' ')
		}
		out[i] = sb.String()
	}
	return out
}

// BenchmarkBuiltinEmbedDocuments reports texts/s on one goroutine.
func BenchmarkBuiltinEmbedDocuments(b *testing.B) {
	texts := benchTexts(1000)
	e := NewBuiltin(BuiltinOptions{})
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.EmbedDocuments(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(texts)*b.N)/b.Elapsed().Seconds(), "texts/s")
}

func TestSaveLoadFit(t *testing.T) {
	ctx := context.Background()
	docs := []string{"read a file from disk", "write a file to disk", "send a chat message", "list the open issues"}
	a := NewBuiltin(BuiltinOptions{})
	a.Fit(docs)
	var buf bytes.Buffer
	if err := a.SaveFit(&buf); err != nil {
		t.Fatal(err)
	}
	b := NewBuiltin(BuiltinOptions{})
	if err := b.LoadFit(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"read the file", "message the team"} {
		va, _ := a.EmbedQuery(ctx, q)
		vb, _ := b.EmbedQuery(ctx, q)
		if !slices.Equal(va, vb) {
			t.Errorf("%q embeds differently after LoadFit", q)
		}
	}
	unfitted, _ := NewBuiltin(BuiltinOptions{}).EmbedQuery(ctx, "read the file")
	if fitted, _ := b.EmbedQuery(ctx, "read the file"); slices.Equal(fitted, unfitted) {
		t.Error("the loaded fit changed nothing: the test cannot tell")
	}
	// Two features swapped: the table is searched by halves, so order is
	// part of the format.
	swapped := slices.Clone(buf.Bytes())
	if len(swapped) < 12+2*12 {
		t.Fatal("test fit too small to swap two features")
	}
	first := slices.Clone(swapped[12:24])
	copy(swapped[12:24], swapped[24:36])
	copy(swapped[24:36], first)
	for _, bad := range [][]byte{nil, []byte("TSFIT001"), append([]byte("TSFIT001\x05\x00\x00\x00"), 1, 2, 3), swapped} {
		if err := b.LoadFit(bytes.NewReader(bad)); err == nil {
			t.Errorf("LoadFit(%q) accepted damage", bad)
		}
	}
	// A fit that failed to load left the weights loaded before.
	var after bytes.Buffer
	if err := b.SaveFit(&after); err != nil || !bytes.Equal(after.Bytes(), buf.Bytes()) {
		t.Errorf("after LoadFit failed, SaveFit writes %d bytes (%v), want the %d loaded before", after.Len(), err, buf.Len())
	}
}

// TestParallelFit: fitting in parallel gives the one-pass table (and, under
// -race, shows that features share no mutable state).
func TestParallelFit(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	words := strings.Fields("read write file folder message channel issue ticket deploy restart pod invoice customer email calendar event search list create delete")
	docs := make([]string, 5000)
	for i := range docs {
		var ws []string
		for j := 0; j < 8; j++ {
			ws = append(ws, words[r.Intn(len(words))])
		}
		docs[i] = strings.Join(ws, " ")
	}
	b := NewBuiltin(BuiltinOptions{})
	b.Fit(docs)
	df := map[uint64]int{}
	for _, d := range docs {
		seen := map[uint64]bool{}
		b.features(d, false, func(h uint64, _ float32) {
			if !seen[h] {
				seen[h] = true
				df[h]++
			}
		}, nil)
	}
	if len(df) != b.idf.len() {
		t.Fatalf("parallel fit has %d features, one pass %d", b.idf.len(), len(df))
	}
	for h, c := range df {
		if got, _ := b.idf.get(h); got != float32(math.Log(1+float64(len(docs))/float64(c))) {
			t.Fatalf("feature %x: idf %v, one pass %v", h, got, float32(math.Log(1+float64(len(docs))/float64(c))))
		}
	}
}

// TestCountedFitIsFit: statistics counted while a sync embeds every
// document equal those Fit learns from the same documents, so that
// statistics fitted again after a kill (toolscout fits them with Fit when
// no document is left to embed) rank exactly as a clean build's.
func TestCountedFitIsFit(t *testing.T) {
	ctx := context.Background()
	docs := []string{"read a file from disk", "write a file to disk", "send a chat message", "list the open issues", "archive an old invoice"}
	counted := NewBuiltin(BuiltinOptions{})
	counted.StartCounting()
	for _, part := range [][]string{docs[:2], docs[2:]} {
		if _, err := counted.EmbedDocuments(ctx, part); err != nil {
			t.Fatal(err)
		}
	}
	if !counted.FitCounted(len(docs)) {
		t.Fatal("FitCounted did not fit from the documents embedded")
	}
	fitted := NewBuiltin(BuiltinOptions{})
	fitted.Fit(docs)
	var a, b bytes.Buffer
	counted.SaveFit(&a)
	fitted.SaveFit(&b)
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("counted statistics differ from Fit's over the same documents")
	}
	if NewBuiltin(BuiltinOptions{}).FitCounted(1) {
		t.Error("FitCounted fitted without counting")
	}
}

// A long request's query vector leans on the hashed features: the learned
// part's weight falls past learnedFullWords words, and the vector stays a
// unit vector.
func TestLongQueryFadesLearnedPart(t *testing.T) {
	ctx := context.Background()
	b := NewBuiltin(BuiltinOptions{Dims: 256})
	sentence := "create a calendar event for the team meeting and send the invitation by email"
	learnedNorm := func(q string) float64 {
		t.Helper()
		v, err := b.EmbedQuery(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if n := dot(v, v); math.Abs(n-1) > 1e-5 {
			t.Errorf("query of %d words: squared norm %.6f, want 1", len(strings.Fields(q)), n)
		}
		return math.Sqrt(dot(v[256:], v[256:]))
	}
	short := learnedNorm(sentence)
	if want := math.Sqrt(DefaultLearnedShare); math.Abs(short-want) > 1e-5 {
		t.Errorf("query of %d words: learned part's norm %.4f, want the full share's %.4f", len(strings.Fields(sentence)), short, want)
	}
	long := strings.Repeat(sentence+". ", 5) // 75 words
	if n := learnedNorm(long); n > 0.01 {
		t.Errorf("query of %d words: learned part's norm %.4f, want it faded below 0.01", len(strings.Fields(long)), n)
	}
}

// stableBytes is a reader that offers its bytes whole (StableBytes), as
// index/store's reader of a mapped fit file does.
type stableBytes struct {
	*bytes.Reader
	b []byte
}

func (s stableBytes) StableBytes() []byte { return s.b }

// TestLoadFitInPlace: weights loaded from a StableBytes reader are read
// where they lie (no copy held: the table points into the bytes), embed
// every query as weights loaded by copy do, are written back by SaveFit
// byte for byte, and damage is refused as LoadFit refuses it.
func TestLoadFitInPlace(t *testing.T) {
	ctx := context.Background()
	var docs []string
	for i := range 2000 {
		docs = append(docs, fmt.Sprintf("read file%d from disk%d and send message%d", i, i%37, i%101))
	}
	a := NewBuiltin(BuiltinOptions{})
	a.Fit(docs)
	var buf bytes.Buffer
	if err := a.SaveFit(&buf); err != nil {
		t.Fatal(err)
	}
	saved := buf.Bytes()
	copied, inPlace := NewBuiltin(BuiltinOptions{}), NewBuiltin(BuiltinOptions{})
	if err := copied.LoadFit(bytes.NewReader(saved)); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := inPlace.LoadFit(stableBytes{bytes.NewReader(saved), saved}); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if held := int64(after.HeapAlloc) - int64(before.HeapAlloc); held > int64(len(saved))/4 {
		t.Errorf("LoadFit in place holds %d bytes of heap for a fit of %d bytes, want it read where it lies", held, len(saved))
	}
	if inPlace.idf.recs == nil || unsafe.SliceData(inPlace.idf.recs) != &saved[len(fitfile.Magic)+4] {
		t.Fatal("LoadFit from a StableBytes reader did not read the weights in place")
	}
	if inPlace.idf.len() != copied.idf.len() || inPlace.idf.len() < 1000 {
		t.Fatalf("in place %d features, copied %d, want the same (and many)", inPlace.idf.len(), copied.idf.len())
	}
	for i, h := range copied.idf.hash {
		w, ok := inPlace.idf.get(h)
		if !ok || w != copied.idf.weight[i] {
			t.Fatalf("feature %d (%x): in place %v, %v, want %v", i, h, w, ok, copied.idf.weight[i])
		}
		if _, ok := inPlace.idf.get(h + 1); ok != slices.Contains(copied.idf.hash, h+1) {
			t.Fatalf("feature %x+1: in place found %v", h, ok)
		}
	}
	for _, q := range []string{"read file7 from disk7", "send message3", "nothing like it"} {
		vc, _ := copied.EmbedQuery(ctx, q)
		vi, _ := inPlace.EmbedQuery(ctx, q)
		if !slices.Equal(vc, vi) {
			t.Errorf("%q embeds differently with the weights read in place", q)
		}
	}
	var again bytes.Buffer
	if err := inPlace.SaveFit(&again); err != nil || !bytes.Equal(again.Bytes(), saved) {
		t.Errorf("SaveFit of weights read in place wrote %d bytes (%v), want the %d loaded", again.Len(), err, len(saved))
	}
	swapped := slices.Clone(saved)
	first := slices.Clone(swapped[12:24])
	copy(swapped[12:24], swapped[24:36])
	copy(swapped[24:36], first)
	for _, bad := range [][]byte{nil, []byte("TSFIT001"), saved[:len(saved)-1], swapped} {
		if err := inPlace.LoadFit(stableBytes{bytes.NewReader(bad), bad}); err == nil {
			t.Errorf("LoadFit in place of %d bytes accepted damage", len(bad))
		}
	}
}

// TestNewBuiltinSharesItsLexicon checks that embedders share the concept
// table and the translations made once a process, and that a share or
// NoLexicon still gets its own fingerprint: NewBuiltin no longer stems
// the table nor hashes the word-vector file on every call.
func TestNewBuiltinSharesItsLexicon(t *testing.T) {
	a, b := NewBuiltin(BuiltinOptions{}), NewBuiltin(BuiltinOptions{Dims: 128})
	if reflect.ValueOf(a.concepts).UnsafePointer() != reflect.ValueOf(b.concepts).UnsafePointer() ||
		reflect.ValueOf(a.trans).UnsafePointer() != reflect.ValueOf(b.trans).UnsafePointer() {
		t.Fatal("two built-in embedders made their own concept tables")
	}
	if len(a.concepts) == 0 || len(a.trans) == 0 {
		t.Fatalf("the lexicon is empty: %d concepts, %d translations", len(a.concepts), len(a.trans))
	}
	if a.Fingerprint() != fingerprint(conceptGroups, translations, DefaultLearnedShare) {
		t.Fatalf("fingerprint %s, want %s", a.Fingerprint(), fingerprint(conceptGroups, translations, DefaultLearnedShare))
	}
	half := NewBuiltin(BuiltinOptions{Learned: 0.25})
	if half.Fingerprint() != fingerprint(conceptGroups, translations, 0.25) || half.Fingerprint() == a.Fingerprint() {
		t.Fatalf("learned share 0.25: fingerprint %s (default %s)", half.Fingerprint(), a.Fingerprint())
	}
	bare := NewBuiltin(BuiltinOptions{NoLexicon: true})
	if len(bare.concepts) != 0 || len(bare.trans) != 0 || bare.Fingerprint() != fingerprint("", "", DefaultLearnedShare) {
		t.Fatalf("NoLexicon: %d concepts, %d translations, fingerprint %s", len(bare.concepts), len(bare.trans), bare.Fingerprint())
	}
}
