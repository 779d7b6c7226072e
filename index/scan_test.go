package index

import (
	"bytes"
	"encoding/json"
	"github.com/toolscout/toolscout/internal/racetest"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// readFrom reads doc the way a re-index does (SpecsFromLast, taking
// prev's tools read from the same bytes).
func readFrom(doc string, prev *Catalog) ([]DomainSpec, *Last, error) {
	src := &CatalogSource{names: []string{"test"}, data: [][]byte{[]byte(doc)}}
	return src.SpecsFromLast(func() *Last { return NewLast(prev) })
}

// buildFrom reads doc the way a re-index does and builds it (rebuild),
// leaving prev as it was.
func buildFrom(doc string, prev *Catalog) (*Catalog, error) {
	specs, last, err := readFrom(doc, prev)
	if err != nil {
		return nil, err
	}
	return rebuild(specs, last)
}

// rebuild is NewCatalogFromLast, reuse table and all, but copying the
// previous build's lookups instead of taking them over (as a server's
// refresh keeps the catalog it serves), so that a test may use that
// build again.
func rebuild(specs []DomainSpec, last *Last) (*Catalog, error) {
	return newCatalogFrom(specs, last.c, last.read, false)
}

// buildWhole reads doc with one json.Unmarshal (ParseCatalog) and builds
// it from scratch.
func buildWhole(doc string) (*Catalog, error) {
	specs, err := ParseCatalog("test", []byte(doc))
	if err != nil {
		return nil, err
	}
	return NewCatalog(specs)
}

// sameBuild says whether two builds of a document agree: the same error,
// or catalogs equal in every field but the raw digests (which a build
// through ParseCatalog does not have).
func sameBuild(a *Catalog, aErr error, b *Catalog, bErr error) bool {
	if aErr != nil || bErr != nil {
		return aErr != nil && bErr != nil && aErr.Error() == bErr.Error()
	}
	strip := func(c *Catalog) []Tool {
		var out []Tool
		for _, t := range c.Tools() {
			x := *t
			asBuilt(&x)
			x.edit().raw = ""
			out = append(out, x)
		}
		return out
	}
	domains := func(c *Catalog) []Domain {
		var out []Domain
		for _, d := range c.Domains() {
			x := *d
			x.Tools = nil
			for _, t := range d.Tools {
				x.Tools = append(x.Tools, &Tool{QualifiedName: t.QualifiedName})
			}
			out = append(out, x)
		}
		return out
	}
	return a.Hash() == b.Hash() && reflect.DeepEqual(strip(a), strip(b)) && reflect.DeepEqual(domains(a), domains(b))
}

func indented(t *testing.T, doc string) string {
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(doc), "", "\t"); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestScanCatalogReadsAsEncodingJSON: documents the scanner takes are
// read into the same specs, and built into the same catalog, as by one
// json.Unmarshal.
func TestScanCatalogReadsAsEncodingJSON(t *testing.T) {
	docs := map[string]string{
		"rich":     richCatalog,
		"indented": indented(t, richCatalog),
		"escapes and brackets in strings": `{"domains":[{"name":"a\u0062c","description":"Say \"hi\" {[\\","tools":[
			{"name":"t1","description":"Quote \" brace } bracket ] slash \\ tab\t.","inputSchema":{"type":"object","properties":{"q":{"type":"string","description":"]}\"{["}}}}]}]}`,
		"unknown domain key": `{"domains":[{"version":{"x":[1,{"y":"}"}],"z":null},"name":"a","tools":[{"name":"t","inputSchema":{"type":"object"}}],"extra":true}]}`,
		"no tools key":       `{"domains":[{"name":"a","description":"Nothing yet."}]}`,
		"empty tools":        `{"domains":[{"name":"a","tools":[]}]}`,
		"no domains":         `{"domains":[]}`,
		"null name":          `{"domains":[{"name":null,"tools":[]}]}`,
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			if _, ok := scanCatalog([]byte(doc)); !ok {
				t.Fatal("the scanner gave up on the document: the test would only check the fallback")
			}
			got, last, gerr := readFrom(doc, nil)
			want, werr := ParseCatalog("test", []byte(doc))
			if (gerr != nil) != (werr != nil) {
				t.Fatalf("error %v, ParseCatalog's %v", gerr, werr)
			}
			for _, ds := range got {
				for _, ts := range ds.Tools {
					if raw, ok := last.read.rawOf(ds, ts); !ok || raw == "" {
						t.Fatalf("%s/%s has no raw digest in the reuse table", ds.Name, ts.Name)
					}
				}
			}
			if (len(got) > 0 || len(want) > 0) && !reflect.DeepEqual(got, want) {
				t.Fatalf("specs differ:\n got %+v\nwant %+v", got, want)
			}
			a, aerr := buildFrom(doc, nil)
			b, berr := buildWhole(doc)
			if !sameBuild(a, aerr, b, berr) {
				t.Fatalf("catalogs differ: %v / %v", aerr, berr)
			}
		})
	}
}

// TestScanCatalogDefers: documents whose structure the scanner cannot
// read exactly as encoding/json does go to ParseCatalog, with the same
// result, error or catalog.
func TestScanCatalogDefers(t *testing.T) {
	tool := `{"name":"t","inputSchema":{"type":"object"}}`
	docs := map[string]string{
		"key in another case":        `{"Domains":[{"name":"a","tools":[` + tool + `]}]}`,
		"domain key in another case": `{"domains":[{"name":"a","NAME":"b","tools":[` + tool + `]}]}`,
		"repeated domains":           `{"domains":[],"domains":[{"name":"a","tools":[` + tool + `]}]}`,
		"repeated name":              `{"domains":[{"name":"a","name":"b","tools":[` + tool + `]}]}`,
		"escaped key":                `{"domains":[{"na\u006de":"a","tools":[` + tool + `]}]}`,
		"other top-level key":        `{"version":2,"domains":[{"name":"a","tools":[` + tool + `]}]}`,
		"null domains":               `{"domains":null}`,
		"null tools":                 `{"domains":[{"name":"a","tools":null}]}`,
		"a tool that is a string":    `{"domains":[{"name":"a","tools":["t"]}]}`,
		"a name that is a number":    `{"domains":[{"name":7,"tools":[` + tool + `]}]}`,
		"a tool's bad field":         `{"domains":[{"name":"a","tools":[{"name":5,"inputSchema":{"type":"object"}}]}]}`,
		"trailing text":              `{"domains":[{"name":"a","tools":[` + tool + `]}]} x`,
		"trailing comma":             `{"domains":[{"name":"a","tools":[` + tool + `,]}]}`,
		"truncated":                  `{"domains":[{"name":"a","tools":[` + tool,
		"bad unknown value":          `{"domains":[{"name":"a","v":tru,"tools":[` + tool + `]}]}`,
		"not an object":              `[1,2]`,
		"empty":                      ``,
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			a, aerr := buildFrom(doc, nil)
			b, berr := buildWhole(doc)
			if !sameBuild(a, aerr, b, berr) {
				t.Fatalf("parseCatalogFrom: %v; ParseCatalog: %v", aerr, berr)
			}
		})
	}
}

// TestParseCatalogFromReusesUnchangedTools: after an edit of one tool,
// the others come from the previous build without being decoded (their
// schemas are the previous build's, not new copies), and the catalog is
// the one a build from scratch makes.
func TestParseCatalogFromReusesUnchangedTools(t *testing.T) {
	prev, err := buildFrom(richCatalog, nil)
	if err != nil {
		t.Fatal(err)
	}
	// One tool edited in place, two others swapped and one inserted
	// before the next domain's: all but the edited and the new tool are
	// taken over.
	edited := strings.Replace(richCatalog, "Send an email.", "Send one email.", 1)
	swapA := `{"name":"send_mail","title":"Only a title","inputSchema":{"type":"object"},"tags":[]}`
	swapB := `{"name":"list-drafts","description":"List drafts.","group":"mail","inputSchema":{"type":"object","properties":{}},"enabled":false,"deprecated":"use send_mail"}`
	if !strings.Contains(edited, swapA) || !strings.Contains(edited, swapB) {
		t.Fatal("test document: the tools to swap are not there")
	}
	edited = strings.Replace(strings.Replace(strings.Replace(edited, swapA, "SWAP", 1), swapB, swapA, 1), "SWAP", swapB, 1)
	edited = strings.Replace(edited, `{"name":"VeryLong`, `{"name":"inserted","inputSchema":{"type":"object"}},{"name":"VeryLong`, 1)
	specs, last, err := readFrom(edited, prev)
	if err != nil {
		t.Fatal(err)
	}
	taken := 0
	for _, ds := range specs {
		for _, ts := range ds.Tools {
			if old := prev.ToolByKey(ds.Name + "/" + ts.Name); old != nil && &old.InputSchema()[0] == &ts.InputSchema[0] {
				taken++
			}
		}
	}
	if taken != prev.Len()-1 {
		t.Errorf("%d of %d tools taken from the previous build, want all but the edited one", taken, prev.Len())
	}
	got, gerr := rebuild(specs, last)
	want, werr := buildWhole(edited)
	if !sameBuild(got, gerr, want, werr) {
		t.Fatalf("the re-read catalog differs from a build from scratch: %v / %v", gerr, werr)
	}
}

// TestParseCatalogFromMutations: random edits of a catalog document,
// read against the build of the original (so that unchanged tools are
// taken from it), give what a build from scratch of the edited document
// gives: the same error or the same catalog.
func TestParseCatalogFromMutations(t *testing.T) {
	racetest.Plain(t)
	base := indented(t, richCatalog)
	prev, err := buildFrom(base, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(12))
	const alphabet = "{}[]\",:\\ ae0\n"
	fast := 0
	for i := 0; i < 3000; i++ {
		doc := []byte(base)
		for k := 0; k <= r.Intn(2); k++ {
			at := r.Intn(len(doc))
			switch r.Intn(3) {
			case 0:
				doc = append(doc[:at:at], doc[at+1:]...)
			case 1:
				doc = append(doc[:at:at], append([]byte{alphabet[r.Intn(len(alphabet))]}, doc[at:]...)...)
			default:
				doc[at] = alphabet[r.Intn(len(alphabet))]
			}
		}
		if _, ok := scanCatalog(doc); ok {
			fast++
		}
		a, aerr := buildFrom(string(doc), prev)
		b, berr := buildWhole(string(doc))
		if !sameBuild(a, aerr, b, berr) {
			t.Fatalf("edit %d:\n%s\nre-read: %v\nfrom scratch: %v", i, doc, aerr, berr)
		}
	}
	if fast < 300 {
		t.Fatalf("the scanner read only %d of 3000 edited documents: the test hardly checks it", fast)
	}
}

// TestLastCatalogFeedsAReindex: the previous build read back from the
// data dir (with only the lookups a re-index uses) gives a re-read of an
// edited file its unchanged tools, and the catalog of a build from
// scratch.
func TestLastCatalogFeedsAReindex(t *testing.T) {
	s := &memCache{}
	if s.LastCatalog() != nil {
		t.Fatal("an empty data dir has a previous build")
	}
	first, err := buildFrom(richCatalog, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveCatalog(strings.Repeat("ab", 32), first); err != nil {
		t.Fatal(err)
	}
	last := s.LastCatalog()
	if last == nil || last.Len() != first.Len() {
		t.Fatalf("LastCatalog: %v", last)
	}
	src := &CatalogSource{names: []string{"test"}, data: [][]byte{[]byte(strings.Replace(richCatalog, "List drafts.", "List the drafts.", 1))}}
	specs, l, err := src.SpecsFromLast(func() *Last { return NewLast(last) })
	if err != nil {
		t.Fatal(err)
	}
	got, gerr := rebuild(specs, l)
	want, werr := buildWhole(string(src.data[0]))
	if !sameBuild(got, gerr, want, werr) {
		t.Fatalf("re-index from the saved build differs from a build from scratch: %v / %v", gerr, werr)
	}
	reused := 0
	for _, tl := range got.Tools() {
		if old := last.ToolByKey(tl.Domain + "/" + tl.Name); old != nil && &old.InputSchema()[0] == &tl.InputSchema()[0] {
			reused++
		}
	}
	if reused != first.Len()-1 {
		t.Errorf("%d of %d tools reused from the saved build, want all but the edited one", reused, first.Len())
	}
}

// TestSpecsFromLast: reading the previous build beside the scan takes
// its unchanged tools' specs, decodes the others into the reuse table,
// builds what a build from scratch builds, and hands that build back.
func TestSpecsFromLast(t *testing.T) {
	first, err := buildFrom(richCatalog, nil)
	if err != nil {
		t.Fatal(err)
	}
	src := &CatalogSource{names: []string{"test"}, data: [][]byte{[]byte(strings.Replace(richCatalog, "List drafts.", "List the drafts.", 1))}}
	for name, prev := range map[string]*Catalog{"no previous build": nil, "a previous build": first} {
		got, last, err := src.SpecsFromLast(func() *Last { return NewLast(prev) })
		if err != nil || last.Catalog() != prev {
			t.Fatalf("%s: SpecsFromLast = %v, %p; want the build %p", name, err, last, prev)
		}
		// The tools taken from the previous build are its tools' specs
		// (sharing their bytes); the others are decoded, and in the
		// reuse table with the digest of their bytes.
		reused, decoded := 0, 0
		for _, d := range got {
			for _, ts := range d.Tools {
				var old *Tool
				if prev != nil {
					old = prev.ToolByKey(d.Name + "/" + ts.Name)
				}
				_, read := last.read.rawOf(d, ts)
				switch {
				case old != nil && &old.InputSchema()[0] == &ts.InputSchema[0] && !read:
					reused++
				case read:
					decoded++
				}
			}
		}
		want := map[string][2]int{"no previous build": {0, first.Len()}, "a previous build": {first.Len() - 1, 1}}[name]
		if reused != want[0] || decoded != want[1] || len(last.read) != want[1] {
			t.Errorf("%s: %d tools taken from the previous build, %d decoded (%d in the reuse table); want %d and %d", name, reused, decoded, len(last.read), want[0], want[1])
		}
		c, gerr := rebuild(got, last)
		w, werr := buildWhole(string(src.data[0]))
		if !sameBuild(c, gerr, w, werr) {
			t.Errorf("%s: the build differs from a build from scratch: %v / %v", name, gerr, werr)
		}
	}
	bad := &CatalogSource{names: []string{"bad"}, data: [][]byte{[]byte(`{"domains":[`)}}
	if _, last, err := bad.SpecsFromLast(func() *Last { return NewLast(first) }); err == nil || last.Catalog() != first {
		t.Errorf("a damaged file: SpecsFromLast = %v, %p; want its error and the previous build", err, last)
	}
}

func TestToolNameIs(t *testing.T) {
	for _, c := range []struct {
		tool, name string
		want       bool
	}{
		{`{"name":"list","inputSchema":{}}`, "list", true},
		{`{ "description": "x", "name" : "list" }`, "list", true},
		{`{"inputSchema":{"name":"inner"},"name":"outer"}`, "outer", true},
		{`{"inputSchema":{"name":"inner"},"name":"outer"}`, "inner", false},
		{`{"name":"li\u0073t"}`, "list", false}, // escaped: unsure
		{`{"name":"list"}`, "lis", false},
		{`{"description":"no name"}`, "list", false},
		{`{"name":null}`, "null", false},
		{`[]`, "list", false},
	} {
		if got := toolNameIs([]byte(c.tool), c.name); got != c.want {
			t.Errorf("toolNameIs(%s, %q) = %v, want %v", c.tool, c.name, got, c.want)
		}
	}
}
