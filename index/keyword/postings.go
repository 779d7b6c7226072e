package keyword

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"github.com/blevesearch/bleve/v2/index/scorch"
	bleveindex "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
	zap "github.com/blevesearch/zapx/v16"
)

// A term clause read term at a time (taat.go) decodes every posting of
// its term, and at 1M tools a hybrid query's keyword list reads about
// 830,000 of them: nearly all its clauses' postings, since the synthetic
// requests' words are common and pruning (prune.go) finds few to skip.
// Read through scorch's term field reader, a posting also cost the
// reader's bookkeeping (bytes-read counters on every call) and zap's
// Norm, a square root and a division, only for the score to turn it back
// into the field's length with another division: together a third of the
// keyword list's CPU at 1M tools
// (docs/benchmarks/2026-12-06-1m-hybrid.md). So segmentPostings reads
// each segment's postings iterator itself, numbers documents as scorch
// does (each segment's first document after all the documents of the
// segments before it, deleted ones included), and takes a zap v16
// posting's norm from the field length it stores through a table of the
// very value zap's Norm computes: the same documents, frequencies and
// norms, to the last bit, as scorch's reader hands out
// (TestSegmentPostingsAsScorch).

// segmentPostings is a term's postings in a field across the segments of
// a scorch snapshot: a bleveindex.TermFieldReader without the snapshot's
// bookkeeping.
type segmentPostings struct {
	pls  []segment.PostingsList
	its  []segment.PostingsIterator
	offs []uint64 // each segment's first document number
	ends []uint64 // each segment's end: the next one's first number
	at   int      // the segment being read
	// cur is the number of the posting handed out last (when started).
	cur     uint64
	started bool
	count   uint64
}

var _ bleveindex.TermFieldReader = (*segmentPostings)(nil)

// segmentDicts are the term dictionaries of a snapshot's segments by
// field, looked up once per query for all its terms of the field.
type segmentDicts struct {
	segs       []*scorch.SegmentSnapshot
	offs, ends []uint64
	dicts      map[string][]segment.TermDictionary
}

// newSegmentDicts returns the dictionaries of r's segments, or nil when r
// is not a scorch snapshot (its terms are then read through r).
func newSegmentDicts(r bleveindex.IndexReader) *segmentDicts {
	s, ok := r.(interface {
		Segments() []*scorch.SegmentSnapshot
	})
	if !ok {
		return nil
	}
	segs := s.Segments()
	d := &segmentDicts{segs: segs, offs: make([]uint64, len(segs)), ends: make([]uint64, len(segs)), dicts: map[string][]segment.TermDictionary{}}
	var running uint64
	for i, ss := range segs {
		d.offs[i] = running
		running += ss.Segment().Count() // deleted documents included, as scorch numbers them
		d.ends[i] = running
	}
	return d
}

// postings returns term's postings in field, with frequencies and norms.
func (d *segmentDicts) postings(term []byte, field string) (*segmentPostings, error) {
	dicts, ok := d.dicts[field]
	if !ok {
		dicts = make([]segment.TermDictionary, len(d.segs))
		for i, ss := range d.segs {
			dict, err := ss.Segment().Dictionary(field)
			if err != nil {
				return nil, fmt.Errorf("keyword query: field %s: %w", field, err)
			}
			dicts[i] = dict
		}
		d.dicts[field] = dicts
	}
	p := &segmentPostings{pls: make([]segment.PostingsList, len(d.segs)), its: make([]segment.PostingsIterator, len(d.segs)), offs: d.offs, ends: d.ends}
	for i, ss := range d.segs {
		pl, err := dicts[i].PostingsList(term, ss.Deleted(), nil)
		if err != nil {
			return nil, fmt.Errorf("keyword query: field %s: %w", field, err)
		}
		p.pls[i] = pl
		p.its[i] = pl.Iterator(true, true, false, nil)
		p.count += pl.Count()
	}
	return p, nil
}

// Next returns the next posting.
func (p *segmentPostings) Next(rv *bleveindex.TermFieldDoc) (*bleveindex.TermFieldDoc, error) {
	for p.at < len(p.its) {
		next, err := p.its[p.at].Next()
		if err != nil {
			return nil, err
		}
		if next != nil {
			return p.fill(next, rv), nil
		}
		p.at++
	}
	return nil, nil
}

// Advance returns the first posting at or after id. As scorch's reader,
// it starts again from the first posting when asked to go back.
func (p *segmentPostings) Advance(id bleveindex.IndexInternalID, rv *bleveindex.TermFieldDoc) (*bleveindex.TermFieldDoc, error) {
	if len(id) != 8 {
		return nil, errNotScorch
	}
	num := binary.BigEndian.Uint64(id)
	if p.started && p.cur >= num {
		for i, pl := range p.pls {
			p.its[i] = pl.Iterator(true, true, false, nil)
		}
		p.at, p.started = 0, false
	}
	// The segment holding num: the last whose first document is at or
	// before it.
	seg := sort.Search(len(p.offs), func(i int) bool { return p.offs[i] > num }) - 1
	if seg < 0 || seg >= len(p.its) {
		return nil, fmt.Errorf("keyword query: document number %d is outside the index", num)
	}
	p.at = seg
	next, err := p.its[seg].Advance(num - p.offs[seg])
	if err != nil {
		return nil, err
	}
	if next == nil {
		return p.Next(rv)
	}
	return p.fill(next, rv), nil
}

// fill writes the posting of the current segment into rv.
func (p *segmentPostings) fill(next segment.Posting, rv *bleveindex.TermFieldDoc) *bleveindex.TermFieldDoc {
	if rv == nil {
		rv = &bleveindex.TermFieldDoc{}
	}
	p.cur, p.started = next.Number()+p.offs[p.at], true
	rv.ID = binary.BigEndian.AppendUint64(rv.ID[:0], p.cur)
	rv.Freq, rv.Norm = freqNorm(next)
	return rv
}

// freqNorm is a posting's frequency and norm, as scorch's reader hands
// them out.
func freqNorm(next segment.Posting) (uint64, float64) {
	if zp, ok := next.(*zap.Posting); ok {
		return zp.Frequency(), zapNorm(zp.NormUint64())
	}
	return next.Frequency(), next.Norm()
}

// segments is the number of segments the postings span.
func (p *segmentPostings) segments() int { return len(p.its) }

// segment returns segment seg's postings iterator, which numbers its
// documents from 0 (the segment's first, off in the index), and the
// segment's range [off, end) of document numbers. A pruned sum
// (prune.go) reads each segment's iterator once, forwards, and nothing
// else reads the postings then.
func (p *segmentPostings) segment(seg int) (it segment.PostingsIterator, off, end uint64) {
	return p.its[seg], p.offs[seg], p.ends[seg]
}

// zapNorms are zap v16's norms of the field lengths below their count.
var zapNorms = func() (t [4096]float64) {
	for n := range t {
		t[n] = zapNormOf(uint64(n))
	}
	return t
}()

// zapNorm is zap v16's Posting.Norm of a field of n words.
func zapNorm(n uint64) float64 {
	if n < uint64(len(zapNorms)) {
		return zapNorms[n]
	}
	return zapNormOf(n)
}

// zapNormOf computes zap v16's Posting.Norm, operation for operation
// (zapx/v16 posting.go: the norm's bits are the field length).
func zapNormOf(n uint64) float64 {
	return float64(float32(1.0 / math.Sqrt(float64(uint32(n)))))
}

// Count is the term's document frequency.
func (p *segmentPostings) Count() uint64 { return p.count }

// Close releases nothing: the iterators read the snapshot's segments,
// which the search holds.
func (p *segmentPostings) Close() error { return nil }

// Size estimates the reader's memory in bytes.
func (p *segmentPostings) Size() int {
	n := 96 + 8*len(p.offs)
	for i := range p.its {
		n += p.pls[i].Size() + p.its[i].Size()
	}
	return n
}
