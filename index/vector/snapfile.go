package vector

import "github.com/toolscout/toolscout/index/vector/snapfile"

// The snapshot file's format is package snapfile's (the store of record
// of a collection; see its Write for the layout): this file converts
// between its snapfile.Snap and a snapshot layer.

const (
	snapMagic  = snapfile.Magic
	snapV7     = snapfile.V7
	snapV5     = snapfile.V5
	snapV6     = snapfile.V6
	snapAlign  = snapfile.Align
	snapHeader = snapfile.HeaderLen
)

// snapOlder are the magics of the earlier snapshot formats (never read:
// Open migrates the export beside them).
var snapOlder = snapfile.Older

// errOldSnap means a snapshot file of an earlier format (snapfile.ErrOld).
var errOldSnap = snapfile.ErrOld

// newFileID returns a fresh id for a snapshot file: random, not 0.
func newFileID() uint64 { return snapfile.NewFileID() }

// writeSnap writes s's own layer to path (snapfile.Write): temporary
// file, fsync, rename, with its checksum and the id id. For a delta,
// removed and base say which base IDs it drops and which base (by id) it
// applies to.
func writeSnap(path string, s *snapshot, removed []string, id, base uint64) error {
	return snapfile.Write(path, s.file(), removed, id, base)
}

// readSnap reads the snapshot file at path (snapfile.Read; its errors:
// os.ErrNotExist, errOldSnap, checksum.ErrMismatch).
func readSnap(path string) (s *snapshot, removed []string, base uint64, err error) {
	f, removed, base, err := snapfile.Read(path)
	return layerOf(f), removed, base, err
}

// decodeSnap decodes a snapshot file's bytes (snapfile.Decode); the
// layer points into data, which must never change after.
func decodeSnap(data []byte) (s *snapshot, removed []string, base uint64, err error) {
	f, removed, base, err := snapfile.Decode(data)
	return layerOf(f), removed, base, err
}

// salvageSnap returns what of a snapshot file whose checksum fails can
// still be trusted (snapfile.Salvage): the layer with the rows of the
// failing chunks dead, and how many; ok false when nothing can be.
func salvageSnap(data []byte) (s *snapshot, removed []string, base uint64, lost int, ok bool) {
	f, removed, base, lost, ok := snapfile.Salvage(data)
	if !ok {
		return nil, nil, 0, 0, false
	}
	return layerOf(f), removed, base, lost, true
}

// file returns s's own layer (not its top) as the file format holds it.
func (s *snapshot) file() *snapfile.Snap {
	return &snapfile.Snap{ID: s.id, Dims: s.dims, IDs: s.ids, Hash: s.hash, Domain: s.domain, Group: s.group,
		Mat: s.mat, Half: s.half, Signs: s.signs, Format: s.format, Dead: s.dead, NDead: s.ndead}
}

// layerOf returns the one-layer snapshot f holds; nil for nil.
func layerOf(f *snapfile.Snap) *snapshot {
	if f == nil {
		return nil
	}
	return &snapshot{id: f.ID, dims: f.Dims, ids: f.IDs, hash: f.Hash, domain: f.Domain, group: f.Group,
		mat: f.Mat, half: f.Half, signs: f.Signs, sums: f.Sums, format: f.Format, dead: f.Dead, ndead: f.NDead}
}
