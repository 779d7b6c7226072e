package store

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/fileio"
)

// The catalog cache: a built catalog saved in the data dir (catalog.bin,
// and catalog.delta over it), keyed by the bytes of the files it was
// built from (index.CatalogSource.Key). The format is index's
// (index/catcache.go); which file holds what, and what is healed, is
// the store's.

// catalogFor returns the catalog cached for src (CachedCatalog), or,
// when there is none, src's domain specs to build it from, read beside
// the previous build (LastBuild, read on other cores while src's files
// are scanned), which it returns for index.NewCatalogFromLast to take
// over.
func (s *Store) catalogFor(src *index.CatalogSource) (cached *index.Catalog, specs []index.DomainSpec, last *index.Last, err error) {
	if cat := s.CachedCatalog(src.Key()); cat != nil {
		return cat, nil, nil, nil
	}
	specs, last, err = src.SpecsFromLast(s.LastBuild)
	return nil, specs, last, err
}

// CachedCatalog returns the catalog cached in the store's data dir under
// key, or nil when there is none for this key: catalog.bin, or
// catalog.delta over it. A cache that cannot be read is removed (the
// next SaveCatalog writes it again) and said in Healed.
func (s *Store) CachedCatalog(key string) *index.Catalog {
	if s.dir == "" {
		return nil
	}
	want, err := hex.DecodeString(key)
	if err != nil || len(want) != sha256.Size {
		return nil
	}
	basePath, deltaPath := filepath.Join(s.dir, index.CatalogCacheFile), filepath.Join(s.dir, index.CatalogDeltaFile)
	head, err := readHead(basePath, index.CacheHeadLen)
	if err != nil {
		return nil
	}
	ofBase, ofDelta := index.CacheHolds(want, head, func() []byte {
		dhead, _ := readHead(deltaPath, index.DeltaHeadLen)
		return dhead
	})
	if !ofBase && !ofDelta {
		return nil // SaveCatalog replaces them
	}
	c, err := readCacheFile(basePath)
	if err != nil && s.readOnly {
		return nil // not healed: the caller says there is no catalog to serve
	}
	if err != nil {
		os.Remove(basePath)
		s.healed = append(s.healed, fmt.Sprintf("catalog cache %s could not be read (%v); removed, the catalog is read from its files", basePath, err))
		return nil
	}
	s.wasRead(basePath)
	if ofBase {
		return c.Catalog()
	}
	cat, err := readDelta(c, deltaPath)
	if err != nil {
		if s.readOnly {
			return nil
		}
		os.Remove(deltaPath)
		s.healed = append(s.healed, fmt.Sprintf("catalog cache %s could not be read (%v); removed, the catalog is read from its files", deltaPath, err))
		return nil
	}
	s.wasRead(deltaPath)
	return cat
}

// readCacheFile maps catalog.bin at path and decodes it. Its schemas'
// pages, read once by the checksum, are let go of: only a tool's schema
// reads them again (at 100k tools 20 MB of every process's RSS).
func readCacheFile(path string) (*index.CatalogCache, error) {
	data, drop, err := fileio.ReadMappedDroppable(path)
	if err != nil {
		return nil, err
	}
	c, err := index.DecodeCatalogCache(data)
	if err != nil {
		return nil, err
	}
	drop(c.SchemaBytes())
	return c, nil
}

// readDelta maps catalog.delta at path and decodes it over c.
func readDelta(c *index.CatalogCache, path string) (*index.Catalog, error) {
	data, err := fileio.ReadMapped(path)
	if err != nil {
		return nil, err
	}
	return c.WithDelta(data)
}

// readHead returns the first n bytes of the file at path (fewer when it
// is shorter), so that a cache of other files is told apart without
// reading 49 MB.
func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, n)
	k, err := io.ReadFull(f, head)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return head[:k], err
}

// LastBuild returns the catalog cached in the data dir whatever files it
// was built from (nil when there is none, or it cannot be read): the
// previous build, read for this alone, for index.SpecsFromLast and
// index.NewCatalogFromLast to take its unchanged tools over.
func (s *Store) LastBuild() *index.Last {
	if s.dir == "" {
		return nil
	}
	c, err := readCacheFile(filepath.Join(s.dir, index.CatalogCacheFile))
	if err != nil {
		return nil
	}
	if cat, err := readDelta(c, filepath.Join(s.dir, index.CatalogDeltaFile)); err == nil {
		return index.NewLast(cat) // the last save was a delta over this base
	}
	return index.NewLast(c.Catalog())
}

// SaveCatalog caches c in the store's data dir under key, replacing the
// previous cache (written whole or not at all). A catalog built from the
// one catalog.bin holds, with few of its tools new or changed
// (index.DeltaBaseHead), is written as catalog.delta over it; any other
// whole, as catalog.bin. In memory it does nothing.
func (s *Store) SaveCatalog(key string, c *index.Catalog) error {
	if s.dir == "" {
		return nil
	}
	if s.readOnly {
		return fmt.Errorf("save the catalog: %w", index.ErrReadOnly)
	}
	raw, err := hex.DecodeString(key)
	if err != nil || len(raw) != sha256.Size {
		return fmt.Errorf("catalog cache key %q: want a hex SHA-256", key)
	}
	basePath, deltaPath := filepath.Join(s.dir, index.CatalogCacheFile), filepath.Join(s.dir, index.CatalogDeltaFile)
	if want := index.DeltaBaseHead(c); want != nil {
		if head, err := readHead(basePath, index.CacheHeadLen); err == nil && bytes.Equal(head, want) {
			return fileio.WriteAtomic(deltaPath, func(w *bufio.Writer) error { return index.WriteCatalogDelta(w, raw, c) })
		}
	}
	if err := fileio.WriteAtomic(basePath, func(w *bufio.Writer) error { return index.WriteCatalogCache(w, raw, c) }); err != nil {
		return err
	}
	// A delta over the old catalog.bin no longer applies: it names that
	// file's key and CRC, so if it cannot be removed it is only ignored,
	// and the catalog just written is cached all the same.
	os.Remove(deltaPath)
	return nil
}
