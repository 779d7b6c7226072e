package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolscout/toolscout/embed"
)

// A synthetic corpus with two topics (corpusFile): words of one topic share contexts,
// so their vectors must come out closer than words of different topics,
// and two builds must write the same bytes.
func TestLearnsTopicsDeterministically(t *testing.T) {
	dir := t.TempDir()
	corpus := corpusFile(t, dir)
	build := func(out string) []byte {
		c := config{tsv: multiFlag{corpus + ":summary"}, out: out, vocab: 100, minCount: 2, dims: 4,
			window: 3, alpha: 0.75, power: 0.5, removeTop: 0, iterations: 3, seed: 1}
		if err := run(c); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	a := build(filepath.Join(dir, "a.bin"))
	if b := build(filepath.Join(dir, "b.bin")); !bytes.Equal(a, b) {
		t.Error("two builds of the same corpus differ")
	}
	wv, err := embed.ReadWordVectors(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	cos := func(x, y string) float64 { return wordCos(t, wv, x, y) }
	// Stems: "kitten" → "kitten", "truck" → "truck", "puppi", "tractor".
	if same, diff := cos("kitten", "puppi"), cos("kitten", "truck"); same <= diff+0.3 {
		t.Errorf("cos(kitten, puppy) = %.2f, cos(kitten, truck) = %.2f: want the same topic clearly closer", same, diff)
	}
}

func TestCorpusErrors(t *testing.T) {
	dir := t.TempDir()
	if err := run(config{debian: dir, out: filepath.Join(dir, "x.bin")}); err == nil {
		t.Error("a folder without Translation-en files was accepted")
	}
	tsv := filepath.Join(dir, "c.tsv")
	os.WriteFile(tsv, []byte("name\tdesc\nx\ty\n"), 0o644)
	if err := run(config{tsv: multiFlag{tsv + ":summary"}, out: filepath.Join(dir, "x.bin")}); err == nil {
		t.Error("a TSV without the named column was accepted")
	}
	if _, err := os.Stat(filepath.Join(dir, "x.bin")); err == nil {
		t.Error("a failed run wrote its output")
	}
}

func TestDebianDescriptions(t *testing.T) {
	raw := "Package: a\nDescription-md5: 1\nDescription-en: mail client\n reads mail\n .\n and news\n\nPackage: b\nDescription-en: image viewer\n"
	var got []string
	debianDescriptions([]byte(raw), func(s string) { got = append(got, s) })
	want := []string{" mail client.\n reads mail\n and news\n", " image viewer.\n"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("debianDescriptions = %q, want %q", got, want)
	}
}

// wordCos returns the cosine of two words' vectors, failing t when one is
// missing.
func wordCos(t *testing.T, wv *embed.WordVectors, x, y string) float64 {
	t.Helper()
	vx, _, ok1 := wv.Lookup(x)
	vy, _, ok2 := wv.Lookup(y)
	if !ok1 || !ok2 {
		t.Fatalf("%q or %q missing from the vocabulary %v", x, y, wv.Words())
	}
	var s float64
	for i := range vx {
		s += float64(vx[i]) * float64(vy[i])
	}
	return s
}
