package store

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/fileio"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// An embedder that learns statistics from the catalog (the built-in
// embedder's IDF weights) has them saved in the data dir, one file per
// embedder fingerprint and catalog: fit-FINGERPRINT-CATALOGHASH.bin.
//
// Each file says which catalog the statistics were fitted on, tool by
// tool (fitSketch), so that how far they are from the catalog at hand is
// counted, not taken from what the indexes say changed: a kill after a
// re-index wrote its indexes but before it saved the statistics it
// fitted leaves indexes that say nothing changed beside the previous
// catalog's statistics, which used to be reused for good.

// fitHeader starts a saved fit file. Then: the sketch of the catalog the
// statistics were fitted on (uint32 count, then count pairs of uint64
// name hash and uint64 content hash, little endian, sorted by name hash),
// then the embedder's own data, then the checksums of all that
// (checksum.Write). Files of the earlier formats are migrated, or
// removed, by the migration step (migrate.go).
const fitHeader = "TSFITV03"

// fitTool is one tool of a fitSketch: hashes of its qualified name and
// of its content hash.
type fitTool struct{ name, content uint64 }

// fitSketch is the catalog a fit was made on, sorted by name hash
// (qualified names are unique).
type fitSketch []fitTool

func hash64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// sketchOf returns cat's sketch.
func sketchOf(cat *index.Catalog) fitSketch {
	s := make(fitSketch, 0, cat.Len())
	for _, t := range cat.Tools() {
		s = append(s, fitTool{hash64(t.QualifiedName), hash64(t.Hash)})
	}
	slices.SortFunc(s, func(a, b fitTool) int { return cmp.Compare(a.name, b.name) })
	return s
}

// drift counts the tools added, removed or changed from s to o.
func (s fitSketch) drift(o fitSketch) int {
	n, i, j := 0, 0, 0
	for i < len(s) && j < len(o) {
		switch {
		case s[i].name < o[j].name:
			n++
			i++
		case s[i].name > o[j].name:
			n++
			j++
		default:
			if s[i].content != o[j].content {
				n++
			}
			i++
			j++
		}
	}
	return n + len(s) - i + len(o) - j
}

// writeFit writes a fit file: the sketch, then what save writes, then the
// checksums (checksum.Write).
func writeFit(w io.Writer, sketch fitSketch, save func(io.Writer) error) error {
	return checksum.Write(w, func(bw *bufio.Writer) error {
		bw.WriteString(fitHeader)
		var buf [16]byte
		binary.LittleEndian.PutUint32(buf[:4], uint32(len(sketch)))
		bw.Write(buf[:4])
		for _, t := range sketch {
			binary.LittleEndian.PutUint64(buf[:8], t.name)
			binary.LittleEndian.PutUint64(buf[8:], t.content)
			bw.Write(buf[:])
		}
		return save(bw)
	})
}

// readFit reads a fit file's sketch and returns it with the rest of data,
// the embedder's. A file whose checksum does not match is checksum.ErrMismatch;
// any other, an error saying it is not a saved fit.
func readFit(data []byte) (fitSketch, []byte, error) {
	if len(data) < len(fitHeader)+4+checksum.MinFooter || string(data[:len(fitHeader)]) != fitHeader {
		return nil, nil, errors.New("not a saved fit")
	}
	data, err := checksum.Body(data)
	if err != nil {
		return nil, nil, err
	}
	// The checksums can hold a body too short for its count (a file
	// written wrong, or cut and sealed again): checked after them.
	if len(data) < len(fitHeader)+4 {
		return nil, nil, fmt.Errorf("cut short: %d bytes, no sketch", len(data))
	}
	data = data[len(fitHeader):]
	n := int64(binary.LittleEndian.Uint32(data))
	data = data[4:]
	if int64(len(data)) < 16*n {
		return nil, nil, fmt.Errorf("cut short: %d bytes for a sketch of %d tools", len(data), n)
	}
	s := make(fitSketch, n)
	for i := range s {
		s[i] = fitTool{binary.LittleEndian.Uint64(data[16*i:]), binary.LittleEndian.Uint64(data[16*i+8:])}
	}
	return s, data[16*n:], nil
}

// fitPath is where the statistics of the embedder with fingerprint fp
// are saved for cat.
func (s *Store) fitPath(fp string, cat *index.Catalog) string {
	return filepath.Join(s.dir, "fit-"+fp+"-"+cat.Hash()+".bin")
}

// RestoreFit restores, through load, the statistics that the embedder
// with fingerprint fp saved with SaveFit, when they suit cat: fitted on
// a catalog that differs from cat in at most maxDrift of cat's tools
// (added, removed or changed ones, counted against the catalog the
// statistics were fitted on). Statistics fitted on another catalog are
// saved again for cat. It reports whether it restored them; when not,
// the caller fits them and calls SaveFit. A saved file that is damaged
// is removed, and the error says which (wrapping checksum.ErrMismatch
// when its checksum fails), for the caller to warn that the statistics
// are fitted again. A store in memory saves none.
func (s *Store) RestoreFit(fp string, cat *index.Catalog, maxDrift float64, load func(io.Reader) error) (bool, error) {
	if s.dir == "" {
		return false, nil
	}
	path := s.fitPath(fp, cat)
	files, _ := filepath.Glob(filepath.Join(s.dir, "fit-"+fp+"-*.bin"))
	// The file saved for cat first, if any.
	slices.SortStableFunc(files, func(a, b string) int {
		switch {
		case a == path:
			return -1
		case b == path:
			return 1
		}
		return 0
	})
	var sketch fitSketch
	var damaged []error
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		fitted, rest, err := readFit(data)
		if err != nil {
			switch {
			case s.readOnly: // another process's file: left as it is
				damaged = append(damaged, fmt.Errorf("the built-in embedder's statistics %s could not be read (%w); fitted again in memory", f, err))
			case os.Remove(f) == nil:
				damaged = append(damaged, fmt.Errorf("the built-in embedder's statistics %s could not be read (%w); removed, fitted again", f, err))
			}
			continue
		}
		if sketch == nil {
			sketch = sketchOf(cat)
		}
		if float64(fitted.drift(sketch)) > maxDrift*float64(cat.Len()) {
			continue
		}
		if err := load(bytes.NewReader(rest)); err != nil {
			continue
		}
		if f != path && !s.readOnly {
			// Saved for cat, still with the sketch of the catalog the
			// statistics were fitted on: the drift never adds up unseen.
			if err := fileio.WriteAtomic(path, func(w *bufio.Writer) error { _, err := w.Write(data); return err }); err == nil {
				s.removeFitsBut(path)
			}
		}
		return true, errors.Join(damaged...)
	}
	return false, errors.Join(damaged...)
}

// SaveFit saves, through save, the statistics that the embedder with
// fingerprint fp fitted on cat (atomically), and deletes the other saved
// ones. A store in memory saves nothing.
func (s *Store) SaveFit(fp string, cat *index.Catalog, save func(io.Writer) error) error {
	if s.dir == "" {
		return nil
	}
	if s.readOnly {
		return fmt.Errorf("save fitted statistics: %w", index.ErrReadOnly)
	}
	path := s.fitPath(fp, cat)
	sketch := sketchOf(cat)
	if err := fileio.WriteAtomic(path, func(w *bufio.Writer) error { return writeFit(w, sketch, save) }); err != nil {
		return fmt.Errorf("save fitted statistics: %w", err)
	}
	s.removeFitsBut(path)
	return nil
}

// removeFitsBut deletes the saved fits other than keep.
func (s *Store) removeFitsBut(keep string) {
	old, _ := filepath.Glob(filepath.Join(s.dir, "fit-*.bin"))
	for _, o := range old {
		if o != keep {
			os.Remove(o)
		}
	}
}
