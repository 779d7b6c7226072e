package store

import (
	"bufio"
	"bytes"
	"errors"
	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/fileio"
	"github.com/toolscout/toolscout/internal/indextest"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// saveLabel saves a label as an embedder's statistics, so that a test
// sees which ones were restored (loadLabel).
func saveLabel(label string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, label); return err }
}

func loadLabel(got *string) func(io.Reader) error {
	return func(r io.Reader) error {
		b, err := io.ReadAll(r)
		*got = string(b)
		return err
	}
}

// editCatalog returns smallCatalog with n of its 6 tool descriptions
// changed.
func editCatalog(t *testing.T, n int) *index.Catalog {
	t.Helper()
	js := indextest.SmallCatalog
	for _, d := range []string{"Send a message to a channel.", "Read a file from a repository."}[:n] {
		if !strings.Contains(js, d) {
			t.Fatalf("smallCatalog has no %q", d)
		}
		js = strings.Replace(js, d, d+" Changed.", 1)
	}
	return indextest.MustCatalog(t, js)
}

func TestFitSketchDrift(t *testing.T) {
	base := sketchOf(indextest.MustCatalog(t, indextest.SmallCatalog))
	tests := []struct {
		name string
		cat  *index.Catalog
		want int
	}{
		{"same catalog", indextest.MustCatalog(t, indextest.SmallCatalog), 0},
		{"one tool changed", editCatalog(t, 1), 1},
		{"two tools changed", editCatalog(t, 2), 2},
		{"empty catalog", indextest.MustCatalog(t, `{"domains":[]}`), 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := sketchOf(tc.cat)
			if got := base.Drift(s); got != tc.want {
				t.Errorf("drift(%s) = %d, want %d", tc.name, got, tc.want)
			}
			if got := s.Drift(base); got != tc.want {
				t.Errorf("drift back from %s = %d, want %d", tc.name, got, tc.want)
			}
		})
	}
}

func TestFitFileRoundTrip(t *testing.T) {
	sketch := sketchOf(indextest.MustCatalog(t, indextest.SmallCatalog))
	var buf bytes.Buffer
	if err := writeFit(&buf, sketch, saveLabel("weights")); err != nil {
		t.Fatal(err)
	}
	got, rest, err := readFit(buf.Bytes())
	if err != nil || got.Drift(sketch) != 0 || len(got) != len(sketch) || string(rest) != "weights" {
		t.Fatalf("readFit = %v, %q, %v; want the sketch and the embedder's data", got, rest, err)
	}
	for _, bad := range [][]byte{nil, []byte("TSFITV01\x00\x00\x00\x00weights"), []byte("TSFITV02\x00\x00\x00\x00weights"), buf.Bytes()[:len(fitHeader)+4+20]} {
		if _, _, err := readFit(bad); err == nil {
			t.Errorf("readFit(%q) accepted it", bad)
		}
	}
	// Any byte changed, the embedder's data included, is an error.
	for at := range buf.Len() {
		damaged := bytes.Clone(buf.Bytes())
		damaged[at] ^= 0x01
		if _, _, err := readFit(damaged); err == nil {
			t.Errorf("byte %d of %d changed: readFit accepted it", at, buf.Len())
		}
	}
}

// TestRestoreFit: statistics are restored for the catalog they were
// saved for, and for one a few tools away from the catalog they were
// fitted on, never for one further away, whatever the indexes say
// changed (a kill between the indexes and the statistics).
func TestRestoreFit(t *testing.T) {
	const fp = "f1"
	cat := indextest.MustCatalog(t, indextest.SmallCatalog)
	one, two := editCatalog(t, 1), editCatalog(t, 2)
	fits := func(dir string) []string {
		f, _ := filepath.Glob(filepath.Join(dir, "fit-*.bin"))
		return f
	}
	st := &Store{dir: t.TempDir()}
	if ok, err := st.RestoreFit(fp, cat, 0.2, loadLabel(new(string))); ok || err != nil {
		t.Fatalf("RestoreFit before any was saved = %v, %v", ok, err)
	}
	if err := st.SaveFit(fp, cat, saveLabel("fitted on cat")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		cat      *index.Catalog
		maxDrift float64
		want     bool
	}{
		{"the catalog saved", cat, 0, true},
		{"one tool of 6 away, 20% allowed", one, 0.2, true},
		// Restored for one, but fitted on cat: two is 2 tools from cat.
		{"two tools of 6 away, 20% allowed", two, 0.2, false},
		{"two tools of 6 away, 40% allowed", two, 0.4, true},
	}
	for _, tc := range tests {
		var got string
		if ok, err := st.RestoreFit(fp, tc.cat, tc.maxDrift, loadLabel(&got)); ok != tc.want || ok && got != "fitted on cat" || err != nil {
			t.Errorf("%s: RestoreFit = %v (%q), %v; want %v", tc.name, ok, got, err, tc.want)
		}
		if f := fits(st.dir); len(f) != 1 {
			t.Errorf("%s: saved fits %v, want one", tc.name, f)
		}
	}
	if _, err := os.Stat(st.fitPath(fp, two)); err != nil {
		t.Errorf("the statistics restored for another catalog were not saved for it: %v", err)
	}
	if ok, _ := st.RestoreFit("other", cat, 1, loadLabel(new(string))); ok {
		t.Error("restored the statistics of another embedder fingerprint")
	}
	// A damaged file, or one of an earlier format that reached the
	// reader without the migration (migrate_test.go has the migration):
	// removed, said, fitted again.
	whole, err := os.ReadFile(fits(st.dir)[0])
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(whole)
	flipped[len(flipped)/2] ^= 0xff
	for name, data := range map[string][]byte{
		"TSFITV01": []byte("TSFITV01\x00\x00\x00\x00weights"),
		"TSFITV02": append([]byte("TSFITV02"), whole[len(fitHeader):len(whole)-checksum.FooterLen(whole)]...),
		"flipped":  flipped,
	} {
		old := &Store{dir: t.TempDir()}
		fileio.WriteAtomic(old.fitPath(fp, cat), func(w *bufio.Writer) error { _, err := w.Write(data); return err })
		ok, err := old.RestoreFit(fp, cat, 1, loadLabel(new(string)))
		if ok || err == nil || name == "flipped" && !errors.Is(err, checksum.ErrMismatch) || !strings.Contains(err.Error(), old.fitPath(fp, cat)) {
			t.Errorf("%s: RestoreFit = %v, %v; want false and an error naming the file", name, ok, err)
		}
		if f := fits(old.dir); len(f) != 0 {
			t.Errorf("%s: the file is still there: %v", name, f)
		}
	}
	if ok, err := (&Store{}).RestoreFit(fp, cat, 1, loadLabel(new(string))); ok || err != nil || (&Store{}).SaveFit(fp, cat, saveLabel("x")) != nil {
		t.Error("a store in memory saves or restores statistics")
	}
}

// The built-in embedder is the store's Fitter, FitSaver and FitCounter:
// the store declares what it needs, and imports no embedder.
var (
	_ FitSaver   = (*embed.Builtin)(nil)
	_ FitCounter = (*embed.Builtin)(nil)
)

// TestRestoreFitStableBytes: RestoreFit hands the saved statistics to
// the embedder as bytes it may read in place (embed.StableBytes: the
// file mapped read-only), equal to what was saved, and the same bytes
// again through the reader.
func TestRestoreFitStableBytes(t *testing.T) {
	const fp = "f1"
	cat := indextest.MustCatalog(t, indextest.SmallCatalog)
	st := &Store{dir: t.TempDir()}
	want := strings.Repeat("weights ", 1000)
	if err := st.SaveFit(fp, cat, saveLabel(want)); err != nil {
		t.Fatal(err)
	}
	var stable, read []byte
	ok, err := st.RestoreFit(fp, cat, 0, func(r io.Reader) error {
		sb, ok := r.(embed.StableBytes)
		if !ok {
			return errors.New("the reader offers no stable bytes")
		}
		stable = sb.StableBytes()
		var err error
		read, err = io.ReadAll(r)
		return err
	})
	if !ok || err != nil || string(stable) != want || string(read) != want {
		t.Fatalf("RestoreFit = %v, %v; stable bytes %d, read %d, want the %d saved", ok, err, len(stable), len(read), len(want))
	}
}
