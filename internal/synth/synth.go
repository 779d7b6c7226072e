// Package synth generates seeded synthetic tool catalogs of any size for
// benchmarks: realistic names, descriptions and schemas, the same for the
// same seed.
package synth

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"

	"github.com/toolscout/toolscout/index"
)

var (
	verbs = strings.Fields("create list get update delete search find send read write move copy archive restore assign close open export import sync schedule cancel approve merge deploy restart scale tag label share")
	nouns = strings.Fields("issue ticket message channel file folder document page database table row record invoice payment customer subscription refund event meeting calendar contact deal lead pipeline build job pod deployment service bucket object image container volume secret user team project release alert incident schedule comment review branch commit report dashboard metric log trace note task")
	adjs  = strings.Fields("open closed recent archived shared private public draft pending failed active stale large new old upcoming assigned")
	words = strings.Fields("repository workspace account organization region cluster namespace environment production staging owner status priority label filter range date time zone limit cursor page size query text body title summary description amount currency email name identifier version format")
)

// Catalog returns a catalog of n tools spread over about n/40 domains.
func Catalog(n int, seed int64) (*index.Catalog, error) {
	return index.NewCatalog(Specs(n, 40, seed))
}

// Specs returns the domains of a catalog of n tools, perDomain tools to a
// domain (the last domains may hold one more).
func Specs(n, perDomain int, seed int64) []index.DomainSpec {
	r := rand.New(rand.NewSource(seed))
	nd := max(1, n/perDomain)
	specs := make([]index.DomainSpec, nd)
	for d := range specs {
		specs[d] = index.DomainSpec{
			Name:        fmt.Sprintf("svc%03d", d),
			Description: fmt.Sprintf("Service %d: %s and %s management", d, pick(r, nouns), pick(r, nouns)),
		}
	}
	for i := 0; i < n; i++ {
		d := &specs[i%nd]
		verb, noun := pick(r, verbs), pick(r, nouns)
		name := fmt.Sprintf("%s_%s_%d", verb, noun, i)
		desc := fmt.Sprintf("%s %s %s in the %s. Use it to %s %s by %s and %s.",
			strings.ToUpper(verb[:1])+verb[1:], pick(r, adjs), noun+"s", pick(r, words),
			pick(r, verbs), pick(r, nouns), pick(r, words), pick(r, words))
		props := map[string]any{}
		var required []string
		for p := 0; p < 1+r.Intn(5); p++ {
			pn := pick(r, words) + "_" + pick(r, words)
			props[pn] = map[string]any{"type": "string", "description": "The " + strings.ReplaceAll(pn, "_", " ")}
			if p == 0 {
				required = append(required, pn)
			}
		}
		schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required})
		d.Tools = append(d.Tools, index.ToolSpec{
			Name: name, Description: desc, InputSchema: schema, Group: noun,
		})
	}
	return specs
}

// Queries returns n seeded queries in the catalog's vocabulary.
func Queries(n int, seed int64) []string {
	r := rand.New(rand.NewSource(seed))
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s the %s %s for my %s", pick(r, verbs), pick(r, adjs), pick(r, nouns), pick(r, words))
	}
	return out
}

func pick(r *rand.Rand, xs []string) string { return xs[r.Intn(len(xs))] }

// LabelledQuery is a synthetic query and the tool it was written from.
type LabelledQuery struct {
	Query string
	Tool  *index.Tool
}

// LabelledQueries returns n seeded queries, each built from one tool's
// description with some of its words replaced by others of the vocabulary,
// so that keyword and semantic ranking both have work to do.
func LabelledQueries(cat *index.Catalog, n int, seed int64) []LabelledQuery {
	r := rand.New(rand.NewSource(seed))
	tools := cat.Tools()
	out := make([]LabelledQuery, n)
	for i := range out {
		t := tools[r.Intn(len(tools))]
		ws := strings.Fields(strings.ToLower(strings.Trim(t.Description, ".")))
		var q []string
		for _, w := range ws {
			switch x := r.Float64(); {
			case x < 0.35:
				continue // dropped
			case x < 0.5:
				q = append(q, pick(r, words)) // noise
			default:
				q = append(q, strings.Trim(w, ".,"))
			}
			if len(q) == 8 {
				break
			}
		}
		out[i] = LabelledQuery{Query: strings.Join(q, " "), Tool: t}
	}
	return out
}

// CatalogJSON returns cat as a catalog file (catalog.json): domains with
// their tools' names, descriptions, groups and input schemas.
func CatalogJSON(cat *index.Catalog) ([]byte, error) {
	type tool struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Group       string          `json:"group,omitempty"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	type domain struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Tools       []tool `json:"tools"`
	}
	var doms []domain
	for _, d := range cat.Domains() {
		dd := domain{Name: d.Name, Description: d.Description}
		for _, t := range d.Tools {
			dd.Tools = append(dd.Tools, tool{t.Name, t.Description, t.Group, t.InputSchema()})
		}
		doms = append(doms, dd)
	}
	return json.Marshal(map[string]any{"domains": doms})
}
