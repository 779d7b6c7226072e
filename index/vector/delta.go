package vector

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolscout/toolscout/internal/fileio"
)

// A delta holds what changed in a collection since its file was last
// written whole: the new and changed tools' vectors, and the IDs of the
// removed ones. A change of a few tools then writes a file of that size
// instead of the whole collection again (at 100k tools, chromem-go's
// export takes 4.8 s to write, most of it gob encoding every float).
//
// On disk: X.delta.gob, chromem-go's export of a collection named like
// the base holding the delta's documents, with the collection metadata
// "base" (the base file's size and modification time, which it applies
// to) and "removed" (a JSON array of IDs); and X.delta.snap, its snapshot
// (writeSnap, with the removed IDs and the base tag). A delta written for
// another version of the base (a kill between a full write and the
// delta's removal) is ignored and removed.
//
// A delta grows until it holds a tenth of the base's rows
// (deltaFraction); the next change then writes the collection whole and
// removes the delta.
const (
	deltaSuffix   = ".delta"
	metaBase      = "base"
	metaRemoved   = "removed"
	deltaFraction = 10
)

// deltaFileOf returns the delta file of a collection file.
func deltaFileOf(path string) string {
	return strings.TrimSuffix(path, collectionExt) + deltaSuffix + collectionExt
}

func (t fileTag) String() string { return fmt.Sprintf("%d:%d", t.size, t.mtime) }

// removeDelta removes the named collection's delta files.
func (v *Store) removeDelta(name string) error {
	d := deltaFileOf(v.fileOf(name))
	for _, f := range []string{d, snapPathOf(d)} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// withDeltaFile returns base with the named collection's delta applied,
// or base when there is none. The delta's snapshot is read when it is
// whole and matches its .gob, else the .gob, and the snapshot written
// again (said in Healed when it was damaged). A .gob without a checksum
// is taken only when unsealed is true: the caller writes the collection
// whole, the delta merged in. v.mu is held.
func (v *Store) withDeltaFile(name string, base *snapshot, unsealed bool) *snapshot {
	path := v.fileOf(name)
	dpath := deltaFileOf(path)
	if _, err := os.Stat(dpath); err != nil {
		return base
	}
	bt, err := tagOf(path)
	if err != nil {
		return base
	}
	top, removed, forBase, serr := readSnap(dpath)
	err = serr
	if serr != nil {
		// A kill between the delta's two writes: its .gob is whole.
		var sealed bool
		top, removed, forBase, sealed, err = readDeltaGob(dpath, name)
		switch {
		case err != nil || forBase != bt:
		case !sealed && !unsealed:
			err = errors.New("written by an earlier toolscout, without a checksum")
		case sealed && !v.readOnly:
			writeSnap(dpath, top, removed, forBase)
			if snapDamaged(serr) {
				v.healed = append(v.healed, fmt.Sprintf("vector delta snapshot %s could not be read (%v); rebuilt from %s", snapPathOf(dpath), serr, filepath.Base(dpath)))
			}
		}
	}
	if (err != nil || forBase != bt) && v.readOnly {
		// The base alone, which lacks what the delta held: Sync says so.
		return base
	}
	if err != nil || forBase != bt {
		// Unreadable, or written for another version of the base: the
		// base alone. The tools the delta held are embedded again.
		v.removeDelta(name)
		if err != nil {
			v.healed = append(v.healed, fmt.Sprintf("vector delta %s could not be read (%v); removed, its tools are embedded again", dpath, err))
		}
		return base
	}
	fresh := make([]snapRow, len(top.ids))
	for i := range top.ids {
		fresh[i] = top.rowOf(i)
	}
	return base.withDelta(removed, fresh)
}

// readDeltaGob reads a delta's .gob: its rows, removed IDs and base tag,
// and whether it carried a checksum (readExport).
func readDeltaGob(dpath, name string) (top *snapshot, removed []string, bt fileTag, sealed bool, err error) {
	docs, meta, sealed, err := readExport(dpath, name)
	if err != nil {
		return nil, nil, bt, false, err
	}
	if _, err := fmt.Sscanf(meta[metaBase], "%d:%d", &bt.size, &bt.mtime); err != nil {
		return nil, nil, bt, false, fmt.Errorf("delta without a base tag: %w", err)
	}
	if r := meta[metaRemoved]; r != "" {
		if err := json.Unmarshal([]byte(r), &removed); err != nil {
			return nil, nil, bt, false, fmt.Errorf("delta removed list: %w", err)
		}
	}
	top, err = snapshotOf(docs, dimsOf(name))
	return top, removed, bt, sealed, err
}

// persistDelta writes s's delta layer as the named collection's delta
// files (.gob, then .snap; each a temporary file, synced, renamed).
func (v *Store) persistDelta(name string, s *snapshot) error {
	path := v.fileOf(name)
	dpath := deltaFileOf(path)
	bt, err := tagOf(path)
	if err != nil {
		return fmt.Errorf("write vector delta %s: %w", dpath, err)
	}
	removed := s.removed()
	raw, err := json.Marshal(removed)
	if err != nil {
		return err
	}
	rows := make([]snapRow, len(s.top.ids))
	for i := range rows {
		rows[i] = s.top.rowOf(i)
	}
	meta := map[string]string{metaBase: bt.String(), metaRemoved: string(raw)}
	err = fileio.WriteAtomic(dpath, func(w *bufio.Writer) error { return writeExport(w, name, meta, rows) })
	if err == nil {
		err = writeSnap(dpath, s.top, removed, bt)
	}
	if err != nil {
		return fmt.Errorf("write vector delta %s: %w", dpath, err)
	}
	fileio.SyncDir(v.dir)
	return nil
}
