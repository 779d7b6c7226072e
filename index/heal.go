package index

import (
	"encoding/gob"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/philippgille/chromem-go"
)

// ErrDamaged means an index on disk could not be read. Stores heal it by
// rebuilding the damaged part from the catalog; searches that meet it
// answer with this error instead of crashing.
var ErrDamaged = errors.New("index damaged")

// guard runs f and turns a panic inside the index libraries (zapx panics
// on a garbage segment) into an error wrapping ErrDamaged.
func guard(what string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s: %v", ErrDamaged, what, r)
		}
	}()
	return f()
}

// openBleve opens the keyword index at path, a panic included in the
// errors.
func openBleve(path string) (bleve.Index, error) {
	var idx bleve.Index
	err := guard("open keyword index", func() error {
		var err error
		idx, err = bleve.OpenUsing(path, map[string]any{"bolt_timeout": "1s"})
		return err
	})
	return idx, err
}

// openChromem opens the vector store at dir, a panic included in the
// errors.
func openChromem(dir string) (*chromem.DB, error) {
	var db *chromem.DB
	err := guard("open vector store", func() error {
		var err error
		db, err = chromem.NewPersistentDB(dir, false)
		return err
	})
	return db, err
}

// chromem-go's files (uncompressed: plain gob). Decoding into structs with
// the same field names reads them the way chromem-go does.
type chromemDoc struct {
	ID        string
	Metadata  map[string]string
	Embedding []float32
	Content   string
}

type chromemMeta struct {
	Name     string
	Metadata map[string]string
}

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
		if !readable(filepath.Join(col, chromemMetaFile), &chromemMeta{}) {
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
			var d chromemDoc
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
	return guard("decode "+path, func() error { return gob.NewDecoder(f).Decode(v) }) == nil
}
