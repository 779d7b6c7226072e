package search

import (
	"context"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
)

// FeedbackEvent is one recorded run that feeds the feedback channel
// (index/store owns the events; eval makes them from datasets).
type FeedbackEvent = store.FeedbackEvent

// StoreOpener opens the store of indexes named key in a data dir (eval:
// a dataset's catalog hash and an embedder; the same key, the same
// indexes). cmd/toolscout's openStore is behind it, as for every other
// command.
type StoreOpener func(key string) (*store.Store, error)

// OpenNamed opens the store named key through stores (in memory when
// stores is nil) and Open over it: opts.Store is that store, which the
// Live index then owns. On an error the store is closed.
func OpenNamed(ctx context.Context, stores StoreOpener, key string, opts LiveOptions, specs []index.DomainSpec) (*Live, store.Stats, error) {
	var (
		st  *store.Store
		err error
	)
	if stores == nil {
		st, err = store.Memory()
	} else {
		st, err = stores(key)
	}
	if err != nil {
		return nil, store.Stats{}, err
	}
	opts.Store = st
	live, stats, err := Open(ctx, opts, specs)
	if err != nil {
		st.Close()
		return nil, stats, err
	}
	return live, stats, nil
}
