package vector

import (
	"bufio"
	"context"
	"fmt"

	"github.com/toolscout/toolscout/internal/fileio"
)

// persist writes the named collection's file whole: a temporary file,
// synced, then renamed over the old one, so that a kill leaves either
// version whole; then its snapshot, and removes the delta it now holds.
// s is one layer (no delta). Callers make sure no write to the
// collection runs meanwhile.
func (v *Store) persist(name string, s *snapshot) (*snapshot, error) {
	if v.dir == "" {
		return nil, nil
	}
	path := v.fileOf(name)
	var err error
	if s == nil { // the migration's chromem-go collection
		if s, err = buildSnapshot(context.Background(), v.db.GetCollection(name, noEmbed), dimsOf(name)); err != nil {
			return nil, fmt.Errorf("write vector collection %s: %w", name, err)
		}
	}
	// The export is written from the snapshot: a patched one holds what a
	// whole sync would (TestPatchedSnapshotMatchesTheCollection).
	var rows []snapRow
	if s != nil {
		rows = make([]snapRow, 0, s.count())
		s.each(func(l *snapshot, i int) { rows = append(rows, l.rowOf(i)) })
	}
	err = fileio.WriteAtomic(path, func(w *bufio.Writer) error { return writeExport(w, name, nil, rows) })
	if err != nil {
		return nil, fmt.Errorf("write vector collection %s: %w", name, err)
	}
	// The snapshot file goes second: if a kill comes between the two, the
	// snapshot no longer matches the .gob and is rebuilt from it; the
	// delta names the old .gob and is ignored.
	if s != nil {
		err = writeSnap(path, s, nil, fileTag{})
	}
	if err == nil {
		err = v.removeDelta(name)
	}
	if err != nil {
		return nil, fmt.Errorf("write vector snapshot %s: %w", name, err)
	}
	fileio.SyncDir(v.dir)
	return s, nil
}
