package vector

import (
	"encoding/binary"
	"fmt"
	"os"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/vector/snapfile"
	"github.com/toolscout/toolscout/internal/fileio"
)

// rowFile is the matrix of a cold sync into a directory, on disk rather
// than in memory: each embedded batch's rows are written to it at their
// place (float16, as the snapshot file holds them), and the snapshot and
// its checkpoints are written from it by snapfile.WriteRows. Its pages
// are the kernel's page cache, not the process's memory: at 100k tools
// 256 MB of the cold index's peak RSS was the matrix (at 1M 2.56 GB).
//
// It is named as a temporary file of the collection's (fileio.TmpSuffix):
// a kill leaves it behind, and the next Open removes it
// (fileio.RemoveLeftoverTemps); the collection file is never written
// but whole (snapfile.WriteRows: temporary file, fsync, rename).
type rowFile struct {
	f    *os.File
	dims int
}

// rowFileOf is the path of collection file path's rowFile.
func rowFileOf(path string) string { return path + fileio.TmpSuffix + "rows" }

// createRowFile creates the rowFile of collection file path, for rows
// rows of dims values.
func createRowFile(path string, rows, dims int) (*rowFile, error) {
	f, err := os.OpenFile(rowFileOf(path), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(int64(rows) * int64(dims) * 2); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &rowFile{f: f, dims: dims}, nil
}

// put writes vecs, normalised and rounded to float16, as the rows from
// row on. Batches put their rows at once: each to its own rows.
func (r *rowFile) put(row int, vecs [][]float32) error {
	buf := make([]byte, 0, len(vecs)*r.dims*2)
	for _, vec := range vecs {
		for _, x := range normalized(vec) {
			buf = binary.LittleEndian.AppendUint16(buf, snapfile.Half(x))
		}
	}
	if _, err := r.f.WriteAt(buf, int64(row)*int64(r.dims)*2); err != nil {
		return fmt.Errorf("write embedded rows to %s: %w", r.f.Name(), err)
	}
	return nil
}

// compact moves the rows of the embedded batches (of batch rows each,
// todo's) down to follow each other from row 0, and returns their tools
// in that order (still sorted by ID): what a sync that stopped keeps.
func (r *rowFile) compact(todo []*index.Tool, embedded []bool, batch int) ([]*index.Tool, error) {
	var kept []*index.Tool
	rowBytes := int64(r.dims) * 2
	buf := make([]byte, int64(batch)*rowBytes)
	for b, ok := range embedded {
		if !ok {
			continue
		}
		lo, hi := b*batch, min((b+1)*batch, len(todo))
		if at := len(kept); at != lo {
			part := buf[:int64(hi-lo)*rowBytes]
			if _, err := r.f.ReadAt(part, int64(lo)*rowBytes); err != nil {
				return nil, fmt.Errorf("keep the embedded rows of %s: %w", r.f.Name(), err)
			}
			if _, err := r.f.WriteAt(part, int64(at)*rowBytes); err != nil {
				return nil, fmt.Errorf("keep the embedded rows of %s: %w", r.f.Name(), err)
			}
		}
		kept = append(kept, todo[lo:hi]...)
	}
	return kept, nil
}

// ReadAt reads the matrix's bytes (snapfile.WriteRows).
func (r *rowFile) ReadAt(p []byte, off int64) (int, error) { return r.f.ReadAt(p, off) }

// remove closes and removes the file.
func (r *rowFile) remove() {
	r.f.Close()
	os.Remove(r.f.Name())
}

// writeRows writes collection name's file with tools (sorted by ID) and
// their rows, the first len(tools) of m (snapfile.WriteRows), then
// removes its delta, as write does.
func (v *Store) writeRows(name string, tools []*index.Tool, m *rowFile) error {
	s := &snapfile.Snap{Dims: m.dims, IDs: make([]string, len(tools)), Hash: make([]string, len(tools))}
	for i, t := range tools {
		s.IDs[i], s.Hash[i] = t.QualifiedName, t.Hash
		s.Domain.Add(t.Domain)
		s.Group.Add(t.Group)
	}
	if err := snapfile.WriteRows(v.fileOf(name), s, m, newFileID()); err != nil {
		return fmt.Errorf("write vector collection %s: %w", name, err)
	}
	if err := v.removeDelta(name); err != nil {
		return fmt.Errorf("write vector collection %s: %w", name, err)
	}
	fileio.SyncDir(v.dir)
	return nil
}
