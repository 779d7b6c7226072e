package vector

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/philippgille/chromem-go"
	"github.com/toolscout/toolscout/index/vector/snapfile"
	"github.com/toolscout/toolscout/internal/fault"
	"github.com/toolscout/toolscout/internal/fileio"
)

// openChromem opens the vector store at dir, a panic included in the
// errors.
func openChromem(dir string) (*chromem.DB, error) {
	var db *chromem.DB
	err := fault.Guard("open vector store", func() error {
		var err error
		db, err = chromem.NewPersistentDB(dir, false)
		return err
	})
	return db, err
}

// chromem-go's files (uncompressed: plain gob), read into structs with
// the same field names (snapfile.Doc, snapfile.Meta).
const chromemMetaFile = "00000000.gob"

// healVectorDir removes the files of a chromem-go folder that cannot be
// read: a document file (a tool's vector, written in place by chromem-go,
// so a kill can leave it empty or cut) is removed and the next sync embeds
// that tool again; a collection whose metadata cannot be read is removed
// whole. It returns what it removed.
func healVectorDir(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		col := filepath.Join(dir, e.Name())
		if !readable(filepath.Join(col, chromemMetaFile), &snapfile.Meta{}) {
			if err := os.RemoveAll(col); err != nil {
				return removed, err
			}
			removed = append(removed, "collection "+e.Name())
			continue
		}
		files, err := os.ReadDir(col)
		if err != nil {
			return removed, err
		}
		for _, f := range files {
			if f.IsDir() || f.Name() == chromemMetaFile || !strings.HasSuffix(f.Name(), ".gob") {
				continue
			}
			p := filepath.Join(col, f.Name())
			var d snapfile.Doc
			if !readable(p, &d) || d.ID == "" {
				if err := os.Remove(p); err != nil {
					return removed, err
				}
				removed = append(removed, filepath.Join(e.Name(), f.Name()))
			}
		}
	}
	return removed, nil
}

// readable reports whether path holds one gob value that decodes into v.
func readable(path string, v any) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return snapfile.DecodesAs(f, path, v)
}

// migrateLegacy moves collections from chromem-go's file-per-document
// layout (one folder per collection) into one file each, then removes the
// folders. What cannot be read is healed as before (healVectorDir).
func (v *Store) migrateLegacy() error {
	entries, err := os.ReadDir(v.dir)
	if err != nil {
		return fmt.Errorf("vector store: %w", err)
	}
	var folders []string
	for _, e := range entries {
		if e.IsDir() {
			folders = append(folders, filepath.Join(v.dir, e.Name()))
		}
	}
	if len(folders) == 0 {
		return nil
	}
	old, err := openChromem(v.dir)
	if err != nil {
		removed, herr := healVectorDir(v.dir)
		if herr == nil {
			old, err = openChromem(v.dir)
		}
		if err == nil {
			v.healed = append(v.healed, fmt.Sprintf("vector store %s could not be read; removed %d damaged files (%s), their tools are embedded again", v.dir, len(removed), strings.Join(firstN(removed, 3), ", ")))
		}
	}
	if err == nil {
		for name := range old.ListCollections() {
			if !v.read[name] {
				f, err := os.CreateTemp(v.dir, "migrate"+fileio.TmpSuffix+"*")
				if err != nil {
					return fmt.Errorf("vector store: %w", err)
				}
				err = old.ExportToWriter(f, false, "", name)
				f.Close()
				if err == nil {
					err = v.db.ImportFromFile(f.Name(), "", name)
				}
				os.Remove(f.Name())
				if err != nil {
					return fmt.Errorf("migrate vector collection %s: %w", name, err)
				}
				v.read[name] = true
				v.healed = append(v.healed, fmt.Sprintf("vectors: migrating %s from chromem-go's file-per-document layout of an earlier toolscout to one checksummed snapshot file; nothing is embedded again", name))
				s, err := v.persist(name, nil)
				v.db.DeleteCollection(name)
				if err != nil {
					return err
				}
				v.snaps[name] = s
			}
		}
	} else {
		v.healed = append(v.healed, fmt.Sprintf("vector store %s could not be read (%v); started over, every tool is embedded again", v.dir, err))
	}
	for _, f := range folders {
		if err := os.RemoveAll(f); err != nil {
			return fmt.Errorf("vector store: remove the old layout %s: %w", f, err)
		}
	}
	return nil
}

// The two-file format (toolscout up to the snapshot's "TSSNAP04"): per
// collection X.gob, chromem-go's exports (export.go), the store of
// record, and X.snap derived from it; a small change in X.delta.gob
// (its collection metadata: the base .gob's size and modification time,
// and the removed IDs) with X.delta.snap derived from it.
const (
	twoFileExt = ".gob"
)

// twoFileOf returns the two-file format's collection file (X.gob) of a
// snapshot file X.snap.
func twoFileOf(snapPath string) string {
	return strings.TrimSuffix(snapPath, collectionExt) + twoFileExt
}

// migrateTwoFile migrates each collection of the two-file format into one
// snapshot file, by one rebuild from its .gob and .delta.gob (said in
// Healed: "vectors: migrating ..."), nothing embedded; then removes the
// old files. The old snapshots are never read: X.snap is written over,
// X.delta.snap removed. A .gob that cannot be read is removed and its
// tools are embedded again, as a damaged snapshot's are.
//
// Each step leaves a whole data dir: the new X.snap is written (temporary
// file, fsync, rename) before any old file is removed, the .gob last; a
// kill before the rename leaves the old files to migrate again, one after
// leaves an X.snap of this format beside the .gob, and the next open only
// removes the old files.
func (v *Store) migrateTwoFile() error {
	gobs, err := filepath.Glob(filepath.Join(v.dir, "*"+twoFileExt))
	if err != nil {
		return fmt.Errorf("vector store: %w", err)
	}
	for _, g := range gobs {
		if name := nameOf(g, twoFileExt); name != "" {
			if err := v.migrateCollection(name); err != nil {
				return err
			}
		} else if name := nameOf(g, deltaSuffix+twoFileExt); name != "" {
			if _, err := os.Stat(twoFileOf(v.fileOf(name))); errors.Is(err, os.ErrNotExist) {
				os.Remove(g) // a delta whose .gob is gone
			}
		}
	}
	return nil
}

// migrateCollection migrates the named collection's two-file format
// (migrateTwoFile).
func (v *Store) migrateCollection(name string) error {
	path := v.fileOf(name)
	gobPath := twoFileOf(path)
	dgob := twoFileOf(deltaFileOf(path))
	old := []string{dgob, deltaFileOf(path), gobPath}
	if s, _, _, err := readSnap(path); err == nil && s != nil {
		// A migration killed after its snapshot was written.
		return removeOld(old)
	}
	if _, err := os.Stat(gobPath); errors.Is(err, os.ErrNotExist) {
		// Another process opening the same data dir migrated it since
		// the folder was listed: its new file is whole, or about to be.
		return nil
	}
	v.healed = append(v.healed, fmt.Sprintf("vectors: migrating %s from the two-file format of an earlier toolscout (%s, and a snapshot derived from it) to one checksummed snapshot file; nothing is embedded again",
		name, filepath.Base(gobPath)))
	s, derr, err := readTwoFile(gobPath, dgob, name)
	if errors.Is(err, os.ErrNotExist) {
		return nil // the same, between the two checks
	}
	if derr != nil {
		v.healed = append(v.healed, fmt.Sprintf("vector delta %s could not be read (%v); removed, its tools are embedded again", dgob, derr))
	}
	if err != nil {
		if rerr := removeOld(append(old, path)); rerr != nil {
			return rerr
		}
		v.healed = append(v.healed, fmt.Sprintf("vector collection %s could not be read (%v); removed, its tools are embedded again", gobPath, err))
		v.read[name] = true
		return nil
	}
	if s, err = v.persist(name, s); err != nil {
		return fmt.Errorf("migrate vector collection %s: %w", name, err)
	}
	v.snaps[name], v.read[name] = s, true
	return removeOld(old)
}

// removeOld removes files that may be missing, then syncs their folder.
func removeOld(files []string) error {
	for _, f := range files {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("vector store: remove %s: %w", f, err)
		}
	}
	if len(files) > 0 {
		fileio.SyncDir(filepath.Dir(files[0]))
	}
	return nil
}

// readTwoFile returns the collection a .gob holds with its .delta.gob
// applied, as one layer. A delta written for another version of the .gob
// (a kill between a full write and the delta's removal) is left out, as
// before; one that cannot be read, or has no checksum while the .gob has
// one, is left out too and said in deltaErr: the tools it held are
// embedded again.
func readTwoFile(gobPath, dgob, name string) (s *snapshot, deltaErr, err error) {
	docs, _, sealed, err := readExport(gobPath, name)
	if err != nil {
		return nil, nil, err
	}
	base, err := snapshotOf(docs, dimsOf(name))
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(dgob); err != nil {
		return base, nil, nil
	}
	top, removed, bt, err := readTwoFileDelta(dgob, name, sealed)
	if err != nil {
		return base, err, nil
	}
	if fi, err := os.Stat(gobPath); err != nil || fi.Size() != bt.Size || fi.ModTime().UnixNano() != bt.Mtime {
		return base, nil, nil // for another version of the .gob
	}
	fresh := make([]snapRow, len(top.ids))
	for i := range fresh {
		fresh[i] = top.rowOf(i)
	}
	return patchSnapshot(base.withDelta(removed, fresh), base.dims, nil, nil), nil, nil
}

// readTwoFileDelta reads a two-file delta (.delta.gob): its rows, the IDs
// it removes and the tag of the .gob it applies to. One without a
// checksum is taken only beside a .gob without one (sealed false).
func readTwoFileDelta(dgob, name string, sealed bool) (top *snapshot, removed []string, bt snapfile.GobTag, err error) {
	docs, meta, dsealed, err := readExport(dgob, name)
	if err != nil {
		return nil, nil, bt, err
	}
	if sealed && !dsealed {
		return nil, nil, bt, errors.New("written without a checksum")
	}
	if removed, bt, err = snapfile.DeltaMeta(meta); err != nil {
		return nil, nil, bt, err
	}
	top, err = snapshotOf(docs, dimsOf(name))
	return top, removed, bt, err
}

// snapshotOf returns a one-layer snapshot of chromem-go documents.
func snapshotOf(docs []snapfile.Doc, dims int) (*snapshot, error) {
	rows := make([]snapRow, len(docs))
	for i, d := range docs {
		if len(d.Embedding) != dims {
			return nil, fmt.Errorf("%s has %d dimensions, want %d", d.ID, len(d.Embedding), dims)
		}
		rows[i] = snapRow{id: d.ID, hash: d.Metadata["hash"], domain: d.Metadata["domain"], group: d.Metadata["group"], vec: normalized(d.Embedding)}
	}
	return flat(dims, rows), nil
}
