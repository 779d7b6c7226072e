package search

import (
	"slices"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/indextest"
	"github.com/toolscout/toolscout/internal/racetest"
	"github.com/toolscout/toolscout/internal/text"
)

// newDomainTextSplit is newDomainText as it was before it looked words
// up as bytes: each name and summary split into a slice of strings
// (text.SplitIdentifier). The yardstick of TestDomainTextBuiltAsBefore.
func newDomainTextSplit(cat *index.Catalog) *domainText {
	doms := cat.Domains()
	d := &domainText{cat: cat, names: make([]string, len(doms)), size: make([]float64, len(doms)), stems: map[string]int32{}}
	stemOf := map[string]int32{}
	var (
		tf      []int32
		touched []int32
		hits    []stemHit
		total   float64
	)
	add := func(s string) {
		for _, w := range text.SplitIdentifier(s) {
			id, ok := stemOf[w]
			if !ok {
				id = -1
				if !text.Stopword(w) {
					if st := text.Stem(w); st != "" {
						if id, ok = d.stems[st]; !ok {
							id = int32(len(d.stems))
							d.stems[st] = id
							tf = append(tf, 0)
						}
					}
				}
				stemOf[w] = id
			}
			if id >= 0 {
				if tf[id] == 0 {
					touched = append(touched, id)
				}
				tf[id]++
			}
		}
	}
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

// mixedCatalog has names and texts in every form the splitting handles:
// camelCase, acronyms, digits, separators, upper case, stop words and
// words outside ASCII, alone and beside ASCII ones.
const mixedCatalog = `{"domains":[
 {"name":"github","description":"GitHub repositories, Issues and Pull Requests (the API v3)","tools":[
  {"name":"getUserByID","description":"Get the USER named by an ID.","inputSchema":{"type":"object"}},
  {"name":"HTMLParser","description":"Parse HTML5 pages into EC2Instances and S3 buckets; oauth2 2fa.","inputSchema":{"type":"object"}},
  {"name":"s3_put-object.v2","description":"PUT an object --- to a bucket/key, at the ... end","inputSchema":{"type":"object"}}]},
 {"name":"cafe","description":"Ünïcödé naïveCafé: Crème brûlée, 東京 and ΑΘΗΝΑ","tools":[
  {"name":"order_café","description":"Order a café au lait in Zürich, or a plain Coffee","inputSchema":{"type":"object"}},
  {"name":"list_menus","description":"List the menus of the CAFÉ: all of them, with their prices","inputSchema":{"type":"object"}}]},
 {"name":"empty-ish","description":"","tools":[
  {"name":"a","description":"the of and","inputSchema":{"type":"object"}}]}]}`

// TestDomainTextBuiltAsBefore: the domain text built from words looked up
// as bytes is the one built from split strings, bit for bit (stems and
// their numbers, postings, sizes, average), on real catalogs, a
// synthetic one and one of every form of word.
func TestDomainTextBuiltAsBefore(t *testing.T) {
	racetest.Plain(t)
	builtin, err := index.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	synthetic, err := synth20k()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		cat  *index.Catalog
	}{
		{"builtin", builtin},
		{"reference servers", indextest.MustCatalog(t, referenceServers)},
		{"mixed forms", indextest.MustCatalog(t, mixedCatalog)},
		{"synthetic 20k", synthetic},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, want := newDomainText(c.cat), newDomainTextSplit(c.cat)
			if len(want.stems) == 0 || len(want.post) == 0 {
				t.Fatalf("the catalog gives no stems: nothing compared")
			}
			if !slices.Equal(got.names, want.names) {
				t.Errorf("names = %q, want %q", got.names, want.names)
			}
			if !slices.Equal(got.size, want.size) || got.avg != want.avg {
				t.Errorf("sizes = %v (avg %v), want %v (avg %v)", got.size, got.avg, want.size, want.avg)
			}
			if len(got.stems) != len(want.stems) {
				t.Errorf("%d stems, want %d", len(got.stems), len(want.stems))
			}
			for st, id := range want.stems {
				if g, ok := got.stems[st]; !ok || g != id {
					t.Errorf("stem %q numbered %d (present %v), want %d", st, g, ok, id)
				}
			}
			if !slices.Equal(got.off, want.off) || !slices.Equal(got.post, want.post) {
				t.Errorf("postings differ: %d offsets and %d postings, want %d and %d", len(got.off), len(got.post), len(want.off), len(want.post))
			}
		})
	}
}
