package embed

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"strings"
	"testing"
)

func TestWordVectorsRoundTrip(t *testing.T) {
	words := []string{"mail", "email", "weather"}
	counts := []uint32{30, 20, 10}
	vecs := [][]float32{{1, 0.5, 0}, {0.9, 0.6, 0.1}, {0, -0.2, 3}}
	var buf bytes.Buffer
	if err := WriteWordVectors(&buf, words, counts, vecs, 3); err != nil {
		t.Fatal(err)
	}
	wv, err := ReadWordVectors(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if wv.Len() != 3 || wv.Dims != 3 {
		t.Fatalf("read %d words of %d dims, want 3 of 3", wv.Len(), wv.Dims)
	}
	for i, w := range words {
		v, p, ok := wv.Lookup(w)
		if !ok {
			t.Fatalf("Lookup(%q) found nothing", w)
		}
		if want := float32(counts[i]) / 60; p < want-1e-6 || p > want+1e-6 {
			t.Errorf("Lookup(%q) frequency = %v, want %v", w, p, want)
		}
		// int8 quantisation keeps direction to within about 1%.
		var n2, d, ref float64
		for j := range v {
			n2 += float64(v[j]) * float64(v[j])
			d += float64(v[j]) * float64(vecs[i][j])
			ref += float64(vecs[i][j]) * float64(vecs[i][j])
		}
		if n2 < 0.999 || n2 > 1.001 || d*d/ref < 0.99 {
			t.Errorf("Lookup(%q) = %v: |v|² %.4f, cos² to the original %.4f", w, v, n2, d*d/ref)
		}
	}
	if got := strings.Join(wv.Words(), " "); got != "mail email weather" {
		t.Errorf("Words() = %q", got)
	}
	if _, _, ok := wv.Lookup("nope"); ok {
		t.Error("Lookup of an unknown word found something")
	}
}

// Vectors of two parts, one int8 and one 4-bit: each part keeps its
// direction, and their shares weight two words' similarity.
func TestWordVectorPartsRoundTrip(t *testing.T) {
	words := []string{"mail", "email", "weather"}
	counts := []uint32{30, 20, 10}
	a := [][]float32{{1, 0}, {1, 0}, {0, 1}}
	b := [][]float32{{0.5, -0.25, 1, 0}, {0, 0, 0, 1}, {0.5, -0.25, 1, 0}}
	var buf bytes.Buffer
	if err := WriteWordVectorParts(&buf, words, counts, []VectorPart{{Vecs: a, Dims: 2, Bits: 8, Share: 0.75}, {Vecs: b, Dims: 4, Bits: 4, Share: 0.25}}); err != nil {
		t.Fatal(err)
	}
	wv, err := ReadWordVectors(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if wv.Dims != 6 {
		t.Fatalf("read %d dimensions, want 2 + 4", wv.Dims)
	}
	dot := func(x, y string) float64 {
		vx, _, _ := wv.Lookup(x)
		vy, _, _ := wv.Lookup(y)
		var s float64
		for i := range vx {
			s += float64(vx[i]) * float64(vy[i])
		}
		return s
	}
	// mail·email: the first part alike (1), the second orthogonal (0).
	if got := dot("mail", "email"); got < 0.74 || got > 0.76 {
		t.Errorf("mail·email = %.4f, want the first part's share 0.75", got)
	}
	// mail·weather: the second part the same vector (through 4 bits), the
	// first orthogonal.
	if got := dot("mail", "weather"); got < 0.249 || got > 0.251 {
		t.Errorf("mail·weather = %.4f, want the second part's share 0.25", got)
	}
	for _, bad := range []VectorPart{{Vecs: b, Dims: 4, Bits: 5, Share: 1}, {Vecs: a, Dims: 2, Bits: 8, Share: 0}, {Vecs: a[:1], Dims: 2, Bits: 8, Share: 1}} {
		if err := WriteWordVectorParts(io.Discard, words, counts, []VectorPart{bad}); err == nil {
			t.Errorf("WriteWordVectorParts(%d bits, share %g, %d vectors) wrote without an error", bad.Bits, bad.Share, len(bad.Vecs))
		}
	}
}

func TestReadWordVectorsRejectsDamage(t *testing.T) {
	var buf bytes.Buffer
	WriteWordVectors(&buf, []string{"a", "b"}, []uint32{1, 2}, [][]float32{{1, 0}, {0, 1}}, 2)
	good := buf.Bytes()
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not a toolscout word vector file"},
		{"wrong magic", append([]byte("XXXX\x01"), good[5:]...), "not a toolscout word vector file"},
		{"truncated vectors", good[:len(good)-1], "vector 1"},
		{"truncated words", good[:21], "word 0"},
		{"truncated parts", good[:12], "part 0"},
		{"no parts", append([]byte("TSWV\x02\x02\x00\x00\x00\x00"), good[10:]...), "number of parts"},
		{"odd 4-bit part", append([]byte("TSWV\x02\x02\x00\x00\x00\x01\x03\x00\x00\x00\x04"), good[15:]...), "4 bits, dimension 3"},
		{"huge size", append([]byte("TSWV\x01\xff\xff\xff\xff\x02\x00\x00\x00"), good[13:]...), "implausible size"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadWordVectors(bytes.NewReader(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadWordVectors(%s) error = %v, want it to mention %q", tc.name, err, tc.want)
			}
		})
	}
}

// The shipped vectors were learned from software descriptions: words that
// mean alike there are near, unrelated ones are not.
func TestShippedWordVectors(t *testing.T) {
	wv, err := builtinWordVectors()
	if err != nil {
		t.Fatal(err)
	}
	if wv.Len() < 10000 || wv.Dims < 64 {
		t.Fatalf("shipped vectors: %d words of %d dims, want ≥ 10000 of ≥ 64", wv.Len(), wv.Dims)
	}
	cos := func(a, b string) float64 {
		va, _, ok1 := wv.Lookup(a)
		vb, _, ok2 := wv.Lookup(b)
		if !ok1 || !ok2 {
			t.Fatalf("%q or %q is not in the vocabulary", a, b)
		}
		return dot(va, vb)
	}
	pairs := []struct{ near, far [2]string }{
		{[2]string{"email", "mail"}, [2]string{"email", "weather"}},
		{[2]string{"weather", "forecast"}, [2]string{"weather", "databas"}},
		{[2]string{"gif", "png"}, [2]string{"gif", "calendar"}},
	}
	for _, p := range pairs {
		if n, f := cos(p.near[0], p.near[1]), cos(p.far[0], p.far[1]); n <= f+0.2 {
			t.Errorf("cos%v = %.2f, cos%v = %.2f: want the first clearly higher", p.near, n, p.far, f)
		}
	}
}

// The learned part finds a tool whose words the request does not share
// (hashed features alone cannot): with the hand lexicon off, so that only
// learned vectors can bridge the words.
func TestLearnedPartBridgesWords(t *testing.T) {
	ctx := context.Background()
	docs := []string{
		"get forecast. Get the daily weather forecast for a city.",
		"send email. Send an email to one or more recipients.",
		"create refund. Refund a payment in full or in part.",
		"list repositories. List the git repositories of an organisation.",
	}
	query := "will it be sunny and warm in Lisbon on Saturday"
	rank := func(b *Builtin) int {
		b.Fit(docs)
		dv, _ := b.EmbedDocuments(ctx, docs)
		q, _ := b.EmbedQuery(ctx, query)
		best := 0
		for i := range dv {
			if dot(q, dv[i]) > dot(q, dv[best]) {
				best = i
			}
		}
		return best
	}
	if got := rank(NewBuiltin(BuiltinOptions{NoLexicon: true})); got != 0 {
		t.Errorf("learned vectors ranked %q first for %q, want the forecast tool", docs[got], query)
	}
	hashed := NewBuiltin(BuiltinOptions{NoLexicon: true, Learned: -1})
	if hashed.Info().Model != "hash-v2-nolexicon" {
		t.Errorf("hashed-only variant is named %q", hashed.Info().Model)
	}
}

// TestBuiltinWordVectorsHeldCompact: the built-in word vectors are held
// a byte a component (every server and replica holds them): reading
// them allocates less than half of what float32 components take.
func TestBuiltinWordVectorsHeldCompact(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	wv, err := ReadWordVectors(bytes.NewReader(wordVectorsFile))
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	floats := uint64(wv.Len()) * uint64(wv.Dims) * 4
	if got := after.TotalAlloc - before.TotalAlloc; got > floats/2 {
		t.Errorf("reading %d word vectors of %d components allocated %d MB, want under %d MB (half their float32 size)", wv.Len(), wv.Dims, got>>20, floats/2>>20)
	}
}
