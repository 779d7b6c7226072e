package vector

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/toolscout/toolscout/internal/fileio"
)

// A delta holds what changed in a collection since its snapshot file was
// last written whole: the new and changed tools' vectors, and the IDs of
// the removed ones. A change of a few tools then writes a file of that
// size instead of the whole collection again.
//
// On disk: X.delta.snap beside X.snap, a snapshot file (writeSnap) of the
// delta's rows, with the removed IDs and the id of the base file it
// applies to. A delta written for another version of the base (a kill
// between a full write and the delta's removal) is dropped and removed
// without a warning: the base written whole holds what it held.
//
// A delta grows until it holds a tenth of the base's rows
// (deltaFraction); the next change then writes the collection whole and
// removes the delta.
const (
	deltaSuffix   = ".delta"
	deltaFraction = 10
)

// deltaFileOf returns the delta file of a collection file.
func deltaFileOf(path string) string {
	return strings.TrimSuffix(path, collectionExt) + deltaSuffix + collectionExt
}

// removeDelta removes the named collection's delta file.
func (v *Store) removeDelta(name string) error {
	if err := os.Remove(deltaFileOf(v.fileOf(name))); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// withDeltaFile returns base with the named collection's delta applied,
// or base when there is none. With heal (the open and the sync), a delta
// that cannot be read is removed (its tools are embedded again) and said
// in Healed; one written for another version of the base is removed
// silently. Without heal (a query) or read-only, neither is removed: base
// alone is returned, said once in the log, and Sync says what it lacks.
// v.mu is held.
func (v *Store) withDeltaFile(name string, base *snapshot, heal bool) *snapshot {
	dpath := deltaFileOf(v.fileOf(name))
	top, removed, forBase, err := readSnap(dpath)
	if errors.Is(err, os.ErrNotExist) {
		return base
	}
	if err == nil && forBase == base.id {
		fresh := make([]snapRow, len(top.ids))
		for i := range top.ids {
			fresh[i] = top.rowOf(i)
		}
		return base.withDelta(removed, fresh)
	}
	if !heal || v.readOnly {
		why := "it is for another version of the collection file"
		if err != nil {
			why = err.Error()
		}
		if !v.readOnly {
			v.unhealed[name] = "delta"
		}
		v.log.Warn("vector delta not applied; the collection is served without it, the file left as it is (queries never write) for the next open or index to heal", "file", dpath, "why", why)
		return base
	}
	v.removeDelta(name)
	if err != nil {
		v.healed = append(v.healed, fmt.Sprintf("vector delta %s could not be read (%v); removed, its tools are embedded again", dpath, err))
	}
	return base
}

// persistDelta writes s's delta layer as the named collection's delta
// file (a temporary file, synced, renamed), tied to the base file s was
// read from or written as.
func (v *Store) persistDelta(name string, s *snapshot) error {
	dpath := deltaFileOf(v.fileOf(name))
	if s.id == 0 {
		return fmt.Errorf("write vector delta %s: the base was never written", dpath)
	}
	if err := writeSnap(dpath, s.top, s.removed(), newFileID(), s.id); err != nil {
		return fmt.Errorf("write vector delta %s: %w", dpath, err)
	}
	fileio.SyncDir(v.dir)
	return nil
}
