package vector

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/vector/snapfile"
	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/indextest"
	"github.com/toolscout/toolscout/internal/racetest"
	"github.com/toolscout/toolscout/internal/synth"
)

// TestQuantizedRecall: on the built-in embedder's vectors of 20,000
// synthetic tools, the quantized pass finds at least 99% of the exact
// scan's top 10 (and of its top 50, the depth search reads), scoped
// queries too, each found tool with the exact scan's similarity; and
// what a query answers from the file (float16 rows, the quantized pass)
// finds at least 99% of the top 10 and 50 of an exact scan of the
// embedder's float32 vectors.
// TOOLSCOUT_RECALL_TOOLS sets another size (the figures at 100k:
// docs/benchmarks/2026-12-06-quantized-vectors.md).
//
// Not in race builds: recall is arithmetic, and under -race the test
// took 22 CPU s of make test's unit step (4.4 without; the 20,000
// tools' embedding, the exact reference and 1,200 scans), so make unit
// runs it in a build without the race detector. The split scans'
// goroutines are raced by TestSplitScansSameAnswer.
func TestQuantizedRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("embeds 20,000 tools")
	}
	racetest.Plain(t) // recall is measured without -race
	n := 20000
	if env := os.Getenv("TOOLSCOUT_RECALL_TOOLS"); env != "" {
		var err error
		if n, err = strconv.Atoi(env); err != nil || n < 1 {
			t.Fatalf("TOOLSCOUT_RECALL_TOOLS=%q: want a number of tools", env)
		}
	}
	ctx := context.Background()
	cat, err := synth.Catalog(n, 1)
	if err != nil {
		t.Fatal(err)
	}
	builtin := embed.NewBuiltin(embed.BuiltinOptions{})
	probe, err := builtin.EmbedQuery(ctx, "probe")
	if err != nil {
		t.Fatal(err)
	}
	col := Collection{Provider: "builtin", Model: builtin.Info().Model, Dims: len(probe)}
	// The sync's vectors kept, so that the float32 reference below is
	// the same vectors without embedding 20,000 tools twice.
	emb := &keptEmbedder{emb: builtin, kept: map[string][]float32{}}
	vs, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vs.Sync(ctx, col, cat, emb, SyncOptions{BatchSize: 1000}); err != nil {
		t.Fatal(err)
	}
	// Read back from the file, as a started server queries it.
	vs, _ = Open(vs.dir)
	domain := cat.Tools()[0].Domain
	ref := float32Rows(t, cat, emb)
	if emb.calls != 0 {
		t.Fatalf("the float32 reference embedded %d texts again", emb.calls)
	}
	queries := synth.Queries(200, 2)
	qvecs := make([][]float32, len(queries))
	for i, q := range queries {
		if qvecs[i], err = builtin.EmbedQuery(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		k      int
		domain string
	}{{10, ""}, {50, ""}, {10, domain}} {
		found, all := 0, 0
		for i, q := range queries {
			v := qvecs[i]
			vs.SetScanMode(ScanExact)
			exact, err := vs.Query(ctx, col, v, tc.k, tc.domain, "")
			if err != nil {
				t.Fatal(err)
			}
			vs.SetScanMode(ScanQuantized)
			quant, err := vs.Query(ctx, col, v, tc.k, tc.domain, "")
			if err != nil {
				t.Fatal(err)
			}
			sim := map[string]float32{}
			for _, h := range quant {
				sim[h.ID] = h.Similarity
			}
			for _, h := range exact {
				all++
				if s, ok := sim[h.ID]; ok {
					found++
					if s != h.Similarity {
						t.Fatalf("%q: %s has similarity %v quantized, %v exact", q, h.ID, s, h.Similarity)
					}
				}
			}
		}
		recall := float64(found) / float64(all)
		t.Logf("k=%d domain=%q: recall %.4f of %d", tc.k, tc.domain, recall, all)
		if all == 0 || recall < 0.99 {
			t.Errorf("k=%d domain=%q: the quantized scan found %d of the exact top %d's %d tools (%.4f), want at least 99%%", tc.k, tc.domain, found, tc.k, all, recall)
		}
		if tc.domain != "" {
			continue
		}
		vs.SetScanMode(ScanAuto)
		found, all = 0, 0
		for _, v := range qvecs {
			got, err := vs.Query(ctx, col, v, tc.k, "", "")
			if err != nil {
				t.Fatal(err)
			}
			in := map[string]bool{}
			for _, h := range got {
				in[h.ID] = true
			}
			for _, id := range ref.top(normalized(v), tc.k) {
				all++
				if in[id] {
					found++
				}
			}
		}
		recall = float64(found) / float64(all)
		t.Logf("k=%d: recall %.4f of the float32 exact scan's %d", tc.k, recall, all)
		if all == 0 || recall < 0.99 {
			t.Errorf("k=%d: queries of the file found %d of the float32 exact scan's top %d's %d tools (%.4f), want at least 99%%", tc.k, found, tc.k, all, recall)
		}
	}
}

// keptEmbedder embeds through emb what it has not embedded before, and
// keeps a copy of each text's vector: a text embedded again is answered
// from the copy (the built-in embedder gives a text the same vector
// every time). calls counts the texts that reached emb after the first
// time a text was answered from a copy.
type keptEmbedder struct {
	emb   DocumentEmbedder
	mu    sync.Mutex
	kept  map[string][]float32
	hits  int
	calls int
}

func (k *keptEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var missing []string
	var at []int
	k.mu.Lock()
	for i, text := range texts {
		if v, ok := k.kept[text]; ok {
			out[i] = slices.Clone(v)
			k.hits++
		} else {
			missing, at = append(missing, text), append(at, i)
		}
	}
	if k.hits > 0 {
		k.calls += len(missing)
	}
	k.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	vecs, err := k.emb.EmbedDocuments(ctx, missing)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for j, v := range vecs {
		k.kept[missing[j]] = slices.Clone(v)
		out[at[j]] = v
	}
	return out, nil
}

// f32Rows are a catalog's vectors as the embedder gives them, float32,
// normalised: the reference that float16 rows are measured against.
type f32Rows struct {
	ids  []string
	mat  []float32
	dims int
}

// float32Rows embeds cat's tools as a sync does (index.DocumentText).
func float32Rows(t *testing.T, cat *index.Catalog, emb DocumentEmbedder) *f32Rows {
	t.Helper()
	r := &f32Rows{}
	tools := cat.Tools()
	for lo := 0; lo < len(tools); lo += 1000 {
		var texts []string
		for _, tool := range tools[lo:min(lo+1000, len(tools))] {
			texts = append(texts, index.DocumentText(tool))
			r.ids = append(r.ids, tool.QualifiedName)
		}
		vecs, err := emb.EmbedDocuments(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vecs {
			r.dims = len(v)
			r.mat = append(r.mat, normalized(v)...)
		}
	}
	return r
}

// top returns the IDs of the k rows most similar to q.
func (r *f32Rows) top(q []float32, k int) []string {
	tk := topK{k: k}
	for i := range r.ids {
		tk.push(i, dot(q, r.mat[i*r.dims:(i+1)*r.dims]))
	}
	out := make([]string, 0, k)
	for _, e := range tk.items {
		out = append(out, r.ids[e.row])
	}
	return out
}

// toV5 returns a snapshot file of the current format as the format
// before the quantized rows wrote it: without them, sealed again.
func toV5(t *testing.T, data []byte) []byte {
	t.Helper()
	return toOld(t, data, snapV5)
}

// toOld returns a snapshot file of the current format as the earlier
// format magic (snapV5, snapV6 or snapV7) wrote it: without the domain
// sums; then (snapV5, snapV6) its float16 matrix as float32 (the same
// values), then (snapV6) the quantized section, its bits after 0 or 4
// bytes of padding, sealed again.
func toOld(t *testing.T, data []byte, magic string) []byte {
	t.Helper()
	body, err := checksum.Body(data)
	if err != nil {
		t.Fatal(err)
	}
	dims, rows := int(binary.LittleEndian.Uint32(body[24:])), int(binary.LittleEndian.Uint32(body[28:]))
	// No domain sums before TSSNAP08: the header's last word was 0.
	body = slices.Clone(body[:len(body)-4*dims*int(binary.LittleEndian.Uint32(body[36:]))])
	binary.LittleEndian.PutUint32(body[36:], 0)
	if magic == snapV7 {
		copy(body, magic)
		return checksum.Append(body)
	}
	_, q, _ := snapfile.QuantLayout(rows, dims)
	matEnd := len(body) - int(q)
	strEnd := matEnd - 2*rows*dims
	old := slices.Clone(body[:strEnd])
	copy(old, magic)
	for _, h := range snapfile.Uint16s(body[strEnd:matEnd], rows*dims) {
		old = binary.LittleEndian.AppendUint32(old, math.Float32bits(snapfile.HalfFloat(h)))
	}
	if magic == snapV6 && rows > 0 {
		old = append(old, body[matEnd:matEnd+4*dims]...) // centres
		for len(old)%8 != 0 {
			old = append(old, 0)
		}
		old = append(old, body[len(body)-rows*((dims+63)/64)*8:]...)
	}
	return checksum.Append(old)
}

// TestV5SnapshotOpens: a collection file of an earlier format, before
// the quantized rows ("TSSNAP05", quantized in memory) or with float32
// vectors ("TSSNAP06"), is still read: a query answers from it as from
// the current format, writes nothing and says once in the log that the
// next index writes it again; the next sync writes it in the current
// format without embedding anything, and says so.
func TestV5SnapshotOpens(t *testing.T) {
	for _, magic := range []string{snapV5, snapV6, snapV7} {
		t.Run(magic, func(t *testing.T) { testOldSnapshotOpens(t, magic) })
	}
}

func testOldSnapshotOpens(t *testing.T, magic string) {
	ctx := context.Background()
	a, b := deltaCatalogs(t)
	dir, base, delta := syncedDelta(t, a, b)
	for _, f := range []string{base, delta} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if string(data[:8]) != snapMagic {
			t.Fatalf("%s starts %q, want %s", f, data[:8], snapMagic)
		}
		os.WriteFile(f, toOld(t, data, magic), 0o644)
	}
	ref, _ := Open("")
	if _, err := ref.Sync(ctx, testCol, b, &indextest.CountingEmbedder{}, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	q := indextest.HashVec(index.DocumentText(b.Tools()[0]))
	want, _ := ref.Query(ctx, testCol, q, 5, "", "")

	ro := OpenReadOnly(dir)
	var logged bytes.Buffer
	ro.SetLogger(slog.New(slog.NewTextHandler(&logged, nil)))
	ro.SetScanMode(ScanQuantized)
	before := dirState(t, dir)
	for range 2 {
		got, err := ro.Query(ctx, testCol, q, 5, "", "")
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("query of a %s file = %v, %v; want %v", magic, got, err, want)
		}
	}
	if !slices.Equal(before, dirState(t, dir)) {
		t.Fatal("a query of a " + magic + " file wrote to the data dir")
	}
	// "(" + magic: the temporary dir in the line is named after the subtest.
	if n := strings.Count(logged.String(), "("+magic); n != 1 {
		t.Errorf("the queries logged %d mentions of %s, want one:\n%s", n, magic, logged.String())
	}

	vs, err := Open(dir) // the delta makes the open read it, and heal
	if err != nil {
		t.Fatal(err)
	}
	emb := &indextest.CountingEmbedder{}
	if _, err := vs.Sync(ctx, testCol, b, emb, SyncOptions{}); err != nil || emb.Texts != 0 {
		t.Fatalf("sync of a %s collection: %v, %d embedded; want nothing embedded", magic, err, emb.Texts)
	}
	if h := vs.Healed(); len(h) != 1 || !strings.Contains(h[0], magic) || !strings.Contains(h[0], "written again") {
		t.Errorf("Healed = %q; want one line saying the %s file was written again", h, magic)
	}
	data, _ := os.ReadFile(base)
	if string(data[:8]) != snapMagic {
		t.Errorf("after the sync the collection file starts %q, want %s", data[:8], snapMagic)
	}
	if _, err := os.Stat(delta); err == nil {
		t.Error("the " + magic + " delta is still there: want it merged into the file written again")
	}
	sameVectors(t, "after the rewrite", vs, b)
	again, _ := Open(dir)
	if got, err := again.Query(ctx, testCol, q, 5, "", ""); err != nil || !slices.Equal(got, want) || len(again.Healed()) != 0 {
		t.Errorf("the next open: %v, %v, healed %q", got, err, again.Healed())
	}
}

// TestV5RewrittenAfterAQuery: in a store open for writing whose first
// read of a TSSNAP05 collection was a query's (a serve), the next sync
// writes it in the current format even when no tool changed.
func TestV5RewrittenAfterAQuery(t *testing.T) {
	ctx := context.Background()
	cat := indextest.MustCatalog(t, indextest.SmallCatalog)
	dir := t.TempDir()
	vs, _ := Open(dir)
	if _, err := vs.Sync(ctx, testCol, cat, &indextest.CountingEmbedder{}, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	path := vs.fileOf(testCol.Name())
	data, _ := os.ReadFile(path)
	os.WriteFile(path, toV5(t, data), 0o644)
	vs, _ = Open(dir)
	if _, err := vs.Query(ctx, testCol, indextest.HashVec("files"), 3, "", ""); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data[:8]) != snapV5 {
		t.Fatalf("the query rewrote the file: it starts %q", data[:8])
	}
	emb := &indextest.CountingEmbedder{}
	if _, err := vs.Sync(ctx, testCol, cat, emb, SyncOptions{}); err != nil || emb.Texts != 0 {
		t.Fatalf("sync: %v, %d embedded", err, emb.Texts)
	}
	if data, _ := os.ReadFile(path); string(data[:8]) != snapMagic || len(vs.Healed()) != 1 {
		t.Errorf("after a sync with nothing changed the file starts %q, healed %q; want %s and one line", data[:8], vs.Healed(), snapMagic)
	}
}

// TestScanEnv: TOOLSCOUT_VECTOR_SCAN chooses the scan; a value it does
// not know is refused with what it takes, by Open and, for a read-only
// store, by its queries.
func TestScanEnv(t *testing.T) {
	for _, v := range []string{"", "auto", "exact", "quantized"} {
		t.Setenv(ScanEnv, v)
		if _, err := Open(""); err != nil {
			t.Errorf("%s=%q: %v", ScanEnv, v, err)
		}
	}
	t.Setenv(ScanEnv, "fast")
	_, err := Open("")
	if err == nil || !strings.Contains(err.Error(), ScanEnv+`="fast"`) || !strings.Contains(err.Error(), "exact") {
		t.Errorf("Open with %s=fast = %v; want an error naming the variable and its values", ScanEnv, err)
	}
	ro := OpenReadOnly(t.TempDir())
	if _, err := ro.Query(context.Background(), testCol, make([]float32, testCol.Dims), 5, "", ""); err == nil || !strings.Contains(err.Error(), ScanEnv) {
		t.Errorf("read-only query with %s=fast = %v; want the same error", ScanEnv, err)
	}
}

// TestDamagedQuantizedRowsRecomputed: a byte changed in the quantized
// rows alone (a MiB of checksums holding nothing else) fails the
// checksums like any other; the write path computes the bits again from
// the vectors, which are whole, and writes the file again: no tool lost,
// one warning, and the bits read back as the vectors' own.
func TestDamagedQuantizedRowsRecomputed(t *testing.T) {
	racetest.Plain(t)
	// One dimension: 8 bytes of bits a row against 2 of matrix, so that
	// the last MiB of the file holds bits only: 160,000 rows are 1.28 MB
	// of bits, more than a chunk (1 MiB) whatever the rest of the file.
	col := Collection{Provider: "test", Model: "narrow", Dims: 1}
	want := snapFixture(160000, col.Dims)
	dir := t.TempDir()
	path := (&Store{dir: dir}).fileOf(col.Name())
	if err := writeSnap(path, want, nil, newFileID(), 0); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	body := len(data) - checksum.FooterLen(data)
	_, q, _ := snapfile.QuantLayout(len(want.ids), col.Dims)
	if last := (body - 1) / checksum.ChunkSize * checksum.ChunkSize; last < body-int(q) {
		t.Fatalf("the fixture's last chunk starts at %d, in the matrix (quantized rows from %d)", last, body-int(q))
	}
	data[body-20] ^= 0x40
	os.WriteFile(path, data, 0o644)
	if _, _, _, err := readSnap(path); !errors.Is(err, checksum.ErrMismatch) {
		t.Fatalf("readSnap of a file with a changed bit = %v, want a checksum mismatch", err)
	}
	vs, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	vs.mu.Lock()
	vs.readLocked(col.Name(), true)
	vs.mu.Unlock()
	if n, h := vs.Count(col), vs.Healed(); n != len(want.ids) || len(h) != 1 || !strings.Contains(h[0], "only its quantized rows") {
		t.Fatalf("%d of %d vectors kept, healed %q; want all and one line saying only the quantized rows", n, len(want.ids), h)
	}
	s, _, _, err := readSnap(path)
	if err != nil {
		t.Fatalf("the file written again: %v", err)
	}
	if ref := s.file().Quantized(); !slices.Equal(s.signs.Bits, ref.Bits) || !slices.Equal(s.signs.Centre, ref.Centre) {
		t.Error("the file written again holds other bits than its vectors'")
	}
}
