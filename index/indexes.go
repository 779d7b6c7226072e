package index

import (
	"errors"
	"fmt"

	"github.com/toolscout/toolscout/internal/fault"
)

// What the indexes (index/keyword, index/vector) and the data dir that
// holds them (index/store) share: the counts of a sync and the errors
// callers tell apart.

// SyncStats counts what a Sync changed.
type SyncStats struct {
	Added, Changed, Removed, Unchanged int
}

// String reads "N added, N changed, N removed, N unchanged".
func (s SyncStats) String() string {
	return fmt.Sprintf("%d added, %d changed, %d removed, %d unchanged", s.Added, s.Changed, s.Removed, s.Unchanged)
}

// ErrReadOnly means a store opened read-only was asked to write.
var ErrReadOnly = errors.New("the data dir is open read-only")

// ErrNoIndex means a store opened read-only found no index to read.
var ErrNoIndex = errors.New("no index in the data dir")

// ErrDamaged means an index on disk could not be read. Stores heal it by
// rebuilding the damaged part from the catalog; searches that meet it
// answer with this error instead of crashing.
var ErrDamaged = fault.ErrDamaged
