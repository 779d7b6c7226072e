package index

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/racetest"
	"hash/crc32"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// richCatalog uses every field a cached catalog must keep: groups, tags
// (nil and empty), output schemas, annotations, poisoning warnings,
// parameters, a title-only summary, a sanitised and a clashing qualified
// name (testdata/rich.json, which index/store's tests read too).
var richCatalog = func() string {
	data, err := os.ReadFile("testdata/rich.json")
	if err != nil {
		panic(err)
	}
	return string(data)
}()

func TestCatalogCacheRoundTrip(t *testing.T) {
	builtin, err := BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for name, cat := range map[string]*Catalog{"rich": mustCatalog(t, richCatalog), "builtin": builtin, "empty": mustCatalog(t, `{"domains":[]}`)} {
		t.Run(name, func(t *testing.T) {
			got, err := decodeCatalog(cacheFile(t, cat))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(withoutBase(got), withoutBase(cat)) {
				for i, tl := range cat.Tools() {
					if i < got.Len() && !reflect.DeepEqual(got.Tools()[i], tl) {
						t.Fatalf("tool %d differs:\n got %+v\nwant %+v", i, got.Tools()[i], tl)
					}
				}
				t.Fatalf("decoded catalog differs from the one encoded")
			}
			if name == "rich" {
				// The lookups work on the decoded catalog, not just its fields.
				if tl, err := got.Resolve("alpha/send_mail"); err != nil || tl.Description != "Same bare name in another domain." {
					t.Errorf("Resolve(alpha/send_mail) = %v, %v", tl, err)
				}
				if len(got.ToolsNamed("send mail")) != 3 {
					t.Errorf("ToolsNamed(send mail) = %d tools, want 3", len(got.ToolsNamed("send mail")))
				}
				if got.Domain("zeta").Words() == nil || len(got.Tool(cat.Tools()[0].QualifiedName).Warnings()) == 0 {
					t.Error("domain words or warnings lost")
				}
			}
		})
	}
}

// cacheFile returns cat as catalog.bin holds it (under a zero key).
func cacheFile(t *testing.T, cat *Catalog) []byte {
	t.Helper()
	s := &memCache{}
	if err := s.SaveCatalog(strings.Repeat("00", 32), cat); err != nil {
		t.Fatal(err)
	}
	return s.base
}

// A change to how NewCatalog derives a tool must come with a new
// CatalogCacheVersion, or starts would keep serving catalogs built by the
// old rules. This digest of the rich catalog's encoding moves with any
// such change.
func TestCatalogCacheVersion(t *testing.T) {
	const version, digest = 7, "8a85c9642083ea96f748f12e26e4b0a07c9827cdc7c08037f841ddfe50c8a351"
	h := sha256.New()
	for _, part := range encodeCatalog(mustCatalog(t, richCatalog)) {
		h.Write(part)
	}
	got := hex.EncodeToString(h.Sum(nil))
	if got != digest || CatalogCacheVersion != version {
		t.Fatalf("the catalog cache's encoding of the test catalog is %s (recorded: %s, for version %d; CatalogCacheVersion is %d).\n"+
			"If NewCatalog or the cache format changed, bump CatalogCacheVersion, then record the new version and digest here.",
			got, digest, version, CatalogCacheVersion)
	}
}

func TestCatalogSourceKey(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.json", richCatalog)
	b := writeFile(t, dir, "b.json", strings.Replace(richCatalog, "Send an email.", "Send an e-mail.", 1))
	key := func(paths ...string) string {
		src, err := ReadCatalogSource(paths)
		if err != nil {
			t.Fatal(err)
		}
		return src.Key()
	}
	if key(a) != key(a) {
		t.Error("the same file gives two keys")
	}
	if key(a) == key(b) {
		t.Error("files that differ by one word share a key")
	}
	if key(a, b) == key(b, a) {
		t.Error("the order of the files does not change the key")
	}
	if _, err := ReadCatalogSource([]string{filepath.Join(dir, "missing.json")}); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing file: err = %v, want one naming it", err)
	}
}

// NewCatalogFrom builds exactly what NewCatalog builds, reusing the tools
// whose source did not change and building the others.
func TestNewCatalogFromReusesUnchangedTools(t *testing.T) {
	clashing := strings.TrimPrefix(QualifiedName("zeta", "send.mail"), "zeta__") // named like send.mail's qualified name
	withClash := strings.Replace(richCatalog, `{"name":"list-drafts"`, `{"name":"`+clashing+`","description":"Clashes.","inputSchema":{"type":"object"}},{"name":"list-drafts"`, 1)
	prev := mustCatalog(t, withClash)
	if prev.Tool(QualifiedName("zeta", "send.mail")) == nil || prev.Len() != 6 {
		t.Fatal("test catalog: no clash to resolve")
	}
	edits := map[string]string{
		"same":                   withClash,
		"one description":        strings.Replace(withClash, "List drafts.", "List the drafts.", 1),
		"a domain description":   strings.Replace(withClash, `"description":""`, `"description":"First by name."`, 1),
		"the clash gone":         strings.Replace(withClash, `"name":"send.mail"`, `"name":"send.post"`, 1),
		"a schema, same meaning": strings.Replace(withClash, `"properties":{}`, `"properties": {}`, 1),
		"the clashing tool gone": richCatalog,
		// No tags hash apart from an empty list: the tool is rebuilt.
		"an empty tag list gone": strings.Replace(withClash, `,"tags":[]`, ``, 1),
	}
	for name, doc := range edits {
		t.Run(name, func(t *testing.T) {
			specs, err := ParseCatalog("test", []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			got, want := rebuildBoth(t, specs, prev)
			if !reflect.DeepEqual(withoutBase(got), withoutBase(want)) {
				for i := range want.Tools() {
					if !reflect.DeepEqual(got.Tools()[i], want.Tools()[i]) {
						t.Fatalf("tool %d:\n got %+v\nwant %+v", i, got.Tools()[i], want.Tools()[i])
					}
				}
				t.Fatal("NewCatalogFrom differs from NewCatalog")
			}
			// Reused tools share their checked schema with prev; rebuilt
			// ones do not.
			reused := 0
			for _, tl := range got.Tools() {
				old := prev.ToolByKey(tl.Domain + "/" + tl.Name)
				if old != nil && len(old.InputSchema()) > 0 && &old.InputSchema()[0] == &tl.InputSchema()[0] {
					reused++
				}
			}
			wantReused := map[string]int{"same": 6, "one description": 5, "a domain description": 4, "the clash gone": 5,
				"a schema, same meaning": 5, "the clashing tool gone": 5, "an empty tag list gone": 5}[name]
			if reused != wantReused {
				t.Errorf("%d tools reused, want %d", reused, wantReused)
			}
		})
	}
	bad, _ := ParseCatalog("test", []byte(strings.Replace(withClash, `"inputSchema":{"type":"object"},"tags":[]`, `"inputSchema":{"type":"string"},"tags":[]`, 1)))
	_, want := NewCatalog(bad)
	if _, err := NewCatalogFrom(bad, prev); err == nil || want == nil || err.Error() != want.Error() {
		t.Errorf("an invalid tool: NewCatalogFrom error %v, NewCatalog error %v", err, want)
	}
}

// TestNewCatalogFromSharesTools: a tool built exactly as before is the
// previous build's own (not a copy), and one that must be renamed is
// copied first, so that the previous catalog, still served while the
// next is built, never changes.
func TestNewCatalogFromSharesTools(t *testing.T) {
	const before = `{"domains":[{"name":"a","tools":[
	 {"name":"b__c","description":"Named like a__b's c.","inputSchema":{"type":"object"}},
	 {"name":"x","description":"Plain.","inputSchema":{"type":"object"}}]}]}`
	// a__b/c takes the qualified name a__b__c first: a/b__c, unchanged,
	// must be renamed.
	const after = `{"domains":[{"name":"a__b","tools":[
	 {"name":"c","description":"Clashes.","inputSchema":{"type":"object"}}]},
	 {"name":"a","tools":[
	 {"name":"b__c","description":"Named like a__b's c.","inputSchema":{"type":"object"}},
	 {"name":"x","description":"Plain.","inputSchema":{"type":"object"}}]}]}`
	dir := t.TempDir()
	write := func(doc string) *CatalogSource {
		path := filepath.Join(dir, "catalog.json")
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := ReadCatalogSource([]string{path})
		if err != nil {
			t.Fatal(err)
		}
		return src
	}
	for _, read := range []string{"parsed", "scanned against the previous build"} {
		t.Run(read, func(t *testing.T) {
			specs, first, err := write(before).SpecsFromLast(func() *Last { return nil })
			if err != nil {
				t.Fatal(err)
			}
			prev, err := NewCatalogFromLast(specs, first) // with the digests of its tools' bytes
			if err != nil {
				t.Fatal(err)
			}
			oldB := prev.ToolByKey("a/b__c")
			if oldB == nil || oldB.QualifiedName != "a__b__c" {
				t.Fatalf("test catalog: a/b__c is %+v", oldB)
			}
			src := write(after)
			if read == "parsed" {
				specs, err = src.Specs()
			} else {
				specs, _, err = src.SpecsFromLast(func() *Last { return NewLast(prev) })
			}
			if err != nil {
				t.Fatal(err)
			}
			got, want := rebuildBoth(t, specs, prev)
			// Equal but for the digests of the bytes prev's tools were
			// read from: the specs do not carry them.
			if !sameBuild(got, nil, want, nil) {
				t.Fatal("NewCatalogFrom differs from NewCatalog")
			}
			if got.ToolByKey("a/x") != prev.ToolByKey("a/x") {
				t.Error("a/x, unchanged, was copied instead of shared")
			}
			if nb := got.ToolByKey("a/b__c"); nb == oldB || nb.QualifiedName == "a__b__c" {
				t.Errorf("a/b__c was not renamed on a copy: %q", nb.QualifiedName)
			}
			if oldB.QualifiedName != "a__b__c" || prev.Tool("a__b__c") != oldB || oldB.Hash == "" {
				t.Errorf("the previous catalog's a/b__c changed: %+v", oldB)
			}
		})
	}
}

// TestToolByKeyFindsEveryTool: every tool is found by its domain and
// name, the sanitised, too long and clash-renamed ones included, in a
// built catalog, one read back from the cache and the previous build as
// a re-index reads it.
func TestToolByKeyFindsEveryTool(t *testing.T) {
	clashing := strings.TrimPrefix(QualifiedName("zeta", "send.mail"), "zeta__")
	doc := strings.Replace(richCatalog, `{"name":"list-drafts"`, `{"name":"`+clashing+`","description":"Clashes.","inputSchema":{"type":"object"}},{"name":"list-drafts"`, 1)
	// A domain named like another's prefix: a__b/c takes a/b__c's name.
	doc = strings.Replace(doc, `{"domains":[`, `{"domains":[{"name":"a__b","tools":[{"name":"c","inputSchema":{"type":"object"}}]},
	 {"name":"a","tools":[{"name":"b__c","inputSchema":{"type":"object"}}]},`, 1)
	built := mustCatalog(t, doc)
	if len(built.renamed) != 2 {
		t.Fatalf("test catalog: %d tools renamed, want 2", len(built.renamed))
	}
	s := &memCache{}
	key := strings.Repeat("ef", 32)
	if err := s.SaveCatalog(key, built); err != nil {
		t.Fatal(err)
	}
	for name, cat := range map[string]*Catalog{"built": built, "cached": s.CachedCatalog(key), "last": s.LastCatalog()} {
		if cat == nil || cat.Len() != built.Len() {
			t.Fatalf("%s: %v", name, cat)
		}
		for _, tl := range cat.Tools() {
			if got := cat.ToolByKey(tl.Domain + "/" + tl.Name); got != tl {
				t.Errorf("%s: ToolByKey(%s/%s) = %v, want the tool named %s", name, tl.Domain, tl.Name, got, tl.QualifiedName)
			}
		}
		if cat.ToolByKey("a/c") != nil || cat.ToolByKey("a__b/b__c") != nil {
			t.Errorf("%s: a tool found under another domain's name", name)
		}
	}
}

func TestToolByKey(t *testing.T) {
	cat := mustCatalog(t, `{"domains":[{"name":"d","tools":[
	 {"name":"a/b","description":"A slash in the name.","inputSchema":{"type":"object"}},
	 {"name":"a","description":"Plain.","inputSchema":{"type":"object"}}]},
	 {"name":"d__a","tools":[{"name":"b","description":"Qualified as d__a__b.","inputSchema":{"type":"object"}}]}]}`)
	// d/a__b would be qualified as d__a__b too, but there is no such tool.
	for key, want := range map[string]string{"d/a/b": "a/b", "d/a": "a", "d__a/b": "b", "d/a__b": "", "d": "", "a/b": "", "d/": "", "": ""} {
		got := cat.ToolByKey(key)
		if want == "" && got != nil || want != "" && (got == nil || got.Name != want) {
			t.Errorf("ToolByKey(%q) = %v, want %q", key, got, want)
		}
	}
}

// rebuildBoth returns the catalog of specs built from prev
// (NewCatalogFrom) and from nothing (NewCatalog).
func rebuildBoth(t *testing.T, specs []DomainSpec, prev *Catalog) (got, want *Catalog) {
	t.Helper()
	want, err := NewCatalog(specs)
	if err != nil {
		t.Fatal(err)
	}
	if got, err = NewCatalogFrom(specs, prev); err != nil {
		t.Fatal(err)
	}
	return got, want
}

// withoutBase returns c without what two equal catalogs may differ in:
// where they came from (the catalog.bin their tools were read from, the
// changes since the catalog they were built from), and whether their
// name lookups were built yet (nil stays nil).
func withoutBase(c *Catalog) *Catalog {
	if c == nil {
		return nil
	}
	decodeParams(c)
	cp := *c
	cp.base, cp.names, cp.changes, cp.fromPrev = nil, nil, 0, false
	return &cp
}

// decodeParams decodes, in place, the parameters of c's tools read from
// a file (Tool.Params), so that they compare equal to a build's.
func decodeParams(c *Catalog) {
	for _, t := range c.tools {
		asBuilt(t)
	}
}

// asBuilt makes t, read from a file, hold its parameters and name forms
// as a tool built from a spec does (Tool.built), so that it compares
// equal to a build's.
func asBuilt(t *Tool) {
	params := t.Params()
	t.edit().params = params
	t.psrc, t.pm, t.ps, t.sm, t.ss, t.rp = nil, 0, 0, 0, 0, 0
}

// deltaDoc is a catalog document to edit in TestCatalogDelta.
type deltaDoc struct {
	Domains []deltaDomain `json:"domains"`
}

type deltaDomain struct {
	Name        string      `json:"name"`
	Description string      `json:"description"`
	Tools       []deltaTool `json:"tools"`
}

type deltaTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Group       string          `json:"group,omitempty"`
}

// TestCatalogDelta: a run of random edits, each re-indexed as toolscout
// index does (the previous build read back, its unchanged tools reused
// or the build patched, the result saved) and read back under its key,
// gives each time what a build from scratch gives, whether it was
// patched or built, saved whole or as a delta.
func TestCatalogDelta(t *testing.T) {
	racetest.Plain(t)
	r := rand.New(rand.NewSource(7))
	var doc deltaDoc
	next := 0
	newTool := func() deltaTool {
		next++
		// Some names are sanitised or too long for a plain qualified name.
		name := []string{"tool%d", "tool.%d", "a_tool_name_long_enough_to_be_cut_short_in_its_qualified_name_%d"}[next%3]
		return deltaTool{Name: fmt.Sprintf(name, next), Description: fmt.Sprintf("Does thing %d.", next),
			InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"p%d":{"type":"string"}}}`, next))}
	}
	for _, name := range []string{"alpha", "beta", "gamma"} {
		d := deltaDomain{Name: name, Description: "The " + name + " domain."}
		for k := 0; k < 15; k++ {
			d.Tools = append(d.Tools, newTool())
		}
		doc.Domains = append(doc.Domains, d)
	}
	doc.Domains = append(doc.Domains, deltaDomain{Name: "empty", Description: "No tools yet.", Tools: []deltaTool{}})
	s := &memCache{}
	deltas, wholes, patched := 0, 0, 0
	for round := 0; round < 150; round++ {
		if round > 0 {
			d := &doc.Domains[r.Intn(len(doc.Domains))]
			if len(d.Tools) == 0 {
				d.Description += " Still none."
			} else {
				i := r.Intn(len(d.Tools))
				switch r.Intn(7) {
				case 0:
					d.Tools[i].Description += " Edited."
				case 1:
					if len(d.Tools) > 1 {
						d.Tools = slices.Delete(d.Tools, i, i+1)
					}
				case 2:
					d.Tools = slices.Insert(d.Tools, i, newTool())
				case 3:
					j := r.Intn(len(d.Tools))
					d.Tools[i], d.Tools[j] = d.Tools[j], d.Tools[i]
				case 4:
					d.Tools[i].Name += "x"
				case 5:
					d.Description += " More." // every tool of the domain changes
				case 6:
					d.Tools[i].Group = []string{"", "read", "write"}[r.Intn(3)]
				}
			}
		}
		data, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		src := &CatalogSource{names: []string{"test"}, data: [][]byte{data}}
		last := s.LastCatalog()
		if round > 0 && last == nil {
			t.Fatalf("round %d: no previous build", round)
		}
		specs, l, err := src.SpecsFromLast(func() *Last { return NewLast(last) })
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := patchCatalog(specs, last, l.read, false); ok {
			patched++
		}
		lastHashes := map[string]string{} // before the build may take last over
		if last != nil {
			for _, tl := range last.Tools() {
				lastHashes[tl.QualifiedName] = tl.Hash
			}
		}
		// As toolscout index does, taking the previous build's lookups
		// over, or keeping them (as a server's refresh does).
		var built *Catalog
		if round%2 == 1 {
			built, err = NewCatalogFromLast(specs, l)
			if l.Catalog() != nil || l.read != nil {
				t.Fatalf("round %d: NewCatalogFromLast left its previous build to be used again", round)
			}
		} else {
			built, err = rebuild(specs, l)
		}
		if err != nil {
			t.Fatal(err)
		}
		want, werr := buildWhole(string(data))
		if !sameBuild(built, nil, want, werr) {
			t.Fatalf("round %d: the re-build differs from a build from scratch", round)
		}
		if round > 0 {
			// Changes counts what differs from the previous build.
			diff := 0
			for _, tl := range built.Tools() {
				if h, ok := lastHashes[tl.QualifiedName]; !ok || h != tl.Hash {
					diff++
				}
			}
			for qn := range lastHashes {
				if built.Tool(qn) == nil {
					diff++
				}
			}
			if n, ok := built.Changes(); !ok || n != diff {
				t.Fatalf("round %d: Changes() = %d, %v; want %d", round, n, ok, diff)
			}
		}
		if len(built.byQName) != built.Len() {
			t.Fatalf("round %d: %d tools by qualified name, want %d", round, len(built.byQName), built.Len())
		}
		for _, tl := range built.Tools() {
			if built.Tool(tl.QualifiedName) != tl || built.ToolByKey(tl.Domain+"/"+tl.Name) != tl {
				t.Fatalf("round %d: %s is not found by its names", round, tl.QualifiedName)
			}
		}
		if err := s.SaveCatalog(src.Key(), built); err != nil {
			t.Fatal(err)
		}
		if len(s.delta) >= catDeltaHead && hex.EncodeToString(s.delta[len(catDeltaMagic):][:32]) == src.Key() {
			deltas++
		} else {
			wholes++
		}
		got := s.CachedCatalog(src.Key())
		if got == nil || !sameBuild(got, nil, want, werr) {
			t.Fatalf("round %d: the saved catalog read back differs from a build from scratch (%d deltas, %d whole so far)", round, deltas, wholes)
		}
		if len(s.healed) > 0 {
			t.Fatalf("round %d: healed %q", round, s.healed)
		}
	}
	if deltas < 50 || wholes < 5 {
		t.Fatalf("%d saves as deltas, %d whole: the test does not exercise both", deltas, wholes)
	}
	if patched < 20 || patched > 130 {
		t.Fatalf("%d of 150 re-builds patched the previous one: the test does not exercise both ways", patched)
	}
}

// TestNameLookupsOnFirstUse: the lookups by name are not built until
// asked, then built once for every caller at the same time.
func TestNameLookupsOnFirstUse(t *testing.T) {
	s := &memCache{}
	built := mustCatalog(t, richCatalog)
	key := strings.Repeat("12", 32)
	if err := s.SaveCatalog(key, built); err != nil {
		t.Fatal(err)
	}
	for name, cat := range map[string]*Catalog{"built": built, "cached": s.CachedCatalog(key)} {
		if cat.names.byName != nil || cat.names.wordTools != nil {
			t.Fatalf("%s: name lookups built before any use", name)
		}
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if n := len(cat.ToolsNamed("send mail")); n != 3 {
					t.Errorf("%s: ToolsNamed(send mail) = %d tools, want 3", name, n)
				}
				var amb *AmbiguousError
				if _, err := cat.Resolve("send_mail"); !errors.As(err, &amb) || len(amb.Candidates) != 2 {
					t.Errorf("%s: Resolve(send_mail) = %v, want two candidates", name, err)
				}
			}()
		}
		wg.Wait()
	}
}

// TestCatalogCacheDecodeDamage: past the checksum, the decoder itself
// must stop at damage: bodies with a recomputed checksum, their meta
// region cut short or a byte changed, end in an error or a catalog,
// never in a panic.
func TestCatalogCacheDecodeDamage(t *testing.T) {
	good := cacheFile(t, mustCatalog(t, richCatalog))
	const head = len(catCacheMagic) + 32 + 4
	body := good[head:]
	lm := binary.LittleEndian.Uint64(body)
	withBody := func(b []byte) []byte {
		out := append(append([]byte(nil), good[:head]...), b...)
		binary.LittleEndian.PutUint32(out[head-4:], crc32.Checksum(b, checksum.Castagnoli))
		return out
	}
	for cut := uint64(0); cut < lm; cut += 1 + lm/50 {
		b := append([]byte(nil), body[:24]...)
		binary.LittleEndian.PutUint64(b, cut)
		b = append(append(b, body[24:24+cut]...), body[24+lm:]...)
		if _, err := decodeCatalog(withBody(b)); err == nil {
			t.Errorf("meta cut at %d of %d decoded without error", cut, lm)
		}
	}
	for at := 24; at < len(body); at += 13 {
		b := append([]byte(nil), body...)
		b[at] ^= 0xff
		decodeCatalog(withBody(b)) // must return
	}
}

// memCache keeps catalog.bin and catalog.delta in memory, saved and read
// through the codec's API the way index/store does with the files: the
// codec's round trips without a data dir.
type memCache struct {
	base, delta []byte
	healed      []string
}

func (m *memCache) SaveCatalog(key string, c *Catalog) error {
	raw, err := hex.DecodeString(key)
	if err != nil || len(raw) != sha256.Size {
		return fmt.Errorf("catalog cache key %q: want a hex SHA-256", key)
	}
	var buf bytes.Buffer
	if want := DeltaBaseHead(c); want != nil && len(m.base) >= CacheHeadLen && bytes.Equal(m.base[:CacheHeadLen], want) {
		err = WriteCatalogDelta(&buf, raw, c)
		m.delta = buf.Bytes()
		return err
	}
	err = WriteCatalogCache(&buf, raw, c)
	m.base, m.delta = buf.Bytes(), nil
	return err
}

func (m *memCache) CachedCatalog(key string) *Catalog {
	want, _ := hex.DecodeString(key)
	if m.base == nil {
		return nil
	}
	inBase, inDelta := CacheHolds(want, m.base[:min(len(m.base), CacheHeadLen)], func() []byte { return m.delta[:min(len(m.delta), DeltaHeadLen)] })
	if !inBase && !inDelta {
		return nil
	}
	c, err := DecodeCatalogCache(m.base)
	if err != nil {
		m.healed = append(m.healed, "catalog.bin: "+err.Error())
		return nil
	}
	if inBase {
		return c.Catalog()
	}
	cat, err := c.WithDelta(m.delta)
	if err != nil {
		m.healed = append(m.healed, "catalog.delta: "+err.Error())
	}
	return cat
}

func (m *memCache) LastCatalog() *Catalog {
	c, err := DecodeCatalogCache(m.base)
	if err != nil {
		return nil
	}
	if cat, err := c.WithDelta(m.delta); err == nil {
		return cat
	}
	return c.Catalog()
}

// What tools share is written once in catalog.bin: a parameter's
// description, a schema, a group; a summary that starts the description
// and name forms inside one another are not written again either. The
// decoded tools still carry every field.
func TestCatalogCacheWritesSharedOnce(t *testing.T) {
	const (
		paramDesc = "The identifier of the record to act on, as the listing returned it."
		group     = "records-and-more-records"
		n         = 20
	)
	var tools []string
	for i := range n {
		tools = append(tools, fmt.Sprintf(`{"name":"act_%d","description":"Act %d on a record.","group":%q,
			"inputSchema":{"type":"object","properties":{"record_id":{"type":"string","description":%q}},"required":["record_id"]}}`, i, i, group, paramDesc))
	}
	cat := mustCatalog(t, `{"domains":[{"name":"records","description":"Records.","tools":[`+strings.Join(tools, ",")+`]}]}`)
	file := cacheFile(t, cat)
	schema := cat.Tools()[0].InputSchema()
	for _, c := range []struct {
		what string
		b    []byte
	}{
		{"the parameter's description", []byte(paramDesc)},
		{"the group", []byte(group)},
		{"the schema", schema},
		{"a summary", []byte("Act 7 on a record.")},
		{"a name form", []byte(nameForms(cat.Tools()[3])[2])},
	} {
		// The schema holds the description once, so it counts for one
		// more: the region of strings and the region of schemas.
		want := 1
		if c.what == "the parameter's description" {
			want = 2
		}
		if got := bytes.Count(file, c.b); got != want {
			t.Errorf("catalog.bin of %d tools holds %s %d times, want %d", n, c.what, got, want)
		}
	}
	got, err := decodeCatalog(file)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(withoutBase(got), withoutBase(cat)) {
		t.Fatal("decoded catalog differs from the one encoded")
	}
}

// A reference to strings not read yet (a damaged or hostile file) is an
// error, not a read past what the checks covered.
func TestCatalogCacheForwardReference(t *testing.T) {
	r := &catReader{meta: binary.AppendUvarint(binary.AppendUvarint(nil, 3<<1|1), 2), strs: "abcdef"}
	if s := r.str(); r.err == nil {
		t.Errorf("str() of a reference ahead of the strings read = %q, want an error", s)
	}
	r = &catReader{meta: binary.AppendUvarint(binary.AppendUvarint(nil, (3<<1|1)+1), 0), raws: []byte("abcdef")}
	if b := r.raw(); r.err == nil {
		t.Errorf("raw() of a reference ahead of the schemas read = %q, want an error", b)
	}
}

// SchemaBytes names the part of catalog.bin that every decoded schema
// points into, and nothing a search reads (names, descriptions) is in it.
func TestCatalogCacheSchemaBytes(t *testing.T) {
	file := cacheFile(t, mustCatalog(t, richCatalog))
	c, err := DecodeCatalogCache(file)
	if err != nil {
		t.Fatal(err)
	}
	from, to := c.SchemaBytes()
	if from <= CacheHeadLen || from > to || to != len(file) {
		t.Fatalf("SchemaBytes() = %d, %d of a %d-byte file", from, to, len(file))
	}
	within := func(b []byte) bool {
		start, end := uintptr(unsafe.Pointer(&file[from])), uintptr(unsafe.Pointer(&file[to-1]))
		return len(b) == 0 || uintptr(unsafe.Pointer(&b[0])) >= start && uintptr(unsafe.Pointer(&b[len(b)-1])) <= end
	}
	schemas := 0
	for _, tl := range c.Catalog().Tools() {
		for _, b := range [][]byte{tl.InputSchema(), tl.OutputSchema(), tl.Annotations()} {
			if len(b) > 0 {
				schemas++
				if !within(b) {
					t.Errorf("tool %s: a schema outside SchemaBytes %d-%d", tl.QualifiedName, from, to)
				}
			}
		}
		if bytes.Contains(file[from:to], []byte(tl.Description)) && !bytes.Contains(tl.InputSchema(), []byte(tl.Description)) {
			t.Errorf("tool %s: its description is among the schemas", tl.QualifiedName)
		}
	}
	if schemas == 0 {
		t.Fatal("the rich catalog decoded without schemas")
	}
}
