package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/toolscout/toolscout/index"
)

// Damage is a file of the data dir that fails its check: its path and
// what is wrong.
type Damage struct {
	Path    string
	Problem string
}

func (d Damage) String() string { return d.Path + ": " + d.Problem }

// Verify reads every file of the store's folder that carries a check and
// reports those that fail it, changing nothing: each file's own reader
// removes or rebuilds a damaged one, with a warning, when it is next
// used. Verify exists for the files no start reads: catalog.delta of a
// catalog other than the one served, the fitted statistics of another
// embedder or catalog, upstreams.bin when the servers answer first,
// damaged lines of feedback.log; their damage would otherwise show only
// when it matters. doctor reports it; serve runs it once after its start
// and logs it. A store in memory has none.
func (s *Store) Verify() []Damage {
	if s.dir == "" {
		return nil
	}
	var out []Damage
	bad := func(path string, err error) {
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			out = append(out, Damage{path, err.Error()})
		}
	}
	// The catalog cache is read into the heap, not mapped as a start maps
	// it (fileio.ReadMapped keeps a mapping for the life of the process:
	// at 100k tools a serve that verified held catalog.bin's 62 MB twice).
	// A cache this process has read whole is not read again: serve's
	// check would otherwise decode at 100k tools a 62 MB catalog.bin the
	// start decoded already.
	basePath, deltaPath := filepath.Join(s.dir, index.CatalogCacheFile), filepath.Join(s.dir, index.CatalogDeltaFile)
	if s.hasRead(basePath) && (s.hasRead(deltaPath) || !exists(deltaPath)) {
		return append(out, s.verifyOthers()...)
	}
	data, err := os.ReadFile(basePath)
	var base *index.CatalogCache
	if err == nil {
		base, err = index.DecodeCatalogCache(data)
	}
	bad(basePath, err)
	if _, statErr := os.Stat(deltaPath); statErr == nil {
		if err == nil {
			ddata, derr := os.ReadFile(deltaPath)
			if derr == nil {
				_, derr = base.WithDelta(ddata)
			}
			bad(deltaPath, derr)
		} else {
			out = append(out, Damage{deltaPath, "not checked: the catalog cache it applies to is damaged"})
		}
	}
	return append(out, s.verifyOthers()...)
}

// verifyOthers is Verify of the files beside the catalog cache.
func (s *Store) verifyOthers() []Damage {
	var out []Damage
	bad := func(path string, err error) {
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			out = append(out, Damage{path, err.Error()})
		}
	}
	fits, _ := filepath.Glob(filepath.Join(s.dir, "fit-*.bin"))
	slices.Sort(fits)
	for _, path := range fits {
		data, err := os.ReadFile(path)
		if err == nil {
			_, _, err = readFit(data)
		}
		bad(path, err)
	}
	for _, f := range []struct {
		name string
		read func([]byte) error
	}{
		{listedFile, func(b []byte) error { _, err := readListed(bytes.NewReader(b)); return err }},
		{pinsFile, func(b []byte) error { _, err := readPins(bytes.NewReader(b)); return err }},
		{pinsPrev, func(b []byte) error { _, err := readPins(bytes.NewReader(b)); return err }},
		{feedbackFile, func(b []byte) error {
			_, lines, damaged, err := readFeedback(bytes.NewReader(b))
			if err == nil && damaged > 0 {
				err = fmt.Errorf("%d of %d lines damaged (they are skipped)", damaged, lines)
			}
			return err
		}},
	} {
		path := filepath.Join(s.dir, f.name)
		data, err := os.ReadFile(path)
		if err == nil {
			err = f.read(data)
		}
		bad(path, err)
	}
	return out
}

// wasRead records that this process read path whole and found it sound.
func (s *Store) wasRead(path string) {
	s.readMu.Lock()
	defer s.readMu.Unlock()
	if s.read == nil {
		s.read = map[string]bool{}
	}
	s.read[path] = true
}

// hasRead says whether this process read path whole and found it sound.
func (s *Store) hasRead(path string) bool {
	s.readMu.Lock()
	defer s.readMu.Unlock()
	return s.read[path]
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
