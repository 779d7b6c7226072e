package index

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"io"
	"sort"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/toolscout/toolscout/internal/checksum"
)

// A first build of catalog files, streamed into catalog.bin: instead of
// decoding every tool's spec, building every tool and then encoding the
// catalog whole (at 1M tools a live heap of 2.2 GB, and a peak RSS of
// 5.7 GB: docs/benchmarks/2026-12-06-cold-memory-2.md), the files are
// read a few thousand tools at a time, each tool checked and built as
// NewCatalog builds it and written to catalog.bin's regions, which go to
// scratch files as they grow, and dropped. What is held is what is
// needed across tools: the spans of the tools in the mapped files (24
// bytes a tool), the qualified names (clashes), the lines of the
// catalog's hash, and where the strings and schemas that recur were
// first written. The catalog is then read back from catalog.bin, as a
// start whose files are unchanged reads it: its tools decode their
// parameters, schemas and name forms from the file when asked.
//
// The file is the one WriteCatalogCache writes for the catalog
// NewCatalog builds from the same files, byte for byte, and the error
// for bad input the one NewCatalog gives; anything this build does not
// read is ErrNotStreamable, for the caller to build the usual way.

// ErrNotStreamable is StreamCatalogCache's answer for files it does not
// read: a document whose structure scanCatalog does not take (a key
// that differs from "domains", "name", "description" or "tools" in case
// only, an escaped or repeated key, "tools": null), or one that does not
// decode (invalid JSON, a value of the wrong type). Build those the
// usual way (CatalogSource.SpecsFromLast, NewCatalogFromLast): it reads
// whatever encoding/json reads, and says where an error is.
var ErrNotStreamable = errors.New("catalog files not read by a streamed build")

// Scratch is a file that a streamed build writes one region of
// catalog.bin into, reads back while it writes (to find a string
// written before) and then copies into catalog.bin: an *os.File in
// index/store.
type Scratch interface {
	io.Writer
	io.ReaderAt
	io.WriterAt
}

// streamBatch is how many tools a streamed build decodes and builds at
// a time (on every core) before it checks and writes them in order.
const streamBatch = 4096

// spillAt is the size at which a region's buffer goes to its scratch
// file.
const spillAt = 1 << 20

// hashHole is what a streamed build writes where the catalog's hash
// goes (always 32 hex digits) until it knows it.
const hashHole = "00000000000000000000000000000000"

// streamDomain is one domain of the files as a streamed build reads it.
type streamDomain struct {
	spans  domainSpans
	spec   DomainSpec // without its tools
	path   string     // domains[i]: i is its place among its file's domains
	groups []string   // its tools' groups, sorted (nil: none)
	di     int        // its place among the domains sorted by name
}

// StreamCatalogCache builds the catalog of the source's files, as
// NewCatalog would from their specs, and writes it to w as catalog.bin
// under key (raw SHA-256), without holding the catalog: its regions go
// to meta, strs and raws (empty scratch files) as they are written, and
// are copied to w at the end. Bad input is the *CatalogError NewCatalog
// gives; files this build does not read, ErrNotStreamable. On an error
// w holds part of a file: write it where a failure leaves nothing
// (fileio.WriteAtomic). Read the catalog back with DecodeCatalogCache.
func (s *CatalogSource) StreamCatalogCache(ctx context.Context, w io.Writer, key []byte, meta, strs, raws Scratch) error {
	return s.streamCache(ctx, w, key, [3]Scratch{meta, strs, raws}, streamOptions{batch: streamBatch, spillAt: spillAt})
}

// streamOptions are the sizes of a streamed build (tests make them
// small), and afterBatch, called after each batch of tools is written.
type streamOptions struct {
	batch, spillAt int
	afterBatch     func()
}

func (s *CatalogSource) streamCache(ctx context.Context, w io.Writer, key []byte, files [3]Scratch, o streamOptions) error {
	if s.dropped {
		return errors.New("the catalog files' bytes were let go (CatalogSource.Drop): read them again")
	}
	doms, total, err := s.streamDomains()
	if err != nil {
		return err
	}
	sp := &catSpill{files: files, spillAt: o.spillAt}
	cw := &catWriter{spill: sp}
	sp.w = cw
	sp.strs = newFirstIndex(func(at, n int) []byte { return sp.read(regionStrs, at, n) })
	sp.raws = newFirstIndex(func(at, n int) []byte { return sp.read(regionRaws, at, n) })
	// The head, as catWriter.head writes it, with the hash to come.
	byName := make([]*streamDomain, len(doms))
	for i := range doms {
		byName[i] = &doms[i]
	}
	sort.Slice(byName, func(i, j int) bool { return byName[i].spec.Name < byName[j].spec.Name })
	cw.uint(CatalogCacheVersion)
	cw.str(hashHole)
	cw.uint(len(doms))
	for i, d := range byName {
		d.di = i
		cw.str(d.spec.Name)
		cw.str(strings.TrimSpace(d.spec.Description))
		cw.list(d.groups)
	}
	cw.uint(total)

	b := &streamBuild{o: o, doms: doms, qnames: make(map[string]struct{}, total), ends: make([]int, 0, total)}
	var (
		firstErr   error
		seenDomain = make(map[string]string)
	)
	for k := range doms {
		d := &doms[k]
		if firstErr == nil {
			firstErr = checkDomain(d.spec, d.path, seenDomain)
		}
		desc := strings.TrimSpace(d.spec.Description)
		names := make(map[string]int, len(d.spans.tools))
		for j := range d.spans.tools {
			bt, err := b.next(ctx, firstErr != nil)
			if err != nil {
				return err
			}
			if firstErr != nil {
				continue // decoded, for an error in the JSON after it
			}
			tpath := func() string { return fmt.Sprintf("%s.tools[%d]", d.path, j) }
			if bt.err != nil {
				firstErr = toolError(bt.err, d.spec.Source, tpath())
				continue
			}
			t := bt.t
			if first, dup := names[t.Name]; dup {
				firstErr = duplicateTool(d.spec, tpath(), t.Name, first)
				continue
			}
			names[t.Name] = j
			if _, clash := b.qnames[t.QualifiedName]; clash {
				t.QualifiedName = clashName(d.spec.Name, t.Name, j)
			}
			b.qnames[t.QualifiedName] = struct{}{}
			t.Hash = t.computeHash(desc)
			cw.tool(t, d.di)
			b.lines = append(append(append(b.lines, t.QualifiedName...), '='), t.Hash...)
			b.ends = append(b.ends, len(b.lines))
			sp.spill(false)
		}
	}
	if firstErr != nil {
		return firstErr
	}
	sp.spill(true)
	if sp.err != nil {
		return fmt.Errorf("write the catalog's scratch files: %w", sp.err)
	}
	hash := hashLines(unsafe.String(unsafe.SliceData(b.lines), len(b.lines)), b.ends)
	b.lines, b.ends, b.qnames = nil, nil, nil
	if _, err := files[regionStrs].WriteAt([]byte(hash), 0); err != nil {
		return fmt.Errorf("write the catalog's scratch files: %w", err)
	}
	return sp.copyTo(w, key)
}

// streamDomains scans the source's files for their domains and the
// spans of their tools, and reads each domain's name, description and
// groups (the head of catalog.bin, written before the tools).
func (s *CatalogSource) streamDomains() ([]streamDomain, int, error) {
	var doms []streamDomain
	total := 0
	inFile := map[string]int{} // by file name, as indexInSource counts
	for f, name := range s.names {
		spans, ok := scanCatalog(s.data[f])
		if !ok {
			return nil, 0, ErrNotStreamable
		}
		for _, d := range spans {
			sd := streamDomain{spans: d, spec: DomainSpec{Source: name}, path: fmt.Sprintf("domains[%d]", inFile[name])}
			inFile[name]++
			if d.name != nil && json.Unmarshal(d.name, &sd.spec.Name) != nil ||
				d.desc != nil && json.Unmarshal(d.desc, &sd.spec.Description) != nil {
				return nil, 0, ErrNotStreamable
			}
			total += len(d.tools)
			doms = append(doms, sd)
		}
	}
	// A tool's group, decoded as its spec decodes it: a build that
	// succeeds has every tool's, a build that fails writes nothing.
	var bad atomic.Bool
	inParallel(len(doms), func(lo, hi int) {
		for k := lo; k < hi && !bad.Load(); k++ {
			seen := map[string]bool{}
			for _, raw := range doms[k].spans.tools {
				var g struct {
					Group string `json:"group"`
				}
				if json.Unmarshal(raw, &g) != nil {
					bad.Store(true)
					return
				}
				if g.Group != "" && !seen[g.Group] {
					seen[g.Group] = true
					doms[k].groups = append(doms[k].groups, g.Group)
				}
			}
			sort.Strings(doms[k].groups)
		}
	})
	if bad.Load() {
		return nil, 0, ErrNotStreamable
	}
	return doms, total, nil
}

// streamBuild hands the tools of a streamed build out in order, built a
// batch at a time on every core, and holds what is kept across tools.
type streamBuild struct {
	o     streamOptions
	doms  []streamDomain
	k, j  int // the domain and tool of the next batch's first tool
	batch []streamTool
	pos   int
	// qnames are the qualified names given so far; lines and ends the
	// lines of the catalog's hash (catalogHash).
	qnames map[string]struct{}
	lines  []byte
	ends   []int
}

// streamTool is one tool of a batch: built (or its error), or only
// decoded (check).
type streamTool struct {
	d   *streamDomain
	j   int
	t   *Tool
	err error
	bad bool // its JSON does not decode
}

// next returns the next tool in order: built, or, with check, only
// decoded (after an error, for an error in the JSON to come first, as
// it does for NewCatalog). A tool that does not decode is
// ErrNotStreamable.
func (b *streamBuild) next(ctx context.Context, check bool) (streamTool, error) {
	if b.pos == len(b.batch) {
		if b.o.afterBatch != nil && len(b.batch) > 0 {
			b.o.afterBatch()
		}
		if err := ctx.Err(); err != nil {
			return streamTool{}, err
		}
		b.fill(check)
	}
	bt := b.batch[b.pos]
	b.batch[b.pos] = streamTool{}
	b.pos++
	if bt.bad {
		return streamTool{}, ErrNotStreamable
	}
	return bt, nil
}

// fill builds the next batch.
func (b *streamBuild) fill(check bool) {
	b.batch, b.pos = b.batch[:0], 0
	for len(b.batch) < b.o.batch && b.k < len(b.doms) {
		d := &b.doms[b.k]
		if b.j == len(d.spans.tools) {
			b.k, b.j = b.k+1, 0
			continue
		}
		b.batch = append(b.batch, streamTool{d: d, j: b.j})
		b.j++
	}
	inParallel(len(b.batch), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			bt := &b.batch[i]
			raw := bt.d.spans.tools[bt.j]
			var ts ToolSpec
			if json.Unmarshal(raw, &ts) != nil {
				bt.bad = true
				continue
			}
			if check {
				continue
			}
			ds := &bt.d.spec
			src := specDigest(*ds, ts)
			bt.t, bt.err = newTool(&Domain{Name: ds.Name}, ts)
			if bt.t != nil {
				bt.t.built.src, bt.t.built.raw = src, rawDigest(bt.d.spans.name, bt.d.spans.desc, raw)
			}
		}
	})
}

// Regions of catalog.bin, in order.
const (
	regionMeta = iota
	regionStrs
	regionRaws
)

// catSpill is where a streamed build's catWriter puts its regions:
// each buffer goes to its scratch file once spillAt bytes long.
type catSpill struct {
	w          *catWriter
	spillAt    int
	files      [3]Scratch
	flushed    [3]int // bytes of each region in its file
	strs, raws *firstIndex
	tmp        []byte
	err        error
}

// buf returns the writer's buffer of region r.
func (sp *catSpill) buf(r int) *[]byte {
	switch r {
	case regionMeta:
		return &sp.w.meta
	case regionStrs:
		return &sp.w.strs
	}
	return &sp.w.raws
}

// spill writes the buffers that reached spillAt (all, with all) to
// their files.
func (sp *catSpill) spill(all bool) {
	for r := range sp.files {
		b := sp.buf(r)
		if sp.err != nil || len(*b) == 0 || !all && len(*b) < sp.spillAt {
			continue
		}
		if _, err := sp.files[r].Write(*b); err != nil {
			sp.err = err
			continue
		}
		sp.flushed[r] += len(*b)
		*b = (*b)[:0]
	}
}

// read returns the n bytes of region r at offset at (nil when they are
// not all written yet): in its file, its buffer, or both.
func (sp *catSpill) read(r, at, n int) []byte {
	buf, flushed := *sp.buf(r), sp.flushed[r]
	if at < 0 || at+n > flushed+len(buf) || sp.err != nil {
		return nil
	}
	if at >= flushed {
		return buf[at-flushed : at-flushed+n]
	}
	if cap(sp.tmp) < n {
		sp.tmp = make([]byte, n)
	}
	b := sp.tmp[:n]
	k := min(n, flushed-at)
	if _, err := sp.files[r].ReadAt(b[:k], int64(at)); err != nil {
		sp.err = err
		return nil
	}
	copy(b[k:], buf)
	return b
}

// copyTo writes catalog.bin to w (writeCache's layout) from the
// scratch files, which it reads twice: for the checksum, which comes
// first, then for the bytes.
func (sp *catSpill) copyTo(w io.Writer, key []byte) error {
	lengths := make([]byte, 24)
	for r, n := range sp.flushed {
		binary.LittleEndian.PutUint64(lengths[8*r:], uint64(n))
	}
	crc := crc32.New(checksum.Castagnoli)
	crc.Write(lengths)
	if err := sp.copyRegions(crc); err != nil {
		return err
	}
	for _, part := range [][]byte{[]byte(catCacheMagic), key, binary.LittleEndian.AppendUint32(nil, crc.Sum32()), lengths} {
		if _, err := w.Write(part); err != nil {
			return err
		}
	}
	return sp.copyRegions(w)
}

func (sp *catSpill) copyRegions(w io.Writer) error {
	for r, f := range sp.files {
		if _, err := io.Copy(w, io.NewSectionReader(f, 0, int64(sp.flushed[r]))); err != nil {
			return fmt.Errorf("copy the catalog's scratch files: %w", err)
		}
	}
	return nil
}

// firstIndex finds where a string was first written in a region that
// is mostly in its scratch file: a short string by value; a longer one
// by a hash of its bytes, checked against the region's (one whose hash
// an earlier one has is kept by value in other), and kept by value once
// it recurs, up to keepMax bytes. Its memory grows with the strings
// that differ, by a few words each, not with their bytes.
type firstIndex struct {
	seed   maphash.Seed
	byVal  map[string]int
	byHash map[uint64]int
	other  map[string]int
	kept   int
	read   func(at, n int) []byte
}

const (
	// byValueMax is the longest string kept by value from the start.
	byValueMax = 32
	// keepMax bounds the bytes of recurring strings kept by value.
	keepMax = 32 << 20
)

func newFirstIndex(read func(at, n int) []byte) *firstIndex {
	return &firstIndex{seed: maphash.MakeSeed(), byVal: map[string]int{}, byHash: map[uint64]int{}, other: map[string]int{}, read: read}
}

// find returns where s was first written, if it was.
func (x *firstIndex) find(s string) (int, bool) {
	if at, ok := x.byVal[s]; ok || len(s) <= byValueMax {
		return at, ok
	}
	at, ok := x.byHash[maphash.String(x.seed, s)]
	if !ok {
		return 0, false
	}
	if string(x.read(at, len(s))) == s {
		if x.kept+len(s) <= keepMax {
			x.byVal[strings.Clone(s)] = at
			x.kept += len(s)
		}
		return at, true
	}
	at, ok = x.other[s]
	return at, ok
}

// mark records that s, which find did not find, is written at at.
func (x *firstIndex) mark(s string, at int) {
	if len(s) <= byValueMax {
		x.byVal[strings.Clone(s)] = at
		return
	}
	h := maphash.String(x.seed, s)
	if _, taken := x.byHash[h]; !taken {
		x.byHash[h] = at
		return
	}
	x.other[strings.Clone(s)] = at
}
