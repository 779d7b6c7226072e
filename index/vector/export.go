package vector

import (
	"bufio"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"

	chromem "github.com/philippgille/chromem-go"
	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/fault"
)

// This file reads the collection files of the two-file format, the store
// of record before snapshot files were (up to "TSSNAP04"): one or more
// chromem-go exports (ExportToWriter, plain gob) of up to 4,096 documents
// each, then one more, without documents, whose collection metadata
// metaCRC is the CRC-32C of the exports before it (none in files written
// before checksums). Only the migration reads them (migrate.go); nothing
// writes them any more.
//
// chromemExport is chromem-go's export format: decoding into structs
// with the same field names reads it the way chromem-go does, and gives
// the collection metadata, which chromem-go keeps to itself once
// imported.
type chromemExport struct {
	Collections map[string]*struct {
		Name      string
		Metadata  map[string]string
		Documents map[string]*chromemDoc
	}
}

// metaCRC is the collection metadata of the last export of a file: the
// CRC-32C of the exports before it, in hex.
const metaCRC = "toolscout_crc32c"

// readExport reads the named collection from a file of one or more
// chromem-go exports (the oldest data dirs hold one): its
// documents, and the collection metadata of the first export. A file
// whose checksum does not match is an error (checksum.ErrMismatch); one without a
// checksum (written before toolscout had them) is read as it is, and
// sealed is false.
func readExport(path, name string) (docs []chromem.Document, meta map[string]string, sealed bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, false, err
	}
	defer f.Close()
	return decodeExport(f, path, name)
}

// decodeExport reads what readExport reads from r, the file path.
func decodeExport(r io.Reader, path, name string) (docs []chromem.Document, meta map[string]string, sealed bool, err error) {
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
			if sum, ok := c.Metadata[metaCRC]; ok && !first {
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
				docs = append(docs, chromem.Document{ID: d.ID, Metadata: d.Metadata, Embedding: d.Embedding, Content: d.Content})
			}
		}
	})
	if err != nil {
		return nil, nil, false, err
	}
	return docs, meta, sealed, nil
}
