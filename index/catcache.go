package index

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"unsafe"
)

// The catalog cache: a built catalog saved in the data dir, keyed by the
// bytes of the files it was built from. A start whose catalog files are
// unchanged reads the tools back (strings and schemas as they were
// checked) instead of parsing the JSON and checking, canonicalising,
// scanning and hashing every tool again: at 100k tools about 2.5 s of
// every start, against a fraction of a second to read the cache.
//
// Layout of catalog.bin (little endian):
//
//	"TSCATV01"                   magic
//	[32]byte                     the key: CatalogSource.Key, raw
//	uint32                       CRC-32C of everything after this field
//	uint64 × 3                   lengths of the three regions
//	meta                         uvarints: counts and lengths, in order
//	strings                      every string field, concatenated
//	raws                         every schema and annotation, concatenated
//
// A cache that is missing, was built from other bytes, or fails its
// checksum is simply rebuilt from the files; nothing depends on it being
// there.
const catCacheMagic = "TSCATV01"

// CatalogCacheVersion names the rules a cached catalog was built by. Bump
// it whenever NewCatalog derives anything differently (checks, summaries,
// warnings, hashes, qualified names, name forms): caches of the old
// rules then miss. TestCatalogCacheVersion fails until you do.
const CatalogCacheVersion = 5

const catCacheFile = "catalog.bin"

// CatalogSource is catalog files read into memory: what a catalog is built
// from, and what its cache is keyed by.
type CatalogSource struct {
	names []string
	data  [][]byte
	key   string
}

// ReadCatalogSource reads catalog files (parsing them is Specs).
func ReadCatalogSource(paths []string) (*CatalogSource, error) {
	s := &CatalogSource{}
	for _, p := range paths {
		data, err := readOnlyFile(p)
		if err != nil {
			return nil, fmt.Errorf("load catalog %s: %w", p, err)
		}
		s.names = append(s.names, p)
		s.data = append(s.data, data)
	}
	return s, nil
}

// BuiltinSource returns the built-in catalog as a source.
func BuiltinSource() *CatalogSource {
	return &CatalogSource{names: []string{"builtin"}, data: [][]byte{builtinCatalogJSON}}
}

// Key identifies the source's bytes together with the rules a catalog is
// built by: two sources with the same key build the same catalog.
func (s *CatalogSource) Key() string {
	if s.key == "" {
		h := sha256.New()
		fmt.Fprintf(h, "%s %d %s\n", catCacheMagic, CatalogCacheVersion, documentTextVersion)
		for i, name := range s.names {
			fmt.Fprintf(h, "%s\n%d\n", name, len(s.data[i]))
			h.Write(s.data[i])
		}
		s.key = hex.EncodeToString(h.Sum(nil))
	}
	return s.key
}

// Specs parses the source's files into domains (unchecked: NewCatalog
// checks them).
func (s *CatalogSource) Specs() ([]DomainSpec, error) { return s.SpecsFrom(nil) }

// SpecsFrom is Specs, reading again only the tools whose bytes differ
// from what prev (the previous build, nil for none) was read from: the
// others are taken from prev's tools. NewCatalogFrom(specs, prev) then
// reuses them without checking them again.
func (s *CatalogSource) SpecsFrom(prev *Catalog) ([]DomainSpec, error) {
	var byRaw map[string]*Tool
	if prev != nil {
		byRaw = make(map[string]*Tool, len(prev.tools))
		for _, t := range prev.tools {
			if t.raw != "" {
				byRaw[t.raw] = t
			}
		}
	}
	var all []DomainSpec
	for i, name := range s.names {
		specs, err := parseCatalogFrom(name, s.data[i], byRaw)
		if err != nil {
			return nil, err
		}
		all = append(all, specs...)
	}
	return all, nil
}

// CachedCatalog returns the catalog cached in the store's data dir under
// key, or nil when there is none for this key. A cache that cannot be read
// is removed (the next SaveCatalog writes it again) and said in Healed.
func (s *Store) CachedCatalog(key string) *Catalog {
	if s.dir == "" {
		return nil
	}
	path := filepath.Join(s.dir, catCacheFile)
	want, err := hex.DecodeString(key)
	if err != nil || len(want) != sha256.Size {
		return nil
	}
	if head, err := readHead(path, len(catCacheMagic)+sha256.Size); err != nil ||
		len(head) == len(catCacheMagic)+sha256.Size && string(head[:len(catCacheMagic)]) == catCacheMagic &&
			!bytes.Equal(head[len(catCacheMagic):], want) {
		return nil // none, or built from other files: SaveCatalog replaces it
	}
	data, err := readOnlyFile(path)
	if err != nil {
		return nil
	}
	c, err := decodeCatalog(data)
	if err != nil {
		os.Remove(path)
		s.healed = append(s.healed, fmt.Sprintf("catalog cache %s could not be read (%v); removed, the catalog is read from its files", path, err))
		return nil
	}
	return c
}

// readHead returns the first n bytes of the file at path (fewer when it
// is shorter), so that a cache of other files is told apart without
// reading 65 MB.
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

// LastCatalog returns the catalog cached in the data dir whatever files
// it was built from (nil when there is none, or it cannot be read): the
// previous build, for SpecsFrom and NewCatalogFrom to reuse its unchanged
// tools. Of its lookups only ToolByKey is filled: that is all they use,
// and the others cost 0.1 s at 100k tools.
func (s *Store) LastCatalog() *Catalog {
	if s.dir == "" {
		return nil
	}
	data, err := readOnlyFile(filepath.Join(s.dir, catCacheFile))
	if err != nil {
		return nil
	}
	c, err := decodeCatalogFor(data, false)
	if err != nil {
		return nil
	}
	return c
}

// SaveCatalog caches c in the store's data dir under key, replacing the
// previous cache (written whole or not at all). In memory it does nothing.
func (s *Store) SaveCatalog(key string, c *Catalog) error {
	if s.dir == "" {
		return nil
	}
	raw, err := hex.DecodeString(key)
	if err != nil || len(raw) != sha256.Size {
		return fmt.Errorf("catalog cache key %q: want a hex SHA-256", key)
	}
	body := encodeCatalog(c)
	crc := uint32(0)
	for _, part := range body {
		crc = crc32.Update(crc, castagnoli, part)
	}
	return WriteFileAtomic(filepath.Join(s.dir, catCacheFile), func(w *bufio.Writer) error {
		w.WriteString(catCacheMagic)
		w.Write(raw)
		var sum [4]byte
		binary.LittleEndian.PutUint32(sum[:], crc)
		w.Write(sum[:])
		for _, part := range body {
			if _, err := w.Write(part); err != nil {
				return err
			}
		}
		return nil
	})
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// catWriter collects the three regions of an encoded catalog. A dry
// writer only counts their sizes, so that the real pass appends into
// buffers of the right size (growing 60 MB by doubling cost more than
// the encoding itself).
type catWriter struct {
	dry               bool
	nMeta, nStr, nRaw int
	meta, strs, raws  []byte
}

func (w *catWriter) uint(n int) {
	if w.dry {
		var b [binary.MaxVarintLen64]byte
		w.nMeta += binary.PutUvarint(b[:], uint64(n))
		return
	}
	w.meta = binary.AppendUvarint(w.meta, uint64(n))
}

func (w *catWriter) str(s string) {
	w.uint(len(s))
	w.nStr += len(s)
	if !w.dry {
		w.strs = append(w.strs, s...)
	}
}

// strs writes a string slice, keeping nil apart from empty.
func (w *catWriter) list(l []string) {
	if l == nil {
		w.uint(0)
		return
	}
	w.uint(len(l) + 1)
	for _, s := range l {
		w.str(s)
	}
}

// raw writes a raw JSON value, keeping nil apart from empty.
func (w *catWriter) raw(b []byte) {
	if b == nil {
		w.uint(0)
		return
	}
	w.uint(len(b) + 1)
	w.nRaw += len(b)
	if !w.dry {
		w.raws = append(w.raws, b...)
	}
}

// encodeCatalog returns c encoded: the region lengths, then the regions
// (the file's body, in order).
func encodeCatalog(c *Catalog) [4][]byte {
	forms := make([][3]string, len(c.tools))
	for i, t := range c.tools {
		forms[i] = nameForms(t)
	}
	dry := &catWriter{dry: true}
	dry.catalog(c, forms)
	w := &catWriter{meta: make([]byte, 0, dry.nMeta), strs: make([]byte, 0, dry.nStr), raws: make([]byte, 0, dry.nRaw)}
	w.catalog(c, forms)
	lengths := make([]byte, 24)
	binary.LittleEndian.PutUint64(lengths[0:], uint64(len(w.meta)))
	binary.LittleEndian.PutUint64(lengths[8:], uint64(len(w.strs)))
	binary.LittleEndian.PutUint64(lengths[16:], uint64(len(w.raws)))
	return [4][]byte{lengths, w.meta, w.strs, w.raws}
}

// catalog writes c: the one description of the format's order.
func (w *catWriter) catalog(c *Catalog, forms [][3]string) {
	w.uint(CatalogCacheVersion)
	w.str(c.hash)
	w.uint(len(c.domains))
	domainIdx := make(map[string]int, len(c.domains))
	for i, d := range c.domains {
		domainIdx[d.Name] = i
		w.str(d.Name)
		w.str(d.Description)
		w.list(d.Groups)
	}
	w.uint(len(c.tools))
	for i, t := range c.tools {
		w.uint(domainIdx[t.Domain])
		for _, s := range [...]string{t.Name, t.QualifiedName, t.Title, t.Description, t.Summary, t.Group, t.Hash, t.src, t.raw} {
			w.str(s)
		}
		w.list(t.Tags)
		w.raw(t.InputSchema)
		w.raw(t.OutputSchema)
		w.raw(t.Annotations)
		w.list(t.Warnings)
		if t.params == nil {
			w.uint(0)
		} else {
			w.uint(len(t.params) + 1)
			for _, p := range t.params {
				w.str(p.Name)
				w.str(p.Description)
				if p.Required {
					w.uint(1)
				} else {
					w.uint(0)
				}
			}
		}
		for _, f := range forms[i] {
			w.str(f)
		}
	}
}

// catReader reads the regions catWriter wrote. Every read is bounds
// checked: damage ends in err, never in a panic or a huge allocation.
type catReader struct {
	meta       []byte
	strs       string // one string that every string field slices
	raws       []byte // one buffer that every raw field slices
	mpos, spos int
	rpos       int
	err        error
}

func (r *catReader) fail(what string) {
	if r.err == nil {
		r.err = errors.New(what)
	}
}

func (r *catReader) uint() int {
	if r.err != nil {
		return 0
	}
	n, k := binary.Uvarint(r.meta[r.mpos:])
	if k <= 0 || n > uint64(len(r.meta)+len(r.strs)+len(r.raws)) {
		r.fail("bad number at meta offset " + strconv.Itoa(r.mpos))
		return 0
	}
	r.mpos += k
	return int(n)
}

// count reads a count of items that take at least one byte of meta each.
func (r *catReader) count() int {
	n := r.uint()
	if n > len(r.meta)-r.mpos {
		r.fail("count larger than the file")
		return 0
	}
	return n
}

func (r *catReader) str() string {
	n := r.uint()
	if r.err != nil || n > len(r.strs)-r.spos {
		r.fail("string past the end of its region")
		return ""
	}
	s := r.strs[r.spos : r.spos+n]
	r.spos += n
	return s
}

func (r *catReader) list() []string {
	n := r.count()
	if n == 0 {
		return nil
	}
	l := make([]string, n-1)
	for i := range l {
		l[i] = r.str()
	}
	return l
}

func (r *catReader) raw() []byte {
	n := r.uint()
	if n == 0 || r.err != nil {
		return nil
	}
	n--
	if n > len(r.raws)-r.rpos {
		r.fail("schema past the end of its region")
		return nil
	}
	b := r.raws[r.rpos : r.rpos+n : r.rpos+n]
	r.rpos += n
	return b
}

// errOtherVersion means a cache was written under other build rules
// (CatalogCacheVersion): not damage, just not usable.
var errOtherVersion = errors.New("catalog cache of another version")

func decodeCatalog(data []byte) (*Catalog, error) { return decodeCatalogFor(data, true) }

// decodeCatalogFor is decodeCatalog; without search it fills only the
// ToolByKey lookup.
func decodeCatalogFor(data []byte, search bool) (*Catalog, error) {
	head := len(catCacheMagic) + sha256.Size
	if len(data) < head+4+24 || string(data[:len(catCacheMagic)]) != catCacheMagic {
		return nil, errors.New("not a toolscout catalog cache")
	}
	body := data[head+4:]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[head:]) {
		return nil, errors.New("checksum mismatch")
	}
	lm, ls, lr := binary.LittleEndian.Uint64(body), binary.LittleEndian.Uint64(body[8:]), binary.LittleEndian.Uint64(body[16:])
	rest := body[24:]
	if lm > uint64(len(rest)) || ls > uint64(len(rest))-lm || lr != uint64(len(rest))-lm-ls {
		return nil, errors.New("region lengths do not add up to the file")
	}
	// Every string and schema of the catalog points into data (read-only
	// once read: see readOnlyFile): no copy, no allocation per field.
	r := &catReader{meta: rest[:lm], raws: rest[lm+ls:]}
	if ls > 0 {
		r.strs = unsafe.String(&rest[lm], int(ls))
	}
	if v := r.uint(); v != CatalogCacheVersion {
		return nil, errOtherVersion
	}
	hash := r.str()
	var domains []*Domain
	if nd := r.count(); nd > 0 {
		domains = make([]*Domain, nd)
	}
	for i := range domains {
		d := &Domain{Name: r.str(), Description: r.str(), Groups: r.list()}
		d.words = SplitIdentifier(d.Name)
		domains[i] = d
	}
	n := r.count()
	var c *Catalog
	if search {
		c = newEmptyCatalog(n)
	} else {
		c = &Catalog{byKey: make(map[toolKey]*Tool, n), tools: make([]*Tool, 0, n)}
	}
	c.hash, c.domains = hash, domains
	slab := make([]Tool, n) // one allocation for every tool
	forms := make([][3]string, n)
	for i := 0; i < n && r.err == nil; i++ {
		di := r.uint()
		if di >= len(domains) {
			r.fail("tool of an unknown domain")
			break
		}
		d := domains[di]
		t := &slab[i]
		*t = Tool{Domain: d.Name, Name: r.str(), QualifiedName: r.str(), Title: r.str(), Description: r.str(),
			Summary: r.str(), Group: r.str(), Hash: r.str(), src: r.str(), raw: r.str()}
		t.Tags = r.list()
		t.InputSchema, t.OutputSchema, t.Annotations = r.raw(), r.raw(), r.raw()
		t.Warnings = r.list()
		if np := r.count(); np > 0 {
			t.params = make([]Param, np-1)
			for j := range t.params {
				t.params[j] = Param{Name: r.str(), Description: r.str(), Required: r.uint() == 1}
			}
		}
		forms[i] = [3]string{r.str(), r.str(), r.str()}
		t.setForms(forms[i])
		if r.err != nil {
			break
		}
		d.Tools = append(d.Tools, t)
		c.tools = append(c.tools, t)
	}
	if r.err == nil && search {
		c.index(forms)
	} else if r.err == nil {
		for _, t := range c.tools {
			c.byKey[toolKey{t.Domain, t.Name}] = t
		}
	}
	if r.err == nil && (r.mpos != len(r.meta) || r.spos != len(r.strs) || r.rpos != len(r.raws)) {
		r.fail("data left over after the last tool")
	}
	if r.err != nil {
		return nil, r.err
	}
	return c, nil
}
