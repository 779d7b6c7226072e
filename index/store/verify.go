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
	basePath, deltaPath := filepath.Join(s.dir, index.CatalogCacheFile), filepath.Join(s.dir, index.CatalogDeltaFile)
	base, err := readCacheFile(basePath)
	bad(basePath, err)
	if _, statErr := os.Stat(deltaPath); statErr == nil {
		if err == nil {
			_, derr := readDelta(base, deltaPath)
			bad(deltaPath, derr)
		} else {
			out = append(out, Damage{deltaPath, "not checked: the catalog cache it applies to is damaged"})
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
