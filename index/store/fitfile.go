package store

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store/format"
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

// fitHeader starts a saved fit file (format.FitHeader).
const fitHeader = format.FitHeader

// fitTool and fitSketch are package format's: a fit file's sketch of
// the catalog.
type (
	fitTool   = format.FitTool
	fitSketch = format.FitSketch
)

func hash64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// sketchOf returns cat's sketch.
func sketchOf(cat *index.Catalog) fitSketch {
	s := make(fitSketch, 0, cat.Len())
	for _, t := range cat.Tools() {
		s = append(s, fitTool{Name: hash64(t.QualifiedName), Content: hash64(t.Hash)})
	}
	slices.SortFunc(s, func(a, b fitTool) int { return cmp.Compare(a.Name, b.Name) })
	return s
}

// writeFit writes a fit file (format.WriteFit).
func writeFit(w io.Writer, sketch fitSketch, save func(io.Writer) error) error {
	return format.WriteFit(w, sketch, save)
}

// readFit reads a fit file (format.ReadFit).
func readFit(data []byte) (fitSketch, []byte, error) { return format.ReadFit(data) }

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
		// Mapped: the embedder may read its weights in place
		// (stableReader), the pages the checksum read let go of after.
		data, drop, err := fileio.ReadMappedDroppable(f)
		if err != nil {
			continue
		}
		ok, err := s.restoreFrom(f, path, data, cat, &sketch, maxDrift, load)
		drop(0, len(data))
		if err != nil {
			damaged = append(damaged, err)
		}
		if ok {
			return true, errors.Join(damaged...)
		}
	}
	return false, errors.Join(damaged...)
}

// restoreFrom gives load the statistics in data, read from f, when they
// were fitted on a catalog close enough to cat, and reports whether it
// did; the error says f was damaged.
func (s *Store) restoreFrom(f, path string, data []byte, cat *index.Catalog, sketch *fitSketch, maxDrift float64, load func(io.Reader) error) (bool, error) {
	fitted, rest, err := readFit(data)
	if err != nil {
		switch {
		case s.readOnly: // another process's file: left as it is
			return false, fmt.Errorf("the built-in embedder's statistics %s could not be read (%w); fitted again in memory", f, err)
		case os.Remove(f) == nil:
			return false, fmt.Errorf("the built-in embedder's statistics %s could not be read (%w); removed, fitted again", f, err)
		}
		return false, nil
	}
	if *sketch == nil {
		*sketch = sketchOf(cat)
	}
	if float64(fitted.Drift(*sketch)) > maxDrift*float64(cat.Len()) {
		return false, nil
	}
	if err := load(stableReader{bytes.NewReader(rest), rest}); err != nil {
		return false, nil
	}
	if f != path && !s.readOnly {
		// Saved for cat, still with the sketch of the catalog the
		// statistics were fitted on: the drift never adds up unseen.
		if err := fileio.WriteAtomic(path, func(w *bufio.Writer) error { _, err := w.Write(data); return err }); err == nil {
			s.removeFitsBut(path)
		}
	}
	return true, nil
}

// stableReader reads bytes that never change while the process runs (a
// fit file mapped read-only: files here are replaced by rename, never
// rewritten), and offers them whole (embed.StableBytes) so that the
// built-in embedder reads its weights in place.
type stableReader struct {
	*bytes.Reader
	b []byte
}

// StableBytes returns the bytes r reads.
func (r stableReader) StableBytes() []byte { return r.b }

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
