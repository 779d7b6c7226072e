package search

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/text"
)

// domainText is a BM25 index of what each domain is for, one document a
// domain: its name's words, its description (an upstream's configured
// one, else the one derived from its title, instructions and tools:
// server/gateway) and its tools' names and summaries taken as a whole.
// A request about a server's purpose ("what is stored about Bob?" to a
// memory server described as "recall what is stored about people") finds
// the domain here when none of its tools' own texts has the words. It is
// built once per catalog (Engine.domainTextOf), in memory: a catalog has
// far fewer domains than tools.
type domainText struct {
	cat   *index.Catalog
	names []string
	tf    []map[string]int
	size  []float64
	avg   float64
	df    map[string]int
}

// BM25 constants of the domain documents, as plain BM25's.
const (
	domainK1 = 1.2
	domainB  = 0.75
)

// newDomainText indexes cat's domains.
func newDomainText(cat *index.Catalog) *domainText {
	doms := cat.Domains()
	d := &domainText{cat: cat, names: make([]string, len(doms)), tf: make([]map[string]int, len(doms)), size: make([]float64, len(doms)), df: map[string]int{}}
	var total float64
	for i, dom := range doms {
		var b strings.Builder
		b.WriteString(index.NameWords(dom.Name))
		b.WriteByte(' ')
		b.WriteString(dom.Description)
		for _, t := range dom.Tools {
			b.WriteByte(' ')
			b.WriteString(index.NameWords(t.Name))
			b.WriteByte(' ')
			b.WriteString(t.Summary)
		}
		tf := map[string]int{}
		n := 0
		for _, w := range text.SplitIdentifier(b.String()) {
			if text.Stopword(w) {
				continue
			}
			tf[text.Stem(w)]++
			n++
		}
		for s := range tf {
			d.df[s]++
		}
		d.names[i], d.tf[i], d.size[i] = dom.Name, tf, float64(n)
		total += float64(n)
	}
	if len(doms) > 0 {
		d.avg = total / float64(len(doms))
	}
	return d
}

// idf is BM25's inverse document frequency of a stem over the domains.
func (d *domainText) idf(stem string) float64 {
	n, df := float64(len(d.names)), float64(d.df[stem])
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
	if len(d.names) < 2 || d.avg == 0 {
		return nil
	}
	qs := stems(q)
	var attainable float64
	for s := range qs {
		attainable += d.idf(s)
	}
	if attainable == 0 {
		return nil
	}
	out := map[string]float64{}
	for i, tf := range d.tf {
		var score float64
		norm := domainK1 * (1 - domainB + domainB*d.size[i]/d.avg)
		for s := range qs {
			if f := float64(tf[s]); f > 0 {
				score += d.idf(s) * f * (domainK1 + 1) / (f + norm)
			}
		}
		if score > 0 {
			out[d.names[i]] = min(1, score/attainable)
		}
	}
	return out
}

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

// domainCoverage returns the coverage of the request by each domain
// (domainText.coverage) when the domain evidence is on and the request
// is not confined to one domain; else nil.
func (e *Engine) domainCoverage(pl plan) map[string]float64 {
	if pl.p.DomainText <= 0 || pl.req.Domain != "" || pl.cat == nil {
		return nil
	}
	return e.domainTextOf(pl.cat).coverage(pl.q)
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
