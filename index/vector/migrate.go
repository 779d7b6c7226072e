package vector

import (
	"encoding/gob"
	"os"
	"path/filepath"
	"strings"

	"fmt"
	"github.com/philippgille/chromem-go"
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
	return fault.Guard("decode "+path, func() error { return gob.NewDecoder(f).Decode(v) }) == nil
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
