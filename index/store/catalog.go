package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/toolscout/toolscout/index"
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
}

// look reads, the first time, the catalog cached for the files, or
// else their specs and the previous build. Call it with f.mu held.
func (s *Store) look() {
	f := &s.files
	if f.looked || f.src == nil {
		return
	}
	f.looked = true
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
// error (index.ErrNoIndex). Without Options.Catalog it returns nothing.
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
