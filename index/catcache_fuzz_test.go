package index

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/fuzzcheck"
)

// FuzzCatalogCache decodes catalog.bin and a catalog.delta over it
// (DecodeCatalogCache, CatalogCache.WithDelta), seeded with files the
// codec itself wrote for a small catalog and a one-tool edit of it. With
// fix set, the CRC in each head is made to match the body (and the
// delta made to name the base), so that the fuzzer reaches the
// structure behind the checksum instead of stopping at it. The
// contract: an error, or a catalog that encodes again and decodes to the
// same bytes (a fixed point); never a panic, and never more memory than
// a small multiple of the input.
func FuzzCatalogCache(f *testing.F) {
	base, delta := catalogCacheSeeds(f)
	f.Add(base, delta, false)
	f.Add(base, delta, true)
	f.Add(base, []byte(nil), false)
	for _, at := range []int{len(catCacheMagic) + 36 + 4, len(catCacheMagic) + 36 + 4 + 24, len(base) / 2, len(base) - 1} {
		b := bytes.Clone(base)
		b[at] ^= 0x80
		f.Add(b, delta, true)
	}
	f.Add(base[:len(base)/2], delta[:len(delta)/2], true)
	f.Fuzz(func(t *testing.T, base, delta []byte, fix bool) {
		if fix {
			base = withCacheCRC(base, len(catCacheMagic)+sha256.Size)
			delta = withCacheCRC(delta, catDeltaHead)
			if len(base) >= CacheHeadLen && len(delta) >= catDeltaHead {
				copy(delta[len(catDeltaMagic)+sha256.Size:], base[len(catCacheMagic):CacheHeadLen])
				delta = withCacheCRC(delta, catDeltaHead)
			}
		}
		var (
			c         *CatalogCache
			err, derr error
			cat, dcat *Catalog
		)
		fuzzcheck.Bounded(t, len(base)+len(delta), func() {
			c, err = DecodeCatalogCache(base)
			if err == nil {
				cat = c.Catalog()
				dcat, derr = c.WithDelta(delta)
			}
		})
		if err != nil {
			if c != nil {
				t.Fatalf("DecodeCatalogCache returned a cache and an error: %v", err)
			}
			return
		}
		checkReencodes(t, cat)
		if derr == nil {
			checkReencodes(t, dcat)
		}
	})
}

// withCacheCRC returns a copy of a cache file with the CRC after its
// head of n bytes set to its body's.
func withCacheCRC(data []byte, n int) []byte {
	data = bytes.Clone(data)
	if len(data) >= n+4 {
		binary.LittleEndian.PutUint32(data[n:], crc32.Checksum(data[n+4:], checksum.Castagnoli))
	}
	return data
}

// checkReencodes fails t unless cat, written as catalog.bin, decodes to
// a catalog that writes the same bytes again, with the same tools.
func checkReencodes(t *testing.T, cat *Catalog) {
	t.Helper()
	key := make([]byte, sha256.Size)
	var b1, b2 bytes.Buffer
	if err := WriteCatalogCache(&b1, key, cat); err != nil {
		t.Fatalf("WriteCatalogCache of a decoded catalog: %v", err)
	}
	c2, err := DecodeCatalogCache(b1.Bytes())
	if err != nil {
		t.Fatalf("a decoded catalog, encoded again, does not decode: %v", err)
	}
	cat2 := c2.Catalog()
	if err := WriteCatalogCache(&b2, key, cat2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
		t.Fatalf("a decoded catalog does not encode to the same bytes twice")
	}
	if cat2.Len() != cat.Len() || len(cat2.Tools()) != len(cat.Tools()) || cat2.Hash() != cat.Hash() {
		t.Fatalf("re-decoded catalog has %d tools (hash %q), want %d (hash %q)", cat2.Len(), cat2.Hash(), cat.Len(), cat.Hash())
	}
}

// catalogCacheSeeds returns a catalog.bin and a catalog.delta over it,
// written by the codec: a small catalog, then the same with one tool
// edited, re-built from the first as toolscout index does.
func catalogCacheSeeds(tb testing.TB) (base, delta []byte) {
	tb.Helper()
	var doc deltaDoc
	for _, name := range []string{"alpha", "beta"} {
		d := deltaDomain{Name: name, Description: "The " + name + " domain."}
		for k := 0; k < 6; k++ {
			d.Tools = append(d.Tools, deltaTool{Name: fmt.Sprintf("tool%d", k), Description: fmt.Sprintf("Does thing %d.", k),
				InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"p%d":{"type":"string"}},"required":["p%d"]}`, k, k)),
				Group:       []string{"", "read"}[k%2]})
		}
		doc.Domains = append(doc.Domains, d)
	}
	s := &memCache{}
	for round, key := range []string{strings.Repeat("01", 32), strings.Repeat("02", 32)} {
		if round == 1 {
			doc.Domains[0].Tools[2].Description = "Does another thing."
		}
		data, err := json.Marshal(doc)
		if err != nil {
			tb.Fatal(err)
		}
		src := &CatalogSource{names: []string{"fuzz"}, data: [][]byte{data}}
		last := s.LastCatalog()
		specs, l, err := src.SpecsFromLast(func() *Last { return NewLast(last) })
		if err != nil {
			tb.Fatal(err)
		}
		cat, err := NewCatalogFromLast(specs, l)
		if err != nil {
			tb.Fatal(err)
		}
		if err := s.SaveCatalog(key, cat); err != nil {
			tb.Fatal(err)
		}
	}
	if s.base == nil || s.delta == nil {
		tb.Fatalf("the seed catalogs were not saved as catalog.bin and catalog.delta")
	}
	return s.base, s.delta
}
