package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/search"
)

// A read-only server picks up a newer build of its data dir without a
// restart. The rollout: build the new index into a folder of its own
// (toolscout index --data-dir /srv/toolscout/build-8), then point the
// data dir the servers use, a symbolic link, at it in one step (ln -sfn
// build-8 next && mv -T next current). Each server looks where its data
// dir leads every --reload-interval; when that changed, it opens the new
// build read-only, checks that it holds the catalog and vectors it
// serves, and swaps it in whole: searches started before finish on the
// previous build, later ones see only the new one, and a build that does
// not check out is not served (the previous one stays, with a warning).
// The previous build's mapped files (fileio.ReadMapped) stay mapped until
// the process exits: its catalog's strings may point into them.

// watchBuilds swaps in each newer build the data dir leads to, until ctx
// ends.
func (g *globalFlags) watchBuilds(ctx context.Context, a *app, log *slog.Logger, every time.Duration) {
	serving := g.build // resolved before the store was opened
	if serving == "" {
		log.Warn("cannot watch the data dir for newer builds: it could not be resolved at start", "data_dir", g.dataDir)
		return
	}
	if fi, err := os.Lstat(g.dataDir); err == nil && fi.Mode()&os.ModeSymlink == 0 {
		log.Info("newer builds are picked up when --data-dir is a symbolic link switched to them; this one is a folder", "data_dir", g.dataDir)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	// A build refused (still being written by toolscout index, or
	// damaged) is tried again, less often each time up to maxRetryWait,
	// for as long as the link leads to it: one that completes later is
	// served then, so that replicas do not stay on different builds. Its
	// warning is logged once, with the first refusal's reason.
	var refused string
	var wait time.Duration
	var retryAt time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now, err := filepath.EvalSymlinks(g.dataDir)
		if err != nil || now == serving {
			continue // mid-switch, or unchanged
		}
		if now == refused && time.Now().Before(retryAt) {
			continue
		}
		g.build = now // what swapBuild opens: the link resolved once
		err = g.swapBuild(ctx, a, log)
		switch {
		case errors.Is(err, search.ErrClosed):
			return // the server is shutting down
		case err == nil:
			if now == refused {
				log.Info("the newer build refused before is served now", "build", now)
			}
			serving, refused = now, ""
		default:
			if now != refused {
				log.Warn("a newer build of the data dir is not served; serving the previous one, and trying it again until it is complete", "build", now, "err", err)
				refused, wait = now, every
			} else {
				log.Debug("a newer build is still not served", "build", now, "err", err)
				wait = min(2*wait, max(every, maxRetryWait))
			}
			retryAt = time.Now().Add(wait)
		}
	}
}

// maxRetryWait bounds the wait between two tries of a refused build.
const maxRetryWait = 10 * time.Second

// swapBuild opens the build the data dir leads to now and swaps it in.
func (g *globalFlags) swapBuild(ctx context.Context, a *app, log *slog.Logger) error {
	// The catalog files as they are now: the new build was made from
	// them, perhaps changed. The store gives their catalog, as at start.
	src, err := g.baseSource()
	if err != nil {
		return err
	}
	store, err := g.openStore(g.setRoot(), store.Options{Set: g.set(), ReadOnly: true, Catalog: src, Logger: log})
	if err != nil {
		return err
	}
	cat, err := store.Catalog(ctx)
	if err != nil {
		store.Close()
		if errors.Is(err, index.ErrNoIndex) {
			err = fmt.Errorf("%w (build one with toolscout index --data-dir A_NEW_FOLDER, not into the folder being served, then switch the link to it)", err)
		}
		return err
	}
	emb, err := g.newEmbedder(ctx, log, "")
	if err != nil {
		store.Close()
		return err
	}
	if err := a.live.Swap(ctx, store, cat, emb); err != nil {
		store.Close()
		return err
	}
	a.st.Store(store)
	if a.feedback != nil {
		// The build's events, which fold in what replicas wrote out.
		events, _ := store.Feedback().Events()
		a.feedback.Reset(events)
	}
	cat.PrepareLookups()
	return nil
}
