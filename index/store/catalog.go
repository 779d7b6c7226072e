package store

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/fileio"
)

// Where the catalog of the store's catalog files (Options.Catalog) comes
// from, decided here alone. A start whose files are unchanged reads it
// back from the catalog cache (catalog.bin, or catalog.delta over it):
// no per-tool work. Otherwise it is built from the files, taking the
// previous build's unchanged tools over (index.NewCatalogFromLast: an
// edit of one tool in 100k rebuilds one tool, not 100k), and saved
// while the caller indexes it, as a delta over the previous build when
// few tools changed. A read-only store never builds one: building it
// would write the data dir.

// filesCatalog is the catalog of the store's catalog files as far as it
// is known: looked for (once), then built (once).
type filesCatalog struct {
	src    *index.CatalogSource // nil: no catalog files
	mu     sync.Mutex
	looked bool
	cat    *index.Catalog // from the cache, or built
	specs  []index.DomainSpec
	last   *index.Last
	err    error
	saved  chan struct{} // closed when the save of a built catalog is done; nil: none
	// streamable is Options.Stream; stream says that look found no
	// catalog.bin, for Catalog to stream the files into one.
	streamable, stream bool
}

// look reads, the first time, the catalog cached for the files, or
// else their specs and the previous build. Call it with f.mu held.
func (s *Store) look() {
	f := &s.files
	if f.looked || f.src == nil {
		return
	}
	f.looked = true
	if f.streamable && s.dir != "" {
		if _, err := os.Stat(filepath.Join(s.dir, index.CatalogCacheFile)); errors.Is(err, fs.ErrNotExist) {
			f.stream = true // a first build: nothing cached, nothing to reuse
			return
		}
	}
	f.cat, f.specs, f.last, f.err = s.catalogFor(f.src)
	if f.cat != nil {
		// Read from the cache: the files' bytes are not needed again.
		f.src.Drop()
	}
	if f.err == nil && f.cat == nil && s.readOnly {
		f.specs, f.last = nil, nil
		f.err = fmt.Errorf("%w: no catalog built from these files as they are now", index.ErrNoIndex)
	}
}

// CatalogSpecs says, quickly, what Catalog returns: the catalog cached
// for the store's catalog files, or already built (then specs is nil),
// or else the files' domain specs (unchecked) that Catalog builds it
// from. It reads the files and the cache once; the previous build is
// read beside them, for Catalog to take over. Read-only, a catalog not in the cache is an
// error (index.ErrNoIndex). Without Options.Catalog it returns nothing,
// and with Options.Stream before a first build nothing either: Catalog
// reads the files then, once, as it streams them.
func (s *Store) CatalogSpecs() (cat *index.Catalog, specs []index.DomainSpec, err error) {
	s.files.mu.Lock()
	defer s.files.mu.Unlock()
	s.look()
	return s.files.cat, s.files.specs, s.files.err
}

// Catalog returns the catalog of the store's catalog files
// (Options.Catalog; nil without): the one cached in the data dir for
// these files as they are now, or else the one built from them, which
// it saves in the data dir in the background (WaitSaved; a save that
// fails is logged, and the next start reads the files again). It builds
// once: later calls return the same catalog.
func (s *Store) Catalog(ctx context.Context) (*index.Catalog, error) {
	f := &s.files
	f.mu.Lock()
	defer f.mu.Unlock()
	s.look()
	if f.cat != nil || f.err != nil || f.src == nil {
		return f.cat, f.err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if f.stream {
		f.stream = false
		cat, err := s.streamCatalog(ctx, f.src)
		switch {
		case err == nil:
			f.src.Drop()
			f.cat = cat
			return cat, nil
		case ctx.Err() != nil:
			f.stream = true // not an answer about the files: the next call streams them
			return nil, err
		case !errors.Is(err, index.ErrNotStreamable):
			f.err = err
			return nil, err
		}
		// Files the streamed build does not read: built the usual way,
		// which reads them, or says where they are wrong.
		if f.specs, f.last, f.err = f.src.SpecsFromLast(s.LastBuild); f.err != nil {
			return nil, f.err
		}
	}
	cat, err := index.NewCatalogFromLast(f.specs, f.last)
	f.specs, f.last = nil, nil // spent
	if err != nil {
		f.err = err
		return nil, err
	}
	// Built: the files' bytes (mapped and all read: at 1M tools 400 MB
	// of the index's resident memory, to its end) are not needed again;
	// the key they hash to, which the save names, is kept.
	f.src.Drop()
	saved := make(chan struct{})
	f.cat, f.saved = cat, saved
	go func() {
		defer close(saved)
		if err := s.SaveCatalog(f.src.Key(), cat); err != nil && s.log != nil {
			s.log.Warn("could not cache the catalog in the data dir; the next start reads the files again", "err", err)
		}
	}()
	return cat, nil
}

// streamCatalog builds the catalog of src into catalog.bin as it reads
// the files (index.CatalogSource.StreamCatalogCache; its regions in
// scratch files beside it until they are copied in) and reads it back,
// as a start whose files are unchanged does. A build that fails leaves
// neither catalog.bin nor a scratch file.
func (s *Store) streamCatalog(ctx context.Context, src *index.CatalogSource) (*index.Catalog, error) {
	key, err := hex.DecodeString(src.Key())
	if err != nil {
		return nil, err
	}
	var scratch [3]*os.File
	for i := range scratch {
		// Named as WriteAtomic's temporary files are: a kill leaves
		// them for the next open to remove (RemoveLeftoverTemps).
		f, err := os.CreateTemp(s.dir, index.CatalogCacheFile+fileio.TmpSuffix+"scratch-*")
		if err != nil {
			return nil, fmt.Errorf("build the catalog: %w", err)
		}
		defer os.Remove(f.Name())
		defer f.Close()
		scratch[i] = f
	}
	basePath := filepath.Join(s.dir, index.CatalogCacheFile)
	err = fileio.WriteAtomic(basePath, func(w *bufio.Writer) error {
		return src.StreamCatalogCache(ctx, w, key, scratch[0], scratch[1], scratch[2])
	})
	if err != nil {
		return nil, err
	}
	os.Remove(filepath.Join(s.dir, index.CatalogDeltaFile)) // over another catalog.bin: it no longer applies
	c, err := readCacheFile(basePath)
	if err != nil {
		return nil, fmt.Errorf("read back the catalog written to %s: %w", basePath, err)
	}
	s.wasRead(basePath)
	return c.Catalog(), nil
}

// InspectCatalog builds the catalog of the catalog files src reads (nil:
// none, an empty catalog) as they are now, without a data dir: nothing
// read from a cache, nothing saved. It is what Catalog would build from
// them on a first start, for a look at them without an index (doctor's).
func InspectCatalog(src *index.CatalogSource) (*index.Catalog, error) {
	var specs []index.DomainSpec
	if src != nil {
		var err error
		if specs, err = src.Specs(); err != nil {
			return nil, err
		}
	}
	return index.NewCatalog(specs)
}

// WaitSaved waits until the catalog Catalog built is saved in the data
// dir (at once when it built none).
func (s *Store) WaitSaved() {
	s.files.mu.Lock()
	saved := s.files.saved
	s.files.mu.Unlock()
	if saved != nil {
		<-saved
	}
}
