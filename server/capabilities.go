package server

import (
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/toolscout/toolscout/index"
	txt "github.com/toolscout/toolscout/internal/text"
	"github.com/toolscout/toolscout/search"
)

// What each domain can do, in a few words the instructions put after its
// name ("github (repository, issue)"): the words of a domain's tool names
// and descriptions that most of its tools use and the other domains named
// do not, the rarer in general software text the better. A domain's name says where tools come from;
// these words say what a client will find there, before its first
// search. Only the domains the instructions name are read (the largest,
// maxNamedDomains): a first version that weighed each word by how few
// of all the domains use it read every tool of the catalog at a
// client's first initialize, 0.7 s at 100k tools.

// capabilityWordsPerDomain is how many words the instructions give a
// domain.
const capabilityWordsPerDomain = 2

// capabilityCache keeps the words of the last catalogs asked about
// (the whole catalog, and each caller's view of it): each client's
// initialize asks again, and catalogs change rarely. Cleared whole when
// it holds maxCapabilityCatalogs.
var capabilityCache struct {
	sync.Mutex
	words map[*index.Catalog]map[string][]string
}

const maxCapabilityCatalogs = 32

// capabilityWords returns, for the domains of cat the instructions name
// (its maxNamedDomains largest), up to capabilityWordsPerDomain words
// saying what their tools do.
func capabilityWords(cat *index.Catalog) map[string][]string {
	capabilityCache.Lock()
	defer capabilityCache.Unlock()
	if w, ok := capabilityCache.words[cat]; ok {
		return w
	}
	if capabilityCache.words == nil || len(capabilityCache.words) >= maxCapabilityCatalogs {
		capabilityCache.words = map[*index.Catalog]map[string][]string{}
	}
	var named []capabilityDomain
	for _, d := range domainSizes(cat, nil) {
		if len(named) == maxNamedDomains {
			break
		}
		if dom := cat.Domain(d.Name); dom != nil {
			named = append(named, capabilityOf(dom))
		}
	}
	w := learnCapabilityWords(named, capabilityWordsPerDomain)
	capabilityCache.words[cat] = w
	return w
}

// learnCapabilityWords scores each word w of a domain d by the share of
// d's tools that use it (in their name or description), times its rarity
// among the domains given, log((D + 1)/D_w) (TF-IDF over them: the verbs
// every domain has, "list", "create", count little), times its rarity in
// general software text, log(1/p(w)), p(w) its frequency in the built-in
// word vectors' corpus (search.WordFrequency; a word not there counts as
// rarer than any), and keeps the n best: a word most of a domain's tools
// share, other domains lack and everyday software text rarely uses says
// what the domain is for. A word counts when at
// least two of the domain's tools use it (a domain of one tool gets none:
// its words would be that tool's description, "calc (two, numbers)");
// the words the domain's name holds are left out ("git" and "hub" of
// github: the instructions say the name already). Ties go
// alphabetically; each word shows in its shortest form seen.
func learnCapabilityWords(domains []capabilityDomain, n int) map[string][]string {
	type domainWords struct {
		df    map[string]int
		tools int
	}
	per := make([]domainWords, len(domains))
	form := map[string]string{}
	spread := map[string]int{} // domains using each stem
	for i, d := range domains {
		per[i] = domainWords{df: map[string]int{}}
		name := strings.ToLower(d.name)
		for _, tool := range d.tools {
			per[i].tools++
			seen := map[string]bool{}
			for _, w := range txt.SplitIdentifier(tool) {
				w = strings.ToLower(w)
				if len(w) < 3 || txt.Stopword(w) || !unicode.IsLetter([]rune(w)[0]) {
					continue
				}
				st := txt.Stem(w)
				if seen[st] || strings.Contains(name, w) || strings.Contains(name, st) {
					continue
				}
				seen[st] = true
				per[i].df[st]++
				if f, ok := form[st]; !ok || len(w) < len(f) || (len(w) == len(f) && w < f) {
					form[st] = w
				}
			}
		}
		for st := range per[i].df {
			spread[st]++
		}
	}
	out := make(map[string][]string, len(domains))
	for i, d := range domains {
		dw := per[i]
		if dw.tools == 0 {
			continue
		}
		score := map[string]float64{}
		var cands []string
		for st, c := range dw.df {
			if c < 2 {
				continue
			}
			p, ok := search.WordFrequency(st)
			if !ok || p <= 0 {
				p = 1e-7 // rarer than any word of the corpus
			}
			cands = append(cands, st)
			score[st] = float64(c) / float64(dw.tools) * math.Log(float64(len(domains)+1)/float64(spread[st])) * math.Log(1/p)
		}
		best := txt.TopWords(cands, score, n)
		if len(best) == 0 {
			continue
		}
		shown := make([]string, 0, len(best))
		for _, st := range best {
			if f := form[st]; !slices.Contains(shown, f) {
				shown = append(shown, f)
			}
		}
		out[d.name] = shown
	}
	return out
}

// capabilityDomain is what learnCapabilityWords reads of a domain: its
// name and, for each enabled tool, its name and description.
type capabilityDomain struct {
	name  string
	tools []string
}

// capabilityOf returns what learnCapabilityWords reads of dom.
func capabilityOf(dom *index.Domain) capabilityDomain {
	c := capabilityDomain{name: dom.Name}
	for _, t := range dom.Tools {
		if !t.Disabled {
			c.tools = append(c.tools, t.Name+" "+t.Description)
		}
	}
	return c
}

// KnownDomains returns the domains named, in their order, as the
// instructions will show them once the index has loaded: each with its
// number of enabled tools and the words that say what they do
// (capabilityWords), from what the command knows at start: cat, the
// catalog cached in the data dir (nil without one), and specs, the
// catalog files and the upstream servers' tools as they listed them last
// (a domain not known yet has no tools and no words). Options.Domains
// takes them, so that a client initializing while the index loads gets
// the instructions of the clients after it.
func KnownDomains(names []string, cat *index.Catalog, specs ...[]index.DomainSpec) []DomainSize {
	enabled := func(t index.ToolSpec) bool { return t.Enabled == nil || *t.Enabled }
	// Counted first, so that only the named domains' tools are read (the
	// largest maxNamedDomains, ties by name: domainSizes' order), as
	// capabilityWords reads them.
	count := map[string]int{}
	var largest []string
	note := func(name string, n int) {
		if _, ok := count[name]; !ok {
			largest = append(largest, name)
		}
		count[name] += n
	}
	if cat != nil {
		for _, dom := range cat.Domains() {
			n := 0
			for _, t := range dom.Tools {
				if !t.Disabled {
					n++
				}
			}
			note(dom.Name, n)
		}
	}
	for _, ss := range specs {
		for _, ds := range ss {
			n := 0
			for _, t := range ds.Tools {
				if enabled(t) {
					n++
				}
			}
			note(ds.Name, n)
		}
	}
	slices.SortStableFunc(largest, func(a, b string) int {
		if count[a] != count[b] {
			return count[b] - count[a]
		}
		return strings.Compare(a, b)
	})
	largest = largest[:min(len(largest), maxNamedDomains)]
	named := make([]capabilityDomain, len(largest))
	at := make(map[string]int, len(largest))
	for i, n := range largest {
		named[i].name, at[n] = n, i
	}
	if cat != nil {
		for i, n := range largest {
			if dom := cat.Domain(n); dom != nil {
				named[i].tools = append(named[i].tools, capabilityOf(dom).tools...)
			}
		}
	}
	for _, ss := range specs {
		for _, ds := range ss {
			i, ok := at[ds.Name]
			if !ok {
				continue
			}
			for _, t := range ds.Tools {
				if enabled(t) {
					named[i].tools = append(named[i].tools, t.Name+" "+t.Description)
				}
			}
		}
	}
	words := learnCapabilityWords(named, capabilityWordsPerDomain)
	out := make([]DomainSize, len(names))
	for i, d := range names {
		out[i] = DomainSize{Name: d, Tools: count[d], Words: words[d]}
	}
	return out
}
