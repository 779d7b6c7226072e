package store

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index/vector"
	"github.com/toolscout/toolscout/internal/indextest"
)

// fitCounting is the built-in embedder, counting its fits: passes of Fit
// over the documents, and fits from the documents it embedded.
type fitCounting struct {
	*embed.Builtin
	fits, passes int
}

func (c *fitCounting) Fit(docs []string) { c.fits++; c.passes++; c.Builtin.Fit(docs) }

func (c *fitCounting) FitCounted(n int) bool {
	ok := c.Builtin.FitCounted(n)
	if ok {
		c.fits++
	}
	return ok
}

// TestSyncRunsTheFit: the store runs the embedder's fit on the vector
// path of a sync, through the interfaces it declares. A first sync fits
// from the documents it embeds (no pass of its own) and saves the
// statistics; the next start restores them (no fit); statistics lost
// while the vectors stayed (a kill between the two writes) are fitted
// again with a warning and saved; a read-only store restores them, or
// fits them (with the same warning) for its process alone, saving
// nothing.
func TestSyncRunsTheFit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cat := indextest.MustCatalog(t, indextest.SmallCatalog)
	var logs bytes.Buffer
	sync := func(readOnly bool) (*fitCounting, error) {
		t.Helper()
		st, err := OpenWith(dir, Options{ReadOnly: readOnly, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		emb := &fitCounting{Builtin: embed.NewBuiltin(embed.BuiltinOptions{})}
		info := emb.Info()
		col := vector.Collection{Provider: info.Provider, Model: info.Model + "@" + emb.Fingerprint(), Dims: info.Dims}
		_, err = st.SyncWith(ctx, cat, SyncOptions{Embedder: emb, Collection: col})
		return emb, err
	}
	fits := func() []string {
		files, _ := filepath.Glob(filepath.Join(dir, "fit-*.bin"))
		return files
	}
	for _, step := range []struct {
		name                 string
		readOnly             bool
		before               func()
		wantFits, wantPasses int
		wantFiles            int
		warns                bool
	}{
		{"first sync", false, nil, 1, 0, 1, false},
		{"next start", false, nil, 0, 0, 1, false},
		{"statistics lost", false, func() { os.Remove(fits()[0]) }, 1, 1, 1, true},
		{"read-only", true, nil, 0, 0, 1, false},
		{"read-only, statistics lost", true, func() { os.Remove(fits()[0]) }, 1, 1, 0, true},
	} {
		if step.before != nil {
			step.before()
		}
		logs.Reset()
		emb, err := sync(step.readOnly)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if emb.fits != step.wantFits || emb.passes != step.wantPasses || len(fits()) != step.wantFiles {
			t.Errorf("%s: %d fits (%d passes), %d files saved; want %d (%d), %d", step.name, emb.fits, emb.passes, len(fits()), step.wantFits, step.wantPasses, step.wantFiles)
		}
		if warned := strings.Contains(logs.String(), "do not match the catalog"); warned != step.warns {
			t.Errorf("%s: warned %v, want %v:\n%s", step.name, warned, step.warns, logs.String())
		}
	}
}
