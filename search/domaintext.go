package search

import (
	"cmp"
	"math"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/text"
)

// domainText is a BM25 index of what each domain is for, one document a
// domain: its name's words, its description (an upstream's configured
// one, else the one derived from its title, instructions and tools:
// server/gateway), what the server says of itself beside a configured
// description (index.Domain.About) and its tools' names and summaries
// taken as a whole.
// A request about a server's purpose ("what is stored about Bob?" to a
// memory server described as "recall what is stored about people") finds
// the domain here when none of its tools' own texts has the words. It is
// built once per catalog (Engine.domainTextOf), in memory: a catalog has
// far fewer domains than tools.
type domainText struct {
	cat   *index.Catalog
	names []string
	size  []float64
	avg   float64
	// stems numbers the catalog's stems; the postings of stem i are
	// post[off[i]:off[i+1]]: the domains whose text has it, in order,
	// with the count. A request reads the postings of its own stems
	// only. One array, not a slice per stem: at 100k tools a map of
	// slices held 8.3 MB of a serve's heap for its life and built in
	// twice the time (docs/benchmarks/2026-12-06-serve-memory.md).
	stems map[string]int32
	off   []int32
	post  []domainPosting
	// scratch keeps the requests' dense scores between searches
	// (coverageBuf; kept, not a sync.Pool, which made a new one for a
	// search that resumed on the other core).
	scratch kept[coverageBuf]
}

// domainPosting is one domain's count of a stem.
type domainPosting struct {
	dom int32
	tf  int32
}

// BM25 constants of the domain documents, as plain BM25's.
const (
	domainK1 = 1.2
	domainB  = 0.75
)

// newDomainText indexes cat's domains. Words are stemmed once each
// (a catalog's vocabulary is small against its text: at 100k tools
// stemming every word again took most of the time), and counted by
// stem number in a dense array, not a map. Each word is looked up as
// bytes (text.EachWord): a string is made only for a word not seen
// before, not a slice of strings per text (at 100k tools 205k
// allocations and 44 MB instead of 513k and 70 MB): the build is on a
// start's way to its first answer.
func newDomainText(cat *index.Catalog) *domainText {
	doms := cat.Domains()
	d := &domainText{cat: cat, names: make([]string, len(doms)), size: make([]float64, len(doms)), stems: map[string]int32{}}
	// stemOf numbers each word's stem (-1: a stop word, or no stem).
	stemOf := map[string]int32{}
	var (
		tf      []int32 // by stem number, zero between domains
		touched []int32 // the stems counted in this domain
		hits    []stemHit
		total   float64
		buf     []byte
	)
	count := func(w []byte) {
		id, ok := stemOf[string(w)]
		if !ok {
			ws := string(w)
			id = -1
			if !text.Stopword(ws) {
				if st := text.Stem(ws); st != "" {
					if id, ok = d.stems[st]; !ok {
						id = int32(len(d.stems))
						d.stems[st] = id
						tf = append(tf, 0)
					}
				}
			}
			stemOf[ws] = id
		}
		if id >= 0 {
			if tf[id] == 0 {
				touched = append(touched, id)
			}
			tf[id]++
		}
	}
	add := func(s string) { buf = text.EachWord(s, buf, count) }
	for i, dom := range doms {
		add(dom.Name)
		add(dom.Description)
		add(dom.About)
		for _, t := range dom.Tools {
			add(t.Name)
			add(t.Summary)
		}
		n := 0
		for _, id := range touched {
			hits = append(hits, stemHit{id, domainPosting{int32(i), tf[id]}})
			n += int(tf[id])
			tf[id] = 0
		}
		touched = touched[:0]
		d.names[i], d.size[i] = dom.Name, float64(n)
		total += float64(n)
	}
	// Grouped by stem with a counting sort, each stem's domains in
	// catalog order.
	d.off = make([]int32, len(d.stems)+1)
	for _, h := range hits {
		d.off[h.stem+1]++
	}
	for i := 1; i < len(d.off); i++ {
		d.off[i] += d.off[i-1]
	}
	d.post = make([]domainPosting, len(hits))
	next := slices.Clone(d.off[:len(d.off)-1])
	for _, h := range hits {
		d.post[next[h.stem]] = h.p
		next[h.stem]++
	}
	if len(doms) > 0 {
		d.avg = total / float64(len(doms))
	}
	return d
}

// stemHit is a posting with its stem's number, while building.
type stemHit struct {
	stem int32
	p    domainPosting
}

// postings returns the domains whose text has stem, with the count.
func (d *domainText) postings(stem string) []domainPosting {
	id, ok := d.stems[stem]
	if !ok {
		return nil
	}
	return d.post[d.off[id]:d.off[id+1]]
}

// idf is BM25's inverse document frequency of a stem over the domains.
func (d *domainText) idf(stem string) float64 {
	n, df := float64(len(d.names)), float64(len(d.postings(stem)))
	return math.Log1p((n - df + 0.5) / (df + 0.5))
}

// coverage returns, for each domain whose document has a word of q, its
// BM25 score over the request's attainable one (the sum of its words'
// IDFs: what a document of average length holding each once scores),
// at most 1: how much of the request the domain as a whole is about.
// Words no domain has count in the attainable score, so a request of
// names the catalog never saw covers little. A catalog of one domain
// says nothing by it: nil.
func (d *domainText) coverage(q string) map[string]float64 {
	return d.coverageInto(q, nil)
}

// coverageInto is coverage, written into dst (emptied first) when dst is
// not nil: a map reused across requests (coverageMaps).
func (d *domainText) coverageInto(q string, dst map[string]float64) map[string]float64 {
	if len(d.names) < 2 || d.avg == 0 {
		return nil
	}
	buf := d.scratch.take(newCoverageBuf)
	defer d.scratch.keep(buf)
	attainable := d.score(q, buf)
	var out map[string]float64
	if attainable != 0 && len(buf.hit) > 0 {
		if out = dst; out == nil {
			out = make(map[string]float64, len(buf.hit))
		}
		clear(out)
		for _, i := range buf.hit {
			out[d.names[i]] = min(1, buf.score[i]/attainable)
		}
	}
	buf.reset()
	return out
}

// coverageOf is coverage of the domains of tools, one value a tool (0 for
// a nil tool, a domain the index lacks or one q does not reach), into
// dst[:0]: the fusion reads the coverage of its candidates' domains
// only, and a map of every domain a request's words reach was up to
// every domain of the catalog (10,000 at 1M tools).
func (d *domainText) coverageOf(q string, tools []*index.Tool, dst []float64) []float64 {
	dst = slices.Grow(dst[:0], len(tools))[:len(tools)]
	clear(dst)
	if len(d.names) < 2 || d.avg == 0 {
		return dst
	}
	buf := d.scratch.take(newCoverageBuf)
	defer d.scratch.keep(buf)
	attainable := d.score(q, buf)
	if attainable != 0 && len(buf.hit) > 0 {
		for i, t := range tools {
			if t == nil {
				continue
			}
			if k, ok := slices.BinarySearch(d.names, t.Domain); ok && buf.seen[k] { // names in catalog order: sorted
				dst[i] = min(1, buf.score[k]/attainable)
			}
		}
	}
	buf.reset()
	return dst
}

// score adds up each domain's BM25 score of q's stems in buf (score,
// seen and hit: the domains scored) and returns the attainable score.
// Each domain's score is in a dense slice reused across requests, not a
// map per request (issue 48 item 3: a map of a few hundred domains was
// the largest garbage of a hybrid query after Bleve's).
func (d *domainText) score(q string, buf *coverageBuf) (attainable float64) {
	if len(buf.score) < len(d.names) {
		buf.score, buf.seen = make([]float64, len(d.names)), make([]bool, len(d.names))
	}
	if buf.qs == nil {
		buf.qs = map[string]bool{}
	}
	qs := stemsInto(q, buf.qs)
	// In one order, sorted: summed in the map's order, the same request
	// scored differently in its last bits from one search to the next
	// (and could swap two domains that tie).
	order := buf.order[:0]
	for s := range qs {
		order = append(order, s)
	}
	slices.Sort(order)
	buf.order = order
	score, seen, hit := buf.score, buf.seen, buf.hit[:0]
	for _, s := range order {
		idf := d.idf(s)
		attainable += idf
		for _, p := range d.postings(s) {
			f := float64(p.tf)
			norm := domainK1 * (1 - domainB + domainB*d.size[p.dom]/d.avg)
			if !seen[p.dom] {
				seen[p.dom] = true
				hit = append(hit, p.dom)
			}
			score[p.dom] += idf * f * (domainK1 + 1) / (f + norm)
		}
	}
	buf.hit = hit
	return attainable
}

// coverageBuf is coverage's scratch: a score and a mark per domain (all
// zero between uses), the domains marked and the request's stems.
type coverageBuf struct {
	score []float64
	seen  []bool
	hit   []int32
	qs    map[string]bool
	order []string // qs's stems, sorted
}

// reset zeroes what score marked, keeping the memory.
func (b *coverageBuf) reset() {
	for _, i := range b.hit {
		b.score[i], b.seen[i] = 0, false
	}
	b.hit = b.hit[:0]
	clear(b.qs)
	clear(b.order) // the strings are the request's
	b.order = b.order[:0]
}

func newCoverageBuf() *coverageBuf { return new(coverageBuf) }

// coverageMaps recycles the coverage maps of keyword mode's domain
// evidence (withDomainText), which never outlive its call: at 100k tools
// in 1,000 domains the map was about 8% of the bytes a keyword query
// allocated (BENCHMARKS.md, "Scale and concurrency").
var coverageMaps = sync.Pool{New: func() any { return map[string]float64{} }}

// domainExcess is what a domain's coverage of the request adds beyond
// best, the keyword list's best coverage by one tool: a request about
// what a server is for, in words none of its tools has, takes the
// domain's whole coverage; one that a tool's own words already match as
// well takes nothing, so that the domain text does not count the same
// words twice (on public-bfcl, 572 small domains whose text is their
// tools', counting the whole coverage lost nDCG@10 in keyword mode).
func domainExcess(cov, best float64) float64 { return max(0, cov-best) }

// domainTextOf returns the domain index of cat, building it on first use
// (one catalog at a time: a newer catalog replaces it).
func (e *Engine) domainTextOf(cat *index.Catalog) *domainText {
	if d := e.domText.Load(); d != nil && d.cat == cat {
		return d
	}
	e.domTextMu.Lock()
	defer e.domTextMu.Unlock()
	if d := e.domText.Load(); d != nil && d.cat == cat {
		return d
	}
	d := newDomainText(cat)
	e.domText.Store(d)
	return d
}

// prepareDomainText starts building cat's domain index in the
// background, so that the first search after a catalog swap finds it
// made (0.7 s at 100k tools in 1,000 domains, BenchmarkDomainText): a
// search that comes sooner waits for it (domainTextOf), so that what it
// ranks does not depend on timing.
func (e *Engine) prepareDomainText(cat *index.Catalog) {
	if e.params.DomainText > 0 && cat != nil && len(cat.Domains()) > 1 {
		go func() {
			e.domainTextOf(cat)
			// The build reads every tool's name and summary once and
			// leaves its garbage behind (about 65 MB at 100k tools):
			// handed back to the system now, or a server's resident
			// memory after its first searches depends on when the
			// collector happened to run during the build.
			debug.FreeOSMemory()
		}()
	}
}

// domainCoverage returns the coverage of the request by each domain
// (domainText.coverage) when the domain evidence is on and the request
// is not confined to one domain; else nil.
func (e *Engine) domainCoverage(pl plan) map[string]float64 {
	return e.domainCoverageInto(pl, nil)
}

// domainCoverageInto is domainCoverage written into dst (coverageInto).
func (e *Engine) domainCoverageInto(pl plan, dst map[string]float64) map[string]float64 {
	if pl.p.DomainText <= 0 || pl.req.Domain != "" || pl.cat == nil {
		return nil
	}
	return e.domainTextOf(pl.cat).coverageInto(pl.q, dst)
}

// domainCoverageOf is domainCoverage of the domains of tools, one value a
// tool, into dst (domainText.coverageOf); all 0 when domainCoverage is
// nil.
func (e *Engine) domainCoverageOf(pl plan, tools []*index.Tool, dst []float64) []float64 {
	if pl.p.DomainText <= 0 || pl.req.Domain != "" || pl.cat == nil {
		dst = slices.Grow(dst[:0], len(tools))[:len(tools)]
		clear(dst)
		return dst
	}
	return e.domainTextOf(pl.cat).coverageOf(pl.q, tools, dst)
}

// domainFill returns up to n tools, not in have, of the domains of cov,
// the best covered domain first (ties by name), each domain's tools in
// catalog order: the tools a keyword list lacks when the request is
// about what their server is for, not about any tool's words.
func domainFill(cat *index.Catalog, cov map[string]float64, have map[string]bool, exclude map[string]bool, group string, n int) []*index.Tool {
	if n <= 0 || len(cov) == 0 {
		return nil
	}
	doms := make([]string, 0, len(cov))
	for d := range cov {
		doms = append(doms, d)
	}
	slices.SortFunc(doms, func(a, b string) int {
		if c := cmp.Compare(cov[b], cov[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var out []*index.Tool
	for _, name := range doms {
		d := cat.Domain(name)
		if d == nil {
			continue
		}
		for _, t := range d.Tools {
			if have[t.QualifiedName] || exclude[t.QualifiedName] || group != "" && t.Group != group {
				continue
			}
			out = append(out, t)
			if len(out) == n {
				return out
			}
		}
	}
	return out
}
