package snapfile

import (
	"bufio"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/fault"
)

// This file reads the files of the layouts before snapshot files were the
// store of record, read only to migrate them (index/vector's migrate.go);
// nothing writes them any more.
//
// The two-file format (up to "TSSNAP04"): one or more chromem-go exports
// (ExportToWriter, plain gob) of up to 4,096 documents each, then one
// more, without documents, whose collection metadata MetaCRC is the
// CRC-32C of the exports before it (none in files written before
// checksums). chromem-go's file-per-document layout before it: one gob
// value per file, a Doc or (00000000.gob) a Meta. Decoding into structs
// with the same field names as chromem-go's reads them the way chromem-go
// does, without importing it, and gives the collection metadata, which
// chromem-go keeps to itself once imported.

// Doc is a document of chromem-go's files: an export's, or the whole of
// a document file of the file-per-document layout.
type Doc struct {
	ID        string
	Metadata  map[string]string
	Embedding []float32
	Content   string
}

// Meta is the collection file (00000000.gob) of chromem-go's
// file-per-document layout.
type Meta struct {
	Name     string
	Metadata map[string]string
}

// chromemExport is chromem-go's export format.
type chromemExport struct {
	Collections map[string]*struct {
		Name      string
		Metadata  map[string]string
		Documents map[string]*Doc
	}
}

// Collection metadata keys of the two-file format: MetaCRC in the last
// export of a file, the CRC-32C of the exports before it in hex; MetaBase
// and MetaRemoved in a delta's (.delta.gob), the base .gob's size and
// modification time ("size:mtime") and the JSON list of the IDs it
// removes.
const (
	MetaCRC     = "toolscout_crc32c"
	MetaBase    = "base"
	MetaRemoved = "removed"
)

// DecodeExport reads the named collection from r, the file path of one
// or more chromem-go exports (the oldest data dirs hold one): its
// documents, and the collection metadata of the first export. A file
// whose checksum does not match is an error (checksum.ErrMismatch); one
// without a checksum (written before toolscout had them) is read as it
// is, and sealed is false.
func DecodeExport(r io.Reader, path, name string) (docs []Doc, meta map[string]string, sealed bool, err error) {
	// gob reads exactly one export from a reader that is an
	// io.ByteReader, so each export gets a decoder of its own.
	br := bufio.NewReaderSize(r, 1<<20)
	cr := checksum.NewReader(br)
	err = fault.Guard("read "+path, func() error {
		for first := true; ; first = false {
			if _, err := br.Peek(1); err == io.EOF && !first {
				return nil
			}
			if sealed {
				return errors.New("data after the checksum")
			}
			before := cr.Sum()
			var exp chromemExport
			if err := gob.NewDecoder(cr).Decode(&exp); err != nil {
				return err
			}
			c := exp.Collections[name]
			if c == nil {
				return fmt.Errorf("collection %q is not in the file", name)
			}
			if sum, ok := c.Metadata[MetaCRC]; ok && !first {
				if sum != fmt.Sprintf("%08x", before) {
					return checksum.ErrMismatch
				}
				sealed = true
				continue
			}
			if first {
				meta = c.Metadata
			}
			for _, d := range c.Documents {
				docs = append(docs, *d) // a nil one panics: an error (fault.Guard), as before
			}
		}
	})
	if err != nil {
		return nil, nil, false, err
	}
	return docs, meta, sealed, nil
}

// GobTag is what a two-file delta names its base .gob by: its size and
// modification time (UnixNano).
type GobTag struct{ Size, Mtime int64 }

// DeltaMeta reads a two-file delta's collection metadata: the IDs it
// removes and the tag of the .gob it applies to.
func DeltaMeta(meta map[string]string) (removed []string, bt GobTag, err error) {
	if _, err := fmt.Sscanf(meta[MetaBase], "%d:%d", &bt.Size, &bt.Mtime); err != nil {
		return nil, bt, fmt.Errorf("delta without a base tag: %w", err)
	}
	if r := meta[MetaRemoved]; r != "" {
		if err := json.Unmarshal([]byte(r), &removed); err != nil {
			return nil, bt, fmt.Errorf("delta removed list: %w", err)
		}
	}
	return removed, bt, nil
}

// DecodesAs reports whether r (the file path) holds one gob value that
// decodes into v, a panic included.
func DecodesAs(r io.Reader, path string, v any) bool {
	return fault.Guard("decode "+path, func() error { return gob.NewDecoder(r).Decode(v) }) == nil
}
