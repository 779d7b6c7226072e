package vector

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/fileio"
	"github.com/toolscout/toolscout/internal/indextest"
	"github.com/toolscout/toolscout/internal/racetest"
	"github.com/toolscout/toolscout/internal/synth"
)

// killingEmbedder embeds as indextest.CountingEmbedder does and, at its
// call at, copies the store's directory as it is on disk then: what a
// kill -9 of `toolscout index` at that moment would leave.
type killingEmbedder struct {
	indextest.CountingEmbedder
	at        int
	calls     int
	dir, copy string
	err       error
}

func (k *killingEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	if k.calls++; k.calls == k.at {
		k.err = os.CopyFS(k.copy, os.DirFS(k.dir))
	}
	return k.CountingEmbedder.EmbedDocuments(ctx, texts)
}

// TestColdSyncCheckpointKilled: a cold sync killed between two of its
// checkpoints leaves a collection file holding the rows of the batches
// checkpointed; the next sync over that directory embeds only the rest,
// and ends with the vectors and answers of a sync that was never killed.
func TestColdSyncCheckpointKilled(t *testing.T) {
	ctx := context.Background()
	cat, err := synth.Catalog(600, 3)
	if err != nil {
		t.Fatal(err)
	}
	const batch, killAt = 20, 11
	dir := t.TempDir()
	vs, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	emb := &killingEmbedder{at: killAt, dir: dir, copy: t.TempDir()}
	opts := SyncOptions{BatchSize: batch, Concurrency: 1, CheckpointEvery: time.Nanosecond}
	if _, err := vs.Sync(ctx, testCol, cat, emb, opts); err != nil {
		t.Fatal(err)
	}
	if emb.err != nil {
		t.Fatalf("copy of the directory mid-sync: %v", emb.err)
	}
	// The "killed" directory: opened and synced again.
	again, err := Open(emb.copy)
	if err != nil {
		t.Fatalf("open the directory of a killed sync: %v", err)
	}
	if healed := again.Healed(); len(healed) > 0 {
		t.Errorf("the directory of a killed sync needed healing: %v", healed)
	}
	ce := &indextest.CountingEmbedder{}
	st, err := again.Sync(ctx, testCol, cat, ce, opts)
	if err != nil {
		t.Fatal(err)
	}
	// Every batch before the kill was checkpointed (one a batch here).
	if want := (killAt - 1) * batch; st.Unchanged != want || st.Added != len(cat.Tools())-want {
		t.Errorf("sync after the kill: %+v, want %d unchanged and %d added", st, want, len(cat.Tools())-want)
	}
	sameVectors(t, "after the kill", again, cat)
	reopened, err := Open(emb.copy)
	if err != nil {
		t.Fatal(err)
	}
	sameVectors(t, "reopened", reopened, cat)
}

// TestColdSyncCheckpointsCopyNoMatrix: a cold sync's checkpoints write
// the rows embedded so far from the matrix they were embedded into; they
// do not copy it. Before, each checkpoint built a snapshot of copies of
// the rows so far (patchSnapshot), up to the whole matrix each time: at
// 1M tools 2.56 GB, which made most of the cold index's 15 GB peak.
// Here a checkpoint after every batch (9): with a copy each, the sync
// allocates about 10 times the matrix's size; without, under six (the
// embedder's vectors, their normalised copies, the matrix, and each
// file write's 1 MiB buffer). On 2,000 tools (issue 47, item 5: 4,000
// and 19 checkpoints were 14 and under six times, for twice the CPU
// under -race); smaller batches would make the buffers, not the
// matrix, the most of what is allocated.
func TestColdSyncCheckpointsCopyNoMatrix(t *testing.T) {
	racetest.Plain(t)
	ctx := context.Background()
	const batch = 200
	c := coldSync(t, 5, SyncOptions{BatchSize: batch, Concurrency: 1, CheckpointEvery: time.Nanosecond}, false)
	cat, vs, col, matrix, before, after := c.cat, c.vs, c.col, c.matrix, c.before, c.after
	t.Logf("allocated %.2f times the matrix", float64(after.TotalAlloc-before.TotalAlloc)/float64(matrix))
	if got := after.TotalAlloc - before.TotalAlloc; got > 8*matrix {
		t.Errorf("a cold sync of %d tools with %d checkpoints allocated %d MB, %.1f times its %d MB matrix; want at most 8 times",
			len(cat.Tools()), len(cat.Tools())/batch, got>>20, float64(got)/float64(matrix), matrix>>20)
	}
	s, err := vs.snapshot(ctx, col)
	if err != nil || s == nil || s.count() != len(cat.Tools()) {
		t.Fatalf("snapshot after the sync: %v rows, %v", s, err)
	}
}

// coldRun is what coldSync measured.
type coldRun struct {
	cat           *index.Catalog
	vs            *Store
	col           Collection
	matrix        uint64 // the bytes of the collection's float32 matrix
	before, after runtime.MemStats
}

// coldSync syncs 2,000 synthetic tools (catalog seed seed) into a new
// data dir's collection of 1,024 dimensions with opts, reading the
// memory statistics after a GC before it and after it (after another GC
// when gcAfter).
func coldSync(t *testing.T, seed int64, opts SyncOptions, gcAfter bool) coldRun {
	t.Helper()
	cat, err := synth.Catalog(2000, seed)
	if err != nil {
		t.Fatal(err)
	}
	const dims = 1024
	c := coldRun{cat: cat, col: Collection{Provider: "test", Model: "random", Dims: dims}, matrix: uint64(len(cat.Tools()) * dims * 4)}
	if c.vs, err = Open(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&c.before)
	if _, err := c.vs.Sync(context.Background(), c.col, cat, plainRandom{dims}, opts); err != nil {
		t.Fatal(err)
	}
	if gcAfter {
		runtime.GC()
	}
	runtime.ReadMemStats(&c.after)
	return c
}

// plainRandom embeds every text as the same pseudo-random vector: what
// it allocates is its vectors alone.
type plainRandom struct{ dims int }

func (p plainRandom) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		v := make([]float32, p.dims)
		for j := range v {
			v[j] = float32((i*31+j*17)%13) - 6
		}
		out[i] = v
	}
	return out, nil
}

// TestColdSyncMatrixOffHeap: a cold sync into a directory embeds into a
// matrix outside the Go heap and lets it go once the file is written;
// the collection is then read from the file. Before, the matrix stayed
// in the heap (at 100k tools 256 MB, twice that in peak memory with
// GOGC 100), held by the store after the sync.
func TestColdSyncMatrixOffHeap(t *testing.T) {
	ctx := context.Background()
	c := coldSync(t, 7, SyncOptions{BatchSize: 100}, true)
	cat, vs, col, matrix, before, after := c.cat, c.vs, c.col, c.matrix, c.before, c.after
	t.Logf("the heap grew by %.3f times the matrix", float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(matrix))
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > int64(matrix/4) {
		t.Errorf("after a cold sync of %d tools the heap holds %d MB more, its matrix is %d MB: want the matrix out of the heap", len(cat.Tools()), grew>>20, matrix>>20)
	}
	s, err := vs.snapshot(ctx, col)
	if err != nil || s == nil || s.count() != len(cat.Tools()) {
		t.Fatalf("snapshot read back after the sync: %v, %v", s, err)
	}
	for _, tool := range cat.Tools()[:20] {
		l, i := s.find(tool.QualifiedName)
		if l == nil || l.hash[i] != tool.Hash {
			t.Fatalf("%s not in the collection read back", tool.QualifiedName)
		}
	}
	runtime.KeepAlive(vs)
}

// TestKilledColdSyncRowFile: a cold sync into a directory embeds into a
// temporary file beside the collection's (rowfile.go). A kill mid-sync
// leaves it there, beside the last checkpoint: the next Open removes it
// once it is older than a write in progress can be (fileio.LeftoverAge),
// and the collection is the checkpoint's, whole.
func TestKilledColdSyncRowFile(t *testing.T) {
	ctx := context.Background()
	cat, err := synth.Catalog(600, 3)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	vs, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	emb := &killingEmbedder{at: 11, dir: dir, copy: t.TempDir()}
	opts := SyncOptions{BatchSize: 20, Concurrency: 1, CheckpointEvery: time.Nanosecond}
	if _, err := vs.Sync(ctx, testCol, cat, emb, opts); err != nil {
		t.Fatal(err)
	}
	if emb.err != nil {
		t.Fatalf("copy of the directory mid-sync: %v", emb.err)
	}
	if _, err := os.Stat(rowFileOf(vs.fileOf(testCol.Name()))); !os.IsNotExist(err) {
		t.Errorf("after the sync its row file is still there (%v)", err)
	}
	left := rowFileOf(filepath.Join(emb.copy, filepath.Base(vs.fileOf(testCol.Name()))))
	if _, err := os.Stat(left); err != nil {
		t.Fatalf("the killed sync's directory has no row file: %v", err)
	}
	old := time.Now().Add(-2 * fileio.LeftoverAge)
	if err := os.Chtimes(left, old, old); err != nil {
		t.Fatal(err)
	}
	again, err := Open(emb.copy)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("Open left the killed sync's row file (%v)", err)
	}
	s, err := again.snapshot(ctx, testCol)
	if err != nil || s == nil || s.count() != 10*20 {
		t.Fatalf("the killed sync's collection: %v, %v; want the 200 rows checkpointed", s, err)
	}
}
