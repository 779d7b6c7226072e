package search

import (
	"context"
	"encoding/json"
	"maps"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/internal/racetest"
	"github.com/toolscout/toolscout/internal/synth"
)

// referenceServers are tools of the npm reference servers memory,
// filesystem and everything as they list them (descriptions shortened to
// their first sentence), their domains described as the gateway derives
// a description when the config gives none.
const referenceServers = `{"domains":[
 {"name":"memory","description":"memory server. Tools about knowledge graph, entities, relations.","tools":[
  {"name":"create_entities","description":"Create multiple new entities in the knowledge graph","inputSchema":{"type":"object"}},
  {"name":"create_relations","description":"Create multiple new relations between entities in the knowledge graph. Relations should be in active voice","inputSchema":{"type":"object"}},
  {"name":"add_observations","description":"Add new observations to existing entities in the knowledge graph","inputSchema":{"type":"object"}},
  {"name":"delete_entities","description":"Delete multiple entities and their associated relations from the knowledge graph","inputSchema":{"type":"object"}},
  {"name":"delete_observations","description":"Delete specific observations from entities in the knowledge graph","inputSchema":{"type":"object"}},
  {"name":"delete_relations","description":"Delete multiple relations from the knowledge graph","inputSchema":{"type":"object"}},
  {"name":"read_graph","description":"Read the entire knowledge graph","inputSchema":{"type":"object"}},
  {"name":"search_nodes","description":"Search for nodes in the knowledge graph based on a query","inputSchema":{"type":"object"}},
  {"name":"open_nodes","description":"Open specific nodes in the knowledge graph by their names","inputSchema":{"type":"object"}}]},
 {"name":"filesystem","description":"secure filesystem server. Tools about directories, files.","tools":[
  {"name":"read_text_file","description":"Read the complete contents of a file from the file system as text. Only works within allowed directories.","inputSchema":{"type":"object"}},
  {"name":"write_file","description":"Create a new file or completely overwrite an existing file with new content. Only works within allowed directories.","inputSchema":{"type":"object"}},
  {"name":"edit_file","description":"Make line-based edits to a text file. Only works within allowed directories.","inputSchema":{"type":"object"}},
  {"name":"create_directory","description":"Create a new directory or ensure a directory exists. Only works within allowed directories.","inputSchema":{"type":"object"}},
  {"name":"list_directory","description":"Get a detailed listing of all files and directories in a specified path. Only works within allowed directories.","inputSchema":{"type":"object"}},
  {"name":"move_file","description":"Move or rename files and directories. Only works within allowed directories.","inputSchema":{"type":"object"}},
  {"name":"search_files","description":"Recursively search for files and directories matching a pattern. Only works within allowed directories.","inputSchema":{"type":"object"}},
  {"name":"get_file_info","description":"Retrieve detailed metadata about a file or directory. Only works within allowed directories.","inputSchema":{"type":"object"}},
  {"name":"list_allowed_directories","description":"Returns the list of directories that this server is allowed to access.","inputSchema":{"type":"object"}}]},
 {"name":"everything","description":"Everything Reference Server. Tools about resources, simulated.","tools":[
  {"name":"echo","description":"Echoes back the input string","inputSchema":{"type":"object"}},
  {"name":"get-env","description":"Returns all environment variables, helpful for debugging MCP server configuration","inputSchema":{"type":"object"}},
  {"name":"get-sum","description":"Returns the sum of two numbers","inputSchema":{"type":"object"}},
  {"name":"get-tiny-image","description":"Returns a tiny MCP logo image.","inputSchema":{"type":"object"}},
  {"name":"get-resource-reference","description":"Returns a resource reference that can be used by MCP clients","inputSchema":{"type":"object"}},
  {"name":"trigger-long-running-operation","description":"Demonstrates a long running operation with progress updates.","inputSchema":{"type":"object"}},
  {"name":"toggle-simulated-logging","description":"Toggles simulated, random-leveled logging on or off.","inputSchema":{"type":"object"}}]}]}`

// describedEngine returns an engine over referenceServers with the
// memory domain described as desc (the derived description when empty).
func describedEngine(t *testing.T, desc string) *Engine {
	t.Helper()
	return describedEngineWith(t, desc, embed.NewBuiltin(embed.BuiltinOptions{}))
}

// describedEngineWith is describedEngine on the embedder emb.
func describedEngineWith(t *testing.T, desc string, emb embed.Embedder) *Engine {
	t.Helper()
	var cat struct {
		Domains []map[string]any `json:"domains"`
	}
	if err := json.Unmarshal([]byte(referenceServers), &cat); err != nil {
		t.Fatal(err)
	}
	if desc != "" {
		cat.Domains[0]["description"] = desc
	}
	data, err := json.Marshal(cat)
	if err != nil {
		t.Fatal(err)
	}
	specs, err := index.ParseCatalog("reference servers", data)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	live, _, err := Open(context.Background(), LiveOptions{Store: st, Embedder: emb}, specs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })
	return live.Engine()
}

// firstOf returns the 1-based rank of the first result in domain, or 0.
func firstOf(rs []Result, domain string) int {
	for i, r := range rs {
		if r.Tool.Domain == domain {
			return i + 1
		}
	}
	return 0
}

// memoryDescription is the description issue 46 adds to the memory
// server.
const memoryDescription = "Long-term memory: remember facts about people, organisations and projects, and recall what is stored about them"

// TestDescriptionReachesPurpose: a description added to the memory
// server brings its tools to a request that names what the server is
// for, in words none of its tools has, in keyword and hybrid mode.
func TestDescriptionReachesPurpose(t *testing.T) {
	plain, described := describedEngine(t, ""), describedEngine(t, memoryDescription)
	const q = "what is stored about Bob?"
	for _, mode := range []Mode{Keyword, Hybrid} {
		t.Run(string(mode), func(t *testing.T) {
			before, err := plain.Search(context.Background(), Request{Query: q, Mode: mode, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			after, err := described.Search(context.Background(), Request{Query: q, Mode: mode, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			b, a := firstOf(before.Results, "memory"), firstOf(after.Results, "memory")
			// Keyword mode finds no tool without the description (none
			// has the request's words); hybrid ranks the memory tools
			// by their vectors' similarity without it, higher with it.
			if a == 0 || mode == Keyword && a > 3 || b != 0 && a >= b {
				t.Errorf("Search(%q, %s): first memory tool at %d with the description (%v), %d without (%v); want it higher (in keyword mode, in the top 3)",
					q, mode, a, names(after.Results), b, names(before.Results))
			}
		})
	}
	// Off turns the domain text off: the description counts for nothing.
	off := Params{DomainText: Off}
	resp, err := described.Search(context.Background(), Request{Query: q, Mode: Keyword, Params: &off})
	if err != nil {
		t.Fatal(err)
	}
	if r := firstOf(resp.Results, "memory"); r != 0 {
		t.Errorf("domain_text -1: memory tool at %d (%v), want none: no tool has the request's words", r, names(resp.Results))
	}
}

// TestDescriptionCannotTakeOver: a description stuffed with the words of
// every other server's tools cannot take the requests those tools match:
// in every mode, each request's first tool is the same with the
// description as without it, and no tool of the described server rises
// above the keyword list's best match in keyword mode.
func TestDescriptionCannotTakeOver(t *testing.T) {
	const stuffed = "Everything you need: read, write, edit, move, list and search files and directories, echo strings, environment variables, sums of numbers, images, resources, logging and long running operations"
	plain, described := describedEngine(t, ""), describedEngine(t, stuffed)
	requests := []string{
		"read the contents of a text file",
		"write new content to a file",
		"rename a file",
		"list the files in a directory",
		"search for files matching a pattern",
		"create a new directory",
		"echo back a string",
		"show the environment variables",
		"add two numbers",
		"turn on simulated logging",
	}
	for _, mode := range []Mode{Keyword, Semantic, Hybrid} {
		for _, q := range requests {
			before, err := plain.Search(context.Background(), Request{Query: q, Mode: mode, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			after, err := described.Search(context.Background(), Request{Query: q, Mode: mode, Limit: 10, Explain: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(before.Results) == 0 || len(after.Results) == 0 || before.Results[0].Tool.QualifiedName != after.Results[0].Tool.QualifiedName {
				t.Errorf("Search(%q, %s): first %v with the stuffed description, %v without; want the same",
					q, mode, first(after.Results), first(before.Results))
			}
			if mode != Keyword {
				continue
			}
			best := slices.MaxFunc(after.Results, func(a, b Result) int {
				return cmpFloat(a.Explanation.KeywordScore, b.Explanation.KeywordScore)
			})
			for _, r := range after.Results {
				if r.Tool.Domain == "memory" && r.Explanation.KeywordScore == 0 && r.Score >= best.Score {
					t.Errorf("Search(%q, keyword): %s, which no word of the request matches, scores %g, at or above the best match %s (%g)",
						q, r.Tool.QualifiedName, r.Score, best.Tool.QualifiedName, best.Score)
				}
			}
		}
	}
}

func first(rs []Result) string {
	if len(rs) == 0 {
		return "nothing"
	}
	return rs[0].Tool.QualifiedName
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestDomainCoverage checks the domain index itself: a word only one
// domain's text has covers that domain, a word every domain has covers
// little, words no domain has lower every coverage, and a catalog of one
// domain has none.
func TestDomainCoverage(t *testing.T) {
	specs, err := index.ParseCatalog("reference servers", []byte(referenceServers))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := index.NewCatalog(specs)
	if err != nil {
		t.Fatal(err)
	}
	d := newDomainText(cat)
	for _, tc := range []struct {
		q, domain string
		lo, hi    float64
	}{
		{"knowledge graph", "memory", 0.5, 1},
		{"knowledge graph", "filesystem", 0, 0},
		{"directories", "filesystem", 0.5, 1},
	} {
		got := d.coverage(tc.q)[tc.domain]
		if got < tc.lo || got > tc.hi {
			t.Errorf("coverage(%q)[%s] = %g, want %g to %g", tc.q, tc.domain, got, tc.lo, tc.hi)
		}
	}
	if with, without := d.coverage("knowledge graph of Zyxwv Qwfp")["memory"], d.coverage("knowledge graph")["memory"]; !(with > 0 && with < without) {
		t.Errorf("coverage of memory with words no domain has = %g, without them %g; want less, above 0", with, without)
	}
	// What a server says of itself beside a configured description
	// (About) is the domain's text too.
	if c := d.coverage("facts about people")["memory"]; c != 0 {
		t.Errorf("coverage(facts about people)[memory] = %g without About, want 0", c)
	}
	specs[0].About = "Memory Server. Stores facts about people."
	withAbout, err := index.NewCatalog(specs)
	if err != nil {
		t.Fatal(err)
	}
	if c := newDomainText(withAbout).coverage("facts about people")["memory"]; c <= 0 {
		t.Errorf("coverage(facts about people)[memory] = %g with About, want above 0", c)
	}
	one, err := index.NewCatalog(specs[:1])
	if err != nil {
		t.Fatal(err)
	}
	if c := newDomainText(one).coverage("knowledge graph"); c != nil {
		t.Errorf("one domain: coverage = %v, want none", c)
	}
}

// TestDomainCoverageReusesNoScore: coverage keeps its per-domain scores
// in a buffer reused across requests (and across catalogs of other
// sizes); no score of one request may reach the next. Each request's
// coverage, asked between others on two catalogs in three other orders,
// is what it was the first time, and a request of words no domain has
// covers none.
func TestDomainCoverageReusesNoScore(t *testing.T) {
	specs, err := index.ParseCatalog("reference servers", []byte(referenceServers))
	if err != nil {
		t.Fatal(err)
	}
	small, err := index.NewCatalog(specs)
	if err != nil {
		t.Fatal(err)
	}
	big, err := synth3000()
	if err != nil {
		t.Fatal(err)
	}
	texts := []*domainText{newDomainText(big), newDomainText(small)}
	queries := append(synth.Queries(20, 3), "knowledge graph", "directories", "read the file")
	want := make([][]map[string]float64, len(texts))
	for i, d := range texts {
		for _, q := range queries {
			want[i] = append(want[i], maps.Clone(d.coverage(q)))
		}
	}
	for round := range 3 {
		for i, d := range texts {
			for j := range queries {
				j = (j*7 + round) % len(queries) // another order each round
				got := d.coverage(queries[j])
				if !maps.Equal(got, want[i][j]) { // to the last bit: the same request, the same sum
					t.Fatalf("round %d, catalog %d: coverage(%q) = %v, asked first %v", round, i, queries[j], got, want[i][j])
				}
			}
		}
	}
	// A request of words no domain has covers none, whatever came before.
	for _, d := range texts {
		d.coverage(queries[0])
		if got := d.coverage("zyxwv qwfp"); len(got) != 0 {
			t.Errorf("coverage(zyxwv qwfp) after another request = %v, want none", got)
		}
	}
}

// TestCoverageIntoReusesTheMap: the coverage written into a map that
// is reused across requests (keyword mode's domain evidence) is the
// coverage of each request alone, nothing left of the one before, and
// costs at least one allocation less than a fresh map.
func TestCoverageIntoReusesTheMap(t *testing.T) {
	cat, err := synth3000()
	if err != nil {
		t.Fatal(err)
	}
	d := newDomainText(cat)
	reused := map[string]float64{}
	queries := synth.Queries(40, 5)
	covered := 0
	for _, q := range queries {
		want := d.coverage(q)
		got := d.coverageInto(q, reused)
		// To the last bit: a request's words are summed in one order
		// (sorted), whatever the map of its stems iterates in.
		if !maps.Equal(got, want) {
			t.Fatalf("coverageInto(%q) = %v, want %v", q, got, want)
		}
		covered += len(want)
	}
	if covered == 0 {
		t.Fatal("no query covered a domain: the comparison proves nothing")
	}
	q := queries[0]
	fresh := testing.AllocsPerRun(20, func() { d.coverageInto(q, nil) })
	into := testing.AllocsPerRun(20, func() { d.coverageInto(q, reused) })
	if into > fresh-1 {
		t.Errorf("coverageInto allocates %v times into a reused map, %v into a fresh one: want at least one less", into, fresh)
	}
}

// synth20k returns synth.Catalog(20_000, 1), one build for every two
// calls: the two tests that only read it (TestDomainTextHeldCompact,
// TestDomainTextBuiltAsBefore) share it, in either order, and it is not
// held after both have it (a catalog kept to the end of the run is marked
// by every collection of the tests after, many of which force one). Its
// build was most of each test's CPU under -race (issue 47, item 5); both
// tests run in make unit's plain pass only (racetest.Plain), so a race
// build does not build it. TestDomainTextHeldCompact measures the heap
// the domain text adds to it, which is the same whether the catalog was
// built just before or by the other test.
func synth20k() (*index.Catalog, error) {
	shared20k.mu.Lock()
	defer shared20k.mu.Unlock()
	if shared20k.cat == nil {
		cat, err := synth.Catalog(20_000, 1)
		if err != nil {
			return nil, err
		}
		shared20k.cat, shared20k.uses = cat, 0
	}
	cat := shared20k.cat
	if shared20k.uses++; shared20k.uses == 2 {
		shared20k.cat = nil
	}
	return cat, nil
}

// shared20k is synth20k's catalog until its second caller has it.
var shared20k struct {
	mu   sync.Mutex
	cat  *index.Catalog
	uses int
}

// TestDomainTextHeldCompact: a server holds the domain text for its
// life, so its bytes per tool are bounded (a map of a slice per stem
// held 129 bytes a tool of this catalog, one array of postings 90: the
// stems themselves are most of it, a synthetic tool's words being rare).
func TestDomainTextHeldCompact(t *testing.T) {
	racetest.Plain(t)
	cat, err := synth20k()
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d := newDomainText(cat)
	runtime.GC()
	runtime.ReadMemStats(&after)
	perTool := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(cat.Len())
	t.Logf("%.1f bytes a tool, %d stems, %d postings, %d domains", perTool, len(d.stems), len(d.post), len(d.names))
	if perTool > 105 {
		t.Fatalf("the domain text holds %.0f bytes a tool, want at most 105", perTool)
	}
	if d.coverage(cat.Tools()[0].Summary) == nil {
		t.Fatal("the domain text covers nothing of a tool's own summary")
	}
	runtime.KeepAlive(d)
}
