package index

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/fileio"
	"hash/crc32"
	"math"
	"strconv"
	"strings"
	"sync"
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
// A string field is 2n in meta and its n bytes next in strings, or 2n+1
// and an offset: the n bytes at that offset of strings, written before
// (version 7 on). What recurs is written once: parameter names and
// descriptions, groups, tags and schemas shared by tools, a summary
// that is the start of its description, name forms that are parts of
// one another. A schema is 0 for none, else 1 more than that number.
//
// A catalog that differs from catalog.bin's in few tools (an edit of a
// catalog file: the previous build is read, its unchanged tools reused)
// is saved as catalog.delta beside it instead of being written whole
// (49 MB at 100k tools):
//
//	"TSCATD01"                   magic
//	[32]byte                     the key of the delta's catalog
//	[36]byte                     the catalog.bin it applies to: its key and CRC
//	uint32                       CRC-32C of everything after this field
//	uint64 × 3, regions          as in catalog.bin, but the tools come in
//	                             runs: 2n then i for n tools of catalog.bin
//	                             from its i-th, 2n+1 then n tools in full
//
// A cache that is missing, was built from other bytes, or fails its
// checksum is simply rebuilt from the files; nothing depends on it being
// there.
const catCacheMagic = "TSCATV01"

const (
	catDeltaMagic = "TSCATD01"
	catDeltaFile  = "catalog.delta"
	catDeltaHead  = len(catDeltaMagic) + sha256.Size + len(catBaseID{})
)

// CatalogCacheVersion names the rules a cached catalog was built by. Bump
// it whenever NewCatalog derives anything differently (checks, summaries,
// warnings, hashes, qualified names, name forms): caches of the old
// rules then miss. TestCatalogCacheVersion fails until you do.
const CatalogCacheVersion = 7

const catCacheFile = "catalog.bin"

// CatalogSource is catalog files read into memory: what a catalog is built
// from, and what its cache is keyed by.
type CatalogSource struct {
	names   []string
	data    [][]byte
	key     string
	release []func() // unmaps data (Drop)
	dropped bool
}

// ReadCatalogSource reads catalog files (parsing them is Specs).
func ReadCatalogSource(paths []string) (*CatalogSource, error) {
	s := &CatalogSource{}
	for _, p := range paths {
		data, release, err := fileio.ReadMappedReleasable(p)
		if err != nil {
			s.Drop()
			return nil, fmt.Errorf("load catalog %s: %w", p, err)
		}
		s.names = append(s.names, p)
		s.data = append(s.data, data)
		s.release = append(s.release, release)
	}
	return s, nil
}

// Drop lets go of the files' bytes once the catalog is known without
// them (read from its cache: index/store does this), keeping the Key: a
// server would otherwise hold them mapped for its life, 39 MB at 100k
// tools in every replica. Specs fails after it.
func (s *CatalogSource) Drop() {
	if s.dropped {
		return
	}
	s.Key()
	s.dropped = true
	for _, release := range s.release {
		release()
	}
	s.data, s.release = nil, nil
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
func (s *CatalogSource) Specs() ([]DomainSpec, error) {
	specs, _, err := s.SpecsFromLast(func() *Last { return nil })
	return specs, err
}

// SpecsFromLast parses the source's files into domains as Specs does,
// decoding again only the tools whose bytes differ from what the
// previous build (what last returns; nil for none) was read from: the
// others are that build's tools' specs, which NewCatalogFromLast then
// takes over without checking them again. last (index/store's
// Store.LastBuild) runs while the files are scanned and their tools
// digested, which at 100k tools take about as long on the other cores.
// It returns the specs and the Last for NewCatalogFromLast (never nil):
// what last returned, with the reuse table of the tools decoded, so
// that the build records the digests of their bytes for the next read.
func (s *CatalogSource) SpecsFromLast(last func() *Last) ([]DomainSpec, *Last, error) {
	if s.dropped {
		return nil, &Last{}, errors.New("the catalog files' bytes were let go once their catalog was read from the data dir (CatalogSource.Drop): read them again")
	}
	var (
		prevLast *Last
		prev     *Catalog
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		prevLast = last()
		prev = prevLast.Catalog()
	}()
	scanned := make([]*scannedFile, len(s.names))
	for i, name := range s.names {
		scanned[i] = scanFile(name, s.data[i])
	}
	<-done
	if prevLast == nil {
		prevLast = &Last{}
	}
	prevLast.read = readTable{}
	var m *rawMatcher
	if prev != nil {
		m = &rawMatcher{prev: prev.tools}
	}
	var all []DomainSpec
	for _, f := range scanned {
		specs, err := f.specs(m, prevLast.read)
		if err != nil {
			return nil, prevLast, err
		}
		all = append(all, specs...)
		if m != nil {
			for _, ds := range specs {
				m.offset += len(ds.Tools)
			}
		}
	}
	return all, prevLast, nil
}

// rawMatcher finds the previous build's tool read from the same bytes
// as a tool of the files: first at the same position (a file edited in
// place keeps the order of its tools), then in a map of every previous
// tool by digest, built on the first tool that moved.
type rawMatcher struct {
	prev   []*Tool
	offset int // the position of the current file's first tool
	once   sync.Once
	byRaw  map[string]*Tool
}

// at returns the previous tool at the position of the k-th tool of the
// current file, or nil.
func (m *rawMatcher) at(k int) *Tool {
	if k += m.offset; k < len(m.prev) {
		return m.prev[k]
	}
	return nil
}

// find returns the previous tool read from the bytes with digest raw.
func (m *rawMatcher) find(raw string) *Tool {
	m.once.Do(func() {
		m.byRaw = make(map[string]*Tool, len(m.prev))
		for _, t := range m.prev {
			if raw := t.rawDigest(); raw != "" {
				m.byRaw[raw] = t
			}
		}
	})
	return m.byRaw[raw]
}

// catBaseID identifies a catalog.bin: its key and CRC, the 36 bytes after
// its magic.
type catBaseID [sha256.Size + 4]byte

// catBase is the catalog.bin a catalog was read from: a delta refers to
// its tools by their index.
type catBase struct {
	id   catBaseID
	slab []Tool // the file's tools, in order
}

// index returns the index of t among the base's tools, or -1 when t is
// not one of them (built, copied or read from a delta since). A tool of
// the base is an element of its slab; any other is a separate
// allocation, so comparing addresses tells them apart.
func (b *catBase) index(t *Tool) int {
	if b == nil || len(b.slab) == 0 {
		return -1
	}
	size := unsafe.Sizeof(Tool{})
	lo, p := uintptr(unsafe.Pointer(&b.slab[0])), uintptr(unsafe.Pointer(t))
	if p < lo || p >= lo+uintptr(len(b.slab))*size {
		return -1
	}
	return int((p - lo) / size)
}

// maxDeltaShare is the share of a catalog's tools that may be new or
// changed against catalog.bin for it to be saved as a delta; a catalog
// must also use that share of the base's tools, so that reading the
// base for it is not mostly waste.
const maxDeltaShare = 0.25

func (b *catBase) worthDelta(c *Catalog) bool {
	fromBase := 0
	for _, t := range c.tools {
		if b.index(t) >= 0 {
			fromBase++
		}
	}
	return float64(len(c.tools)-fromBase) <= maxDeltaShare*float64(len(c.tools)) &&
		float64(len(b.slab)-fromBase) <= maxDeltaShare*float64(len(b.slab))
}

// catWriter collects the three regions of an encoded catalog. A dry
// writer only counts their sizes, so that the real pass appends into
// buffers of the right size (growing 60 MB by doubling cost more than
// the encoding itself).
type catWriter struct {
	dry               bool
	nMeta, nStr, nRaw int
	meta, strs, raws  []byte
	// seen and seenRaw are where a string or schema written by shared
	// or raw was first written (offset in its region): filled by the
	// dry pass, read by the second, which writes the same offsets.
	seen, seenRaw map[string]int
	// spill, when set, is a streamed build's (StreamCatalogCache): one
	// pass, whose regions go to scratch files as they grow, and whose
	// first writings are found by its indexes instead of seen and
	// seenRaw (which would hold every schema).
	spill *catSpill
}

func (w *catWriter) uint(n int) {
	if w.dry {
		var b [binary.MaxVarintLen64]byte
		w.nMeta += binary.PutUvarint(b[:], uint64(n))
		return
	}
	w.meta = binary.AppendUvarint(w.meta, uint64(n))
}

// str writes s in full and returns its offset in the strings region.
func (w *catWriter) str(s string) int {
	at := w.nStr
	w.uint(len(s) << 1)
	w.nStr += len(s)
	if !w.dry {
		w.strs = append(w.strs, s...)
	}
	return at
}

// uvarintLen is the length of n as a uvarint.
func uvarintLen(n int) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], uint64(n))
}

// strAt writes s as the len(s) bytes of the strings region at at,
// written before (the same bytes), when that is shorter than writing s.
func (w *catWriter) strAt(s string, at int) {
	if uvarintLen(at) >= len(s) {
		w.str(s)
		return
	}
	w.uint(len(s)<<1 | 1)
	w.uint(at)
}

// strIn writes s as the bytes of base (written at baseAt) that it
// equals, if any, else in full.
func (w *catWriter) strIn(s, base string, baseAt int) {
	if i := strings.Index(base, s); i >= 0 && s != "" {
		w.strAt(s, baseAt+i)
		return
	}
	w.str(s)
}

// shared writes a string that recurs across tools (parameter names and
// descriptions, groups, tags, warnings) once a file: later ones refer
// back to it.
func (w *catWriter) shared(s string) {
	if at, ok := w.firstStr(s); ok && at < w.nStr {
		w.strAt(s, at)
		return
	}
	at := w.str(s)
	switch {
	case s == "":
	case w.spill != nil:
		w.spill.strs.mark(s, at)
	case w.dry:
		w.seen[s] = at
	}
}

// firstStr returns where s was first written by shared, if it was.
func (w *catWriter) firstStr(s string) (int, bool) {
	if w.spill != nil {
		return w.spill.strs.find(s)
	}
	at, ok := w.seen[s]
	return at, ok
}

// list writes a string slice, keeping nil apart from empty.
func (w *catWriter) list(l []string) {
	if l == nil {
		w.uint(0)
		return
	}
	w.uint(len(l) + 1)
	for _, s := range l {
		w.shared(s)
	}
}

// raw writes a raw JSON value, keeping nil apart from empty: once a
// file, later equal ones (tools of one shape) referring back to it.
func (w *catWriter) raw(b []byte) {
	if b == nil {
		w.uint(0)
		return
	}
	key := unsafe.String(unsafe.SliceData(b), len(b)) // b never changes: a catalog's schemas are read-only
	var at int
	var ok bool
	if w.spill != nil {
		at, ok = w.spill.raws.find(key)
	} else {
		at, ok = w.seenRaw[key]
	}
	if ok && at < w.nRaw && uvarintLen(at) < len(b) {
		w.uint(len(b)<<1 | 1 + 1)
		w.uint(at)
		return
	}
	// The dry pass keeps the last full writing of a value it could not
	// refer back to (too short for a reference to save bytes: it never
	// can, nor can the second pass); a streamed build keeps the first,
	// which comes to the same bytes.
	switch {
	case len(b) == 0:
	case w.spill != nil:
		if !ok {
			w.spill.raws.mark(key, w.nRaw)
		}
	case w.dry:
		w.seenRaw[key] = w.nRaw
	}
	w.uint(len(b)<<1 + 1)
	w.nRaw += len(b)
	if !w.dry {
		w.raws = append(w.raws, b...)
	}
}

// encode returns what write writes: the region lengths, then the regions
// (a cache file's body, in order). A dry pass first sizes the buffers.
func encode(write func(w *catWriter)) [4][]byte {
	dry := &catWriter{dry: true, seen: map[string]int{}, seenRaw: map[string]int{}}
	write(dry)
	w := &catWriter{meta: make([]byte, 0, dry.nMeta), strs: make([]byte, 0, dry.nStr), raws: make([]byte, 0, dry.nRaw), seen: dry.seen, seenRaw: dry.seenRaw}
	write(w)
	lengths := make([]byte, 24)
	binary.LittleEndian.PutUint64(lengths[0:], uint64(len(w.meta)))
	binary.LittleEndian.PutUint64(lengths[8:], uint64(len(w.strs)))
	binary.LittleEndian.PutUint64(lengths[16:], uint64(len(w.raws)))
	return [4][]byte{lengths, w.meta, w.strs, w.raws}
}

// encodeCatalog returns c encoded as catalog.bin's body.
func encodeCatalog(c *Catalog) [4][]byte { return encode(func(w *catWriter) { w.catalog(c) }) }

// catalog writes c whole: the one description of catalog.bin's order.
func (w *catWriter) catalog(c *Catalog) {
	domainIdx := w.head(c)
	w.uint(len(c.tools))
	for _, t := range c.tools {
		w.tool(t, domainIdx[t.Domain])
	}
}

// delta writes c as catalog.delta does: its tools in runs, either of
// consecutive tools of its base (2n, then the first one's index) or of
// tools written whole (2n+1, then the tools).
func (w *catWriter) delta(c *Catalog) {
	domainIdx := w.head(c)
	w.uint(len(c.tools))
	for i := 0; i < len(c.tools); {
		j := i + 1
		if at := c.base.index(c.tools[i]); at >= 0 {
			for j < len(c.tools) && c.base.index(c.tools[j]) == at+j-i {
				j++
			}
			w.uint(2 * (j - i))
			w.uint(at)
		} else {
			for j < len(c.tools) && c.base.index(c.tools[j]) < 0 {
				j++
			}
			w.uint(2*(j-i) + 1)
			for _, t := range c.tools[i:j] {
				w.tool(t, domainIdx[t.Domain])
			}
		}
		i = j
	}
}

// head writes the format version, c's hash and domains, and returns the
// domains' indexes by name.
func (w *catWriter) head(c *Catalog) map[string]int {
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
	return domainIdx
}

// tool writes one tool, of the domain at index di. What a tool repeats
// of itself (its summary, the start of its description; its name forms,
// one another) refers back to it, what tools share (parameters, groups,
// tags, schemas) to its first writing.
func (w *catWriter) tool(t *Tool, di int) {
	w.uint(di)
	w.str(t.Name)
	w.str(t.QualifiedName)
	w.str(t.Title)
	descAt := w.str(t.Description)
	w.strIn(t.Summary, t.Description, descAt)
	w.shared(t.Group)
	for _, s := range [...]string{t.Hash, t.srcDigest(), t.rawDigest()} {
		w.str(s)
	}
	x := t.extras(true, true)
	w.list(x.tags)
	w.raw(x.input)
	w.raw(x.output)
	w.raw(x.annotations)
	w.list(x.warnings)
	if t.Disabled {
		w.uint(1)
	} else {
		w.uint(0)
	}
	w.shared(t.Deprecated)
	if params := t.Params(); params == nil {
		w.uint(0)
	} else {
		w.uint(len(params) + 1)
		for _, p := range params {
			w.shared(p.Name)
			w.shared(p.Description)
			if p.Required {
				w.uint(1)
			} else {
				w.uint(0)
			}
		}
	}
	// "domain name" in words first: the name in words is mostly its
	// end, and the qualified name in words mostly the same.
	forms := nameForms(t)
	at := w.str(forms[1])
	w.strIn(forms[0], forms[1], at)
	w.strIn(forms[2], forms[1], at)
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
	psrc       *paramSource
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
	if k <= 0 || n > 2*uint64(len(r.meta)+len(r.strs)+len(r.raws))+2 {
		r.fail("bad number at meta offset " + strconv.Itoa(r.mpos))
		return 0
	}
	r.mpos += k
	return int(n)
}

// count reads a count of items that take at least one byte of meta each.
func (r *catReader) count() int { return r.countOf(1) }

// minToolMeta is the fewest bytes of meta a tool written whole takes
// (catWriter.tool): a uvarint each for its domain, 9 strings, tags,
// 3 raws, warnings, disabled, deprecated, params and 3 name forms.
const minToolMeta = 21

// countOf reads a count of items that take at least size bytes of meta
// each: a count the file cannot hold is damage, not a size to allocate
// (a Tool is 392 bytes; a count of one byte each made a 60 KB file
// allocate 24 MB).
func (r *catReader) countOf(size int) int {
	n := r.uint()
	if n > (len(r.meta)-r.mpos)/size {
		r.fail("count larger than the file")
		return 0
	}
	return n
}

// str reads a string written in full (2n: its n bytes are next in the
// strings region) or referring back to bytes read before (2n+1, then
// their offset).
func (r *catReader) str() string {
	v := r.uint()
	n := v >> 1
	if v&1 == 1 {
		at := r.uint()
		if r.err != nil || at > r.spos || n > r.spos-at {
			r.fail("string reference past the strings read")
			return ""
		}
		return r.strs[at : at+n]
	}
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

// raw reads a raw value: 0 for nil, else 1 more than str's number (in
// the raws region).
func (r *catReader) raw() []byte {
	v := r.uint()
	if v == 0 || r.err != nil {
		return nil
	}
	v--
	n := v >> 1
	if v&1 == 1 {
		at := r.uint()
		if r.err != nil || at > r.rpos || n > r.rpos-at {
			r.fail("schema reference past the schemas read")
			return nil
		}
		return r.raws[at : at+n : at+n]
	}
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

// catParts is a decoded cache file: what its catalog is assembled from.
type catParts struct {
	hash    string
	domains []*Domain
	tools   []*Tool
	base    *catBase
	// rawsAt and rawsEnd are where the raws region is in the file.
	rawsAt, rawsEnd int
}

func decodeCatalog(data []byte) (*Catalog, error) {
	p, err := decodeBase(data)
	if err != nil {
		return nil, err
	}
	return p.catalog(), nil
}

// openRegions checks a cache file's magic, checksum and region lengths,
// and returns the reader of its regions past the format version. The
// checksum follows head bytes (the magic included).
func openRegions(data []byte, magic string, head int) (*catReader, error) {
	if len(data) < head+4+24 || string(data[:len(magic)]) != magic {
		return nil, errors.New("not a toolscout catalog cache")
	}
	body := data[head+4:]
	if crc32.Checksum(body, checksum.Castagnoli) != binary.LittleEndian.Uint32(data[head:]) {
		return nil, errors.New("checksum mismatch")
	}
	lm, ls, lr := binary.LittleEndian.Uint64(body), binary.LittleEndian.Uint64(body[8:]), binary.LittleEndian.Uint64(body[16:])
	rest := body[24:]
	if lm > uint64(len(rest)) || ls > uint64(len(rest))-lm || lr != uint64(len(rest))-lm-ls {
		return nil, errors.New("region lengths do not add up to the file")
	}
	// Every string and schema of the catalog points into data (read-only
	// once read: see fileio.ReadMapped): no copy, no allocation per field.
	r := &catReader{meta: rest[:lm], raws: rest[lm+ls:]}
	if ls > 0 {
		r.strs = unsafe.String(&rest[lm], int(ls))
	}
	if v := r.uint(); v != CatalogCacheVersion {
		return nil, errOtherVersion
	}
	return r, nil
}

// done is r's error, or an error if data is left after the last tool.
func (r *catReader) done() error {
	if r.err == nil && (r.mpos != len(r.meta) || r.spos != len(r.strs) || r.rpos != len(r.raws)) {
		r.fail("data left over after the last tool")
	}
	return r.err
}

// domains reads the hash and domains that head wrote.
func (r *catReader) domains() (string, []*Domain) {
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
	return hash, domains
}

// tool reads a tool that catWriter.tool wrote into t, and adds it to its
// domain and to p.
func (r *catReader) tool(t *Tool, p *catParts) {
	di := r.uint()
	if di >= len(p.domains) {
		r.fail("tool of an unknown domain")
		return
	}
	d := p.domains[di]
	*t = Tool{Domain: d.Name, Name: r.str(), QualifiedName: r.str(), Title: r.str(), Description: r.str(),
		Summary: r.str(), Group: r.str(), Hash: r.str()}
	sm, ss, rp := r.mpos, r.spos, r.rpos
	src, raw := r.digests()
	x := r.extras(true, true)
	t.Disabled = r.uint() == 1
	t.Deprecated = r.str()
	onDemand := r.mpos <= math.MaxUint32 && r.spos <= math.MaxUint32 && r.rpos <= math.MaxUint32
	if onDemand {
		// Checked now, decoded when asked (Tool.Params, fileForms,
		// fileDigests, fileExtras).
		t.psrc, t.pm, t.ps, t.sm, t.ss, t.rp = r.source(), uint32(r.mpos), uint32(r.spos), uint32(sm), uint32(ss), uint32(rp)
		r.skipParams()
		r.forms()
	} else {
		t.built = &toolBuilt{params: r.params(), forms: r.forms(), src: src, raw: raw, extras: x}
	}
	t.formsOf = t.QualifiedName
	if r.err == nil {
		d.Tools = append(d.Tools, t)
		p.tools = append(p.tools, t)
	}
}

// forms reads a tool's name forms (catWriter.tool writes the second
// first, the others referring to it).
func (r *catReader) forms() [3]string {
	var forms [3]string
	forms[1] = r.str()
	forms[0], forms[2] = r.str(), r.str()
	return forms
}

// digests reads a tool's spec and raw digests.
func (r *catReader) digests() (src, raw string) {
	src = r.str()
	return src, r.str()
}

// extras reads a tool's tags, schemas and warnings (the lists only when
// asked: else checked and skipped, as skipParams does).
func (r *catReader) extras(tags, warnings bool) toolExtras {
	var x toolExtras
	if tags {
		x.tags = r.list()
	} else {
		r.skipList()
	}
	x.input, x.output, x.annotations = r.raw(), r.raw(), r.raw()
	if warnings {
		x.warnings = r.list()
	} else {
		r.skipList()
	}
	return x
}

// skipList reads past a list, checking it as list does, without
// keeping it.
func (r *catReader) skipList() {
	n := r.count()
	for j := 0; j < n-1 && r.err == nil; j++ {
		r.str()
	}
}

// fileExtras decodes the tags, output schema, annotations and warnings
// of a tool read from a catalog file from it (the lists only when
// asked), as fileForms does its name forms: the bytes were checked when
// the file was opened.
func (t *Tool) fileExtras(tags, warnings bool) toolExtras {
	r := catReader{meta: t.psrc.meta, strs: t.psrc.strs, raws: t.psrc.raws, mpos: int(t.sm), spos: int(t.ss), rpos: int(t.rp)}
	r.digests()
	return r.extras(tags, warnings)
}

// fileDigests decodes the digests of a tool read from a catalog file
// from it, as fileForms does its name forms.
func (t *Tool) fileDigests() (src, raw string) {
	r := catReader{meta: t.psrc.meta, strs: t.psrc.strs, mpos: int(t.sm), spos: int(t.ss)}
	return r.digests()
}

// fileForms decodes the name forms of a tool read from a catalog file
// from it: the same bytes, read from the same place, as when the file
// was opened and checked (catReader.tool), so they cannot fail now.
func (t *Tool) fileForms() [3]string {
	r := catReader{meta: t.psrc.meta, strs: t.psrc.strs, mpos: int(t.pm), spos: int(t.ps)}
	r.skipParams()
	return r.forms()
}

// params reads a tool's parameters: nil when it has none written (the
// writer's 0), else a slice, empty when the schema has no properties.
func (r *catReader) params() []Param {
	np := r.count()
	if np == 0 {
		return nil
	}
	ps := make([]Param, np-1)
	for j := range ps {
		ps[j] = Param{Name: r.str(), Description: r.str(), Required: r.uint() == 1}
	}
	return ps
}

// skipParams reads past a tool's parameters, checking them as params
// does, without keeping them.
func (r *catReader) skipParams() {
	np := r.count()
	for j := 0; j < np-1 && r.err == nil; j++ {
		r.str()
		r.str()
		r.uint()
	}
}

// paramSource is the meta and strings of a catalog file a tool's
// parameters are decoded from when asked (Tool.Params): a server asks
// them of no tool (indexing and lint do), and at 100k tools holding them
// decoded was 12 MB of heap for the server's life
// (docs/benchmarks/2026-12-06-serve-memory.md).
type paramSource struct {
	meta []byte
	strs string
	raws []byte
}

// source returns the paramSource of r's buffers, made once per reader.
func (r *catReader) source() *paramSource {
	if r.psrc == nil {
		r.psrc = &paramSource{meta: r.meta, strs: r.strs, raws: r.raws}
	}
	return r.psrc
}

// decodeBase decodes catalog.bin.
func decodeBase(data []byte) (*catParts, error) {
	r, err := openRegions(data, catCacheMagic, len(catCacheMagic)+sha256.Size)
	if err != nil {
		return nil, err
	}
	p := &catParts{base: &catBase{}, rawsAt: len(data) - len(r.raws), rawsEnd: len(data)}
	copy(p.base.id[:], data[len(catCacheMagic):])
	p.hash, p.domains = r.domains()
	n := r.countOf(minToolMeta)
	p.tools = make([]*Tool, 0, n)
	p.base.slab = make([]Tool, n) // one allocation for every tool
	for i := 0; i < n && r.err == nil; i++ {
		r.tool(&p.base.slab[i], p)
	}
	return p, r.done()
}

// decodeDelta decodes a catalog.delta over b.
func (b *catBase) decodeDelta(data []byte) (*catParts, error) {
	head := len(catDeltaMagic) + sha256.Size + len(catBaseID{})
	if len(data) >= head && !bytes.Equal(data[len(catDeltaMagic)+sha256.Size:head], b.id[:]) {
		return nil, errors.New("a delta over another catalog.bin")
	}
	r, err := openRegions(data, catDeltaMagic, head)
	if err != nil {
		return nil, err
	}
	p := &catParts{base: b}
	p.hash, p.domains = r.domains()
	byName := make(map[string]*Domain, len(p.domains))
	for _, d := range p.domains {
		byName[d.Name] = d
	}
	// A tool is one of the base's or takes at least a byte of meta.
	n := r.uint()
	if n > len(b.slab)+len(r.meta)-r.mpos {
		r.fail("more tools than the base and the delta hold")
		n = 0
	}
	p.tools = make([]*Tool, 0, n)
	for len(p.tools) < n && r.err == nil {
		tag := r.uint()
		k := tag / 2
		if k == 0 || k > n-len(p.tools) {
			r.fail("bad run of tools")
			break
		}
		if tag%2 == 1 {
			if k > (len(r.meta)-r.mpos)/minToolMeta {
				r.fail("a run of more tools than the delta holds")
				break
			}
			run := make([]Tool, k)
			for i := 0; i < k && r.err == nil; i++ {
				r.tool(&run[i], p)
			}
			continue
		}
		at := r.uint()
		if at > len(b.slab) || k > len(b.slab)-at {
			r.fail("run past the base's tools")
			break
		}
		for i := at; i < at+k; i++ {
			t := &b.slab[i]
			d := byName[t.Domain]
			if d == nil {
				r.fail("a base tool of a domain the delta does not have")
				break
			}
			d.Tools = append(d.Tools, t)
			p.tools = append(p.tools, t)
		}
	}
	return p, r.done()
}

// catalog assembles p's catalog.
func (p *catParts) catalog() *Catalog {
	c := newEmptyCatalog(len(p.tools))
	c.hash, c.domains, c.tools, c.base = p.hash, p.domains, p.tools, p.base
	c.indexNames()
	return c
}
