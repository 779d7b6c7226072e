package vector

import (
	"os"

	"github.com/toolscout/toolscout/index/vector/snapfile"
)

// This file reads the collection files of the two-file format, the store
// of record before snapshot files were (up to "TSSNAP04"): chromem-go's
// exports, decoded by snapfile.DecodeExport. Only the migration reads
// them (migrate.go); nothing writes them any more.

// readExport reads the named collection from a file of one or more
// chromem-go exports (snapfile.DecodeExport): its documents, and the
// collection metadata of the first export; sealed is false for a file
// without a checksum, and one whose checksum does not match is an error
// (checksum.ErrMismatch).
func readExport(path, name string) (docs []snapfile.Doc, meta map[string]string, sealed bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, false, err
	}
	defer f.Close()
	return snapfile.DecodeExport(f, path, name)
}
