package vector

import (
	"bufio"
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	chromem "github.com/philippgille/chromem-go"
	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/fault"
	"golang.org/x/sync/errgroup"
)

// chromemExport is chromem-go's export format (ExportToWriter, plain
// gob): decoding into structs with the same field names reads it the way
// chromem-go does, and gives the collection metadata, which chromem-go
// keeps to itself once imported.
type chromemExport struct {
	Collections map[string]*struct {
		Name      string
		Metadata  map[string]string
		Documents map[string]*chromemDoc
	}
}

// exportRows is the number of documents per chromem-go export in a
// collection file. chromem-go's export encodes a whole collection into one
// buffer before writing it; the buffer grows by a quarter at a time, so
// at 100k tools (178 MB) writing took 4.6 s and about 1 GB of fresh
// memory, most of it copying. In parts of 4,096 documents the buffers
// stay small and are reused.
const exportRows = 4096

// writeExport writes rows (sorted by ID) as chromem-go exports of the
// named collection, one per exportRows documents (one, empty, when there
// are none), each with the collection metadata meta, then the checksum:
// one more export, without documents, whose metadata metaCRC is the
// CRC-32C of the exports before it. The exports follow one another in the
// file; readExport reads them back and checks the checksum. gob encodes
// every float with a call of its own (2.5 s for 100k × 512 on one core),
// so the parts are encoded on all cores, a few at a time, and written in
// order.
func writeExport(w io.Writer, name string, meta map[string]string, rows []snapRow) error {
	var parts [][]snapRow
	for lo := 0; lo == 0 || lo < len(rows); lo += exportRows {
		parts = append(parts, rows[lo:min(lo+exportRows, len(rows))])
	}
	cw := checksum.NewWriter(w)
	wave := runtime.GOMAXPROCS(0)
	for start := 0; start < len(parts); start += wave {
		bufs := make([]bytes.Buffer, min(wave, len(parts)-start))
		var g errgroup.Group
		for i := range bufs {
			g.Go(func() error { return exportPart(&bufs[i], name, meta, parts[start+i]) })
		}
		if err := g.Wait(); err != nil {
			return err
		}
		for i := range bufs {
			if _, err := bufs[i].WriteTo(cw); err != nil {
				return err
			}
		}
	}
	return exportPart(w, name, map[string]string{metaCRC: fmt.Sprintf("%08x", cw.Sum())}, nil)
}

// metaCRC is the collection metadata of the last export of a file
// (writeExport): the CRC-32C of the exports before it, in hex. chromem-go
// reads the first export of a file and ignores the rest, and toolscout
// before checksums read it as an export without documents.
const metaCRC = "toolscout_crc32c"

// exportPart writes rows as one chromem-go export of the named collection.
func exportPart(w io.Writer, name string, meta map[string]string, rows []snapRow) error {
	db := chromem.NewDB()
	c, err := db.CreateCollection(name, meta, noEmbed)
	if err != nil {
		return err
	}
	docs := make([]chromem.Document, len(rows))
	for i, r := range rows {
		// The rows are normalised: chromem-go keeps the slice as is.
		docs[i] = chromem.Document{ID: r.id, Embedding: r.vec, Metadata: map[string]string{"hash": r.hash, "domain": r.domain, "group": r.group}}
	}
	if len(docs) > 0 {
		if err := c.AddDocuments(context.Background(), docs, 1); err != nil {
			return err
		}
	}
	return db.ExportToWriter(w, false, "", name)
}

// readExport reads the named collection from a file of one or more
// chromem-go exports (writeExport; earlier data dirs hold one): its
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
