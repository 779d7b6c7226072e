package vector_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/toolscout/toolscout/index/vector"
	"github.com/toolscout/toolscout/internal/synth"
)

// cancelingEmbedder cancels the sync's context after its first batches
// and, like the built-in embedder, never looks at the context itself.
type cancelingEmbedder struct {
	randomEmbedder
	after  int64
	calls  atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelingEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	if c.calls.Add(1) == c.after {
		c.cancel()
	}
	return c.randomEmbedder.EmbedDocuments(ctx, texts)
}

// TestSyncStopsWhenCanceled: a cold sync whose context ends (SIGTERM to
// `toolscout index`) stops embedding within the batches already running,
// says why, and keeps what it embedded, so the next sync resumes there.
// Before, an embedder that ignores the context (the built-in one) went
// on through the whole catalog, and the sync then reported success.
func TestSyncStopsWhenCanceled(t *testing.T) {
	cat, err := synth.Catalog(2000, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	vs, err := vector.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	col := vector.Collection{Provider: "test", Model: "random", Dims: 16}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	emb := &cancelingEmbedder{randomEmbedder: randomEmbedder{16}, after: 3, cancel: cancel}
	const batch, conc = 20, 2
	_, err = vs.Sync(ctx, col, cat, emb, vector.SyncOptions{BatchSize: batch, Concurrency: conc})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Sync after a cancel = %v, want context.Canceled", err)
	}
	if n, most := emb.calls.Load(), emb.after+conc; n > most {
		t.Errorf("%d batches embedded after a cancel at batch %d, want at most %d (of %d)", n, emb.after, most, len(cat.Tools())/batch)
	}
	// What was embedded is kept: the next sync embeds only the rest.
	again := &cancelingEmbedder{randomEmbedder: randomEmbedder{16}, after: -1, cancel: func() {}}
	st, err := vs.Sync(context.Background(), col, cat, again, vector.SyncOptions{BatchSize: batch, Concurrency: conc})
	if err != nil {
		t.Fatal(err)
	}
	if st.Unchanged == 0 || st.Added == len(cat.Tools()) {
		t.Errorf("the sync after a cancel re-embedded everything (%+v): the canceled sync kept nothing", st)
	}
}
