package boot

import (
	"context"
	"errors"
	"fmt"
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
// dir leads every Builds.Every; when that changed, it opens the new
// build read-only, checks that it holds the catalog and vectors it
// serves, and swaps it in whole: searches started before finish on the
// previous build, later ones see only the new one, and a build that does
// not check out is not served (the previous one stays, with a warning).
// The previous build's mapped files (fileio.ReadMapped) stay mapped until
// the process exits: its catalog's strings may point into them.

// Builds says where a read-only server finds newer builds.
type Builds struct {
	// DataDir is the data dir as given (a symbolic link); Serving is the
	// folder it led to when the store was opened ("" when it could not
	// be resolved: no newer build is looked for).
	DataDir, Serving string
	// Every is how often to look where DataDir leads (0: never).
	Every time.Duration
	// Open opens the build in dir read-only (the caller opens stores:
	// store.OpenWith in one place), with the catalog files as they are
	// now.
	Open func(ctx context.Context, dir string) (*store.Store, error)
	// Embedder makes the embedder a newer build is served with.
	Embedder func(ctx context.Context) (search.Embedder, error)
}

// maxRetryWait bounds the wait between two tries of a refused build.
const maxRetryWait = 10 * time.Second

// watchBuilds swaps in each newer build the data dir leads to, until ctx
// ends.
func (s *Starter) watchBuilds(ctx context.Context) {
	b := s.opts.Builds
	serving := b.Serving // resolved before the store was opened
	if serving == "" {
		s.log.Warn("cannot watch the data dir for newer builds: it could not be resolved at start", "data_dir", b.DataDir)
		return
	}
	if fi, err := os.Lstat(b.DataDir); err == nil && fi.Mode()&os.ModeSymlink == 0 {
		s.log.Info("newer builds are picked up when --data-dir is a symbolic link switched to them; this one is a folder", "data_dir", b.DataDir)
	}
	t := time.NewTicker(b.Every)
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
		now, err := filepath.EvalSymlinks(b.DataDir)
		if err != nil || now == serving {
			continue // mid-switch, or unchanged
		}
		if now == refused && time.Now().Before(retryAt) {
			continue
		}
		err = s.swapBuild(ctx, now) // the link resolved once
		switch {
		case errors.Is(err, search.ErrClosed):
			return // the server is shutting down
		case err == nil:
			if now == refused {
				s.log.Info("the newer build refused before is served now", "build", now)
			}
			serving, refused = now, ""
		default:
			if now != refused {
				s.log.Warn("a newer build of the data dir is not served; serving the previous one, and trying it again until it is complete", "build", now, "err", err)
				refused, wait = now, b.Every
			} else {
				s.log.Debug("a newer build is still not served", "build", now, "err", err)
				wait = min(2*wait, max(b.Every, maxRetryWait))
			}
			retryAt = time.Now().Add(wait)
		}
	}
}

// swapBuild opens the build in dir and swaps it in.
func (s *Starter) swapBuild(ctx context.Context, dir string) error {
	// The catalog files as they are now: the new build was made from
	// them, perhaps changed. The store gives their catalog, as at start.
	st, err := s.opts.Builds.Open(ctx, dir)
	if err != nil {
		return err
	}
	cat, err := st.Catalog(ctx)
	if err != nil {
		st.Close()
		if errors.Is(err, index.ErrNoIndex) {
			err = fmt.Errorf("%w (build one with toolscout index --data-dir A_NEW_FOLDER, not into the folder being served, then switch the link to it)", err)
		}
		return err
	}
	emb, err := s.opts.Builds.Embedder(ctx)
	if err != nil {
		st.Close()
		return err
	}
	if err := s.opts.Live.Swap(ctx, st, cat, emb); err != nil {
		st.Close()
		return err
	}
	s.store.Store(st)
	if s.opts.Feedback != nil {
		// The build's events, which fold in what replicas wrote out.
		events, _ := st.Feedback().Events()
		s.opts.Feedback.Reset(events)
	}
	cat.PrepareLookups()
	return nil
}
