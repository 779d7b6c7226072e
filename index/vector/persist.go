package vector

import (
	"context"
	"fmt"

	"github.com/toolscout/toolscout/internal/fileio"
)

// persist writes the named collection's snapshot file whole: a temporary
// file, synced, then renamed over the old one, so that a kill leaves
// either version whole; then it removes the delta the new file holds (a
// delta left by a kill in between names the old file's id, and is
// dropped when read). s is one layer (no delta); nil writes the
// migration's chromem-go collection. It returns the layer as the file
// holds it (float16: what a process that reads the file serves, in half
// the bytes of s's float32), its id set. Callers make sure no write to
// the collection runs meanwhile.
func (v *Store) persist(name string, s *snapshot) (*snapshot, error) {
	s, err := v.write(name, s)
	if s == nil || err != nil {
		return nil, err
	}
	return s.asWritten(s.id), nil
}

// write is persist without the layer as the file holds it, for a caller
// that does not keep it (a sync's checkpoint: a float16 copy of every row
// embedded so far, each time, was garbage at once). It returns what it
// wrote, its id set.
func (v *Store) write(name string, s *snapshot) (*snapshot, error) {
	if v.dir == "" {
		if s == nil {
			return nil, nil
		}
		return s, nil
	}
	var err error
	if s == nil { // the migration's chromem-go collection
		if s, err = buildSnapshot(context.Background(), v.db.GetCollection(name, noEmbed), dimsOf(name)); err != nil {
			return nil, fmt.Errorf("write vector collection %s: %w", name, err)
		}
		if s == nil {
			s = &snapshot{dims: dimsOf(name)}
		}
	}
	id := newFileID()
	if err := writeSnap(v.fileOf(name), s, nil, id, 0); err != nil {
		return nil, fmt.Errorf("write vector collection %s: %w", name, err)
	}
	if err := v.removeDelta(name); err != nil {
		return nil, fmt.Errorf("write vector collection %s: %w", name, err)
	}
	fileio.SyncDir(v.dir)
	s.id = id // a caller that keeps s (Sync) names this file in its deltas
	return s, nil
}
