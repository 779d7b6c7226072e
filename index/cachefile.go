package index

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"hash/crc32"
	"io"

	"github.com/toolscout/toolscout/internal/checksum"
)

// The catalog cache's files as index/store reads and writes them: it
// owns the files (catalog.bin, catalog.delta) and when each is used,
// this package what is in them.

// CatalogCacheFile and CatalogDeltaFile are the names of the catalog
// cache's files in the data dir.
const (
	CatalogCacheFile = catCacheFile
	CatalogDeltaFile = catDeltaFile
)

// CacheHeadLen is the length of catalog.bin's head (its magic, key and
// CRC): what CacheHolds and DeltaBaseHead look at.
const CacheHeadLen = len(catCacheMagic) + len(catBaseID{})

// DeltaHeadLen is the length of catalog.delta's head (its magic, key and
// the head of the catalog.bin it applies to).
const DeltaHeadLen = catDeltaHead

// CacheHolds says where the catalog cached under key (raw SHA-256) is,
// from the head of catalog.bin (CacheHeadLen bytes, fewer when the file
// is shorter) and, read only when it is not catalog.bin, the head of
// catalog.delta (DeltaHeadLen bytes). inBase: catalog.bin itself, or a
// head that cannot be read (damage, which decoding it reports); inDelta:
// catalog.delta over this catalog.bin. Neither: the cache holds another
// catalog.
func CacheHolds(key, baseHead []byte, deltaHead func() []byte) (inBase, inDelta bool) {
	if len(baseHead) < len(catCacheMagic)+sha256.Size || string(baseHead[:len(catCacheMagic)]) != catCacheMagic ||
		bytes.Equal(baseHead[len(catCacheMagic):][:sha256.Size], key) {
		return true, false
	}
	dhead := deltaHead()
	return false, len(dhead) == catDeltaHead && string(dhead[:len(catDeltaMagic)]) == catDeltaMagic &&
		bytes.Equal(dhead[len(catDeltaMagic):][:sha256.Size], key) && bytes.Equal(dhead[len(catDeltaMagic)+sha256.Size:], baseHead[len(catCacheMagic):])
}

// CatalogCache is a decoded catalog.bin: its catalog, and the base a
// catalog.delta applies to.
type CatalogCache struct{ p *catParts }

// DecodeCatalogCache decodes catalog.bin's bytes, checking its magic,
// checksum and structure. The catalog's strings and schemas point into
// data, which must never change after (a read-only mapping).
func DecodeCatalogCache(data []byte) (*CatalogCache, error) {
	p, err := decodeBase(data)
	if err != nil {
		return nil, err
	}
	return &CatalogCache{p}, nil
}

// SchemaBytes returns where catalog.bin's schemas (input and output
// schemas, annotations) are in the bytes it was decoded from, data[from:to]:
// after the checksum, nothing reads them at start or in a search, only
// a tool's schema, so a server can let go of their pages
// (fileio.ReadMappedDroppable).
func (c *CatalogCache) SchemaBytes() (from, to int) { return c.p.rawsAt, c.p.rawsEnd }

// Catalog returns the catalog of catalog.bin.
func (c *CatalogCache) Catalog() *Catalog { return c.p.catalog() }

// WithDelta decodes a catalog.delta over c and returns its catalog.
func (c *CatalogCache) WithDelta(data []byte) (*Catalog, error) {
	p, err := c.p.base.decodeDelta(data)
	if err != nil {
		return nil, err
	}
	return p.catalog(), nil
}

// DeltaBaseHead returns the head (CacheHeadLen bytes) of the catalog.bin
// that cat may be saved over as catalog.delta (WriteCatalogDelta): the
// one it was read from, when at most maxDeltaShare of its tools are new
// or changed. Nil: cat is saved whole (WriteCatalogCache).
func DeltaBaseHead(cat *Catalog) []byte {
	if cat.base == nil || !cat.base.worthDelta(cat) {
		return nil
	}
	return append([]byte(catCacheMagic), cat.base.id[:]...)
}

// WriteCatalogCache writes cat as catalog.bin under key (raw SHA-256).
func WriteCatalogCache(w io.Writer, key []byte, cat *Catalog) error {
	return writeCache(w, catCacheMagic, key, encode(func(cw *catWriter) { cw.catalog(cat) }))
}

// WriteCatalogDelta writes cat as catalog.delta under key (raw SHA-256),
// over the catalog.bin that DeltaBaseHead names, which must not be nil.
func WriteCatalogDelta(w io.Writer, key []byte, cat *Catalog) error {
	return writeCache(w, catDeltaMagic, append(key[:len(key):len(key)], cat.base.id[:]...), encode(func(cw *catWriter) { cw.delta(cat) }))
}

// writeCache writes a cache file: magic, head, the CRC-32C of body,
// body.
func writeCache(w io.Writer, magic string, head []byte, body [4][]byte) error {
	crc := uint32(0)
	for _, part := range body {
		crc = crc32.Update(crc, checksum.Castagnoli, part)
	}
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], crc)
	for _, part := range append([][]byte{[]byte(magic), head, sum[:]}, body[:]...) {
		if _, err := w.Write(part); err != nil {
			return err
		}
	}
	return nil
}
