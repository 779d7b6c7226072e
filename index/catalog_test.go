package index

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseCatalogErrors(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		wantPath string
		wantIn   string // substring of the reason
	}{
		{"invalid json", "{\"domains\": [\n{\"name\": \"a\",}]}", "", "line 2, column"},
		{"no domains", `{"tools": []}`, "domains", "missing"},
		{"domains not a list", `{"domains": {}}`, "domains", "expected a list, found JSON object"},
		{"tools not a list", `{"domains":[{"name":"a","tools":{}}]}`, "domains[0].tools", "expected a list, found JSON object"},
		{"bad domain name", `{"domains":[{"name":"Git Hub","tools":[]}]}`, "domains[0].name", "invalid domain name"},
		{"duplicate domain", `{"domains":[{"name":"a","tools":[]},{"name":"a","tools":[]}]}`, "domains[1].name", "duplicate domain"},
		{"duplicate tool", `{"domains":[{"name":"a","tools":[{"name":"x","inputSchema":{"type":"object"}},{"name":"x","inputSchema":{"type":"object"}}]}]}`, "domains[0].tools[1].name", "duplicate tool"},
		{"missing schema", `{"domains":[{"name":"a","tools":[{"name":"x"}]}]}`, "domains[0].tools[0].inputSchema", "missing"},
		{"non-object schema", `{"domains":[{"name":"a","tools":[{"name":"x","inputSchema":{"type":"string"}}]}]}`, "domains[0].tools[0].inputSchema", `"type" is "string"`},
		{"schema without type", `{"domains":[{"name":"a","tools":[{"name":"x","inputSchema":{"properties":{}}}]}]}`, "domains[0].tools[0].inputSchema", `"type" is missing`},
		{"schema is an array", `{"domains":[{"name":"a","tools":[{"name":"x","inputSchema":[1]}]}]}`, "domains[0].tools[0].inputSchema", "not a JSON object schema"},
		{"name of wrong type", `{"domains":[{"name":"a","tools":[{"name":5,"inputSchema":{"type":"object"}}]}]}`, "domains[0].tools[0].name", "expected a string, found JSON number"},
		{"empty tool name", `{"domains":[{"name":"a","tools":[{"name":"","inputSchema":{"type":"object"}}]}]}`, "domains[0].tools[0].name", "missing tool name"},
		{"bad output schema", `{"domains":[{"name":"a","tools":[{"name":"x","inputSchema":{"type":"object"},"outputSchema":{"type":"array"}}]}]}`, "domains[0].tools[0].outputSchema", "not an object schema"},
		{"annotations not object", `{"domains":[{"name":"a","tools":[{"name":"x","inputSchema":{"type":"object"},"annotations":[true]}]}]}`, "domains[0].tools[0].annotations", "JSON object"},
		{"enabled not a boolean", `{"domains":[{"name":"a","tools":[{"name":"x","inputSchema":{"type":"object"},"enabled":"no"}]}]}`, "domains[0].tools[0].enabled", "expected true or false, found JSON string"},
		{"deprecated a number", `{"domains":[{"name":"a","tools":[{"name":"x","inputSchema":{"type":"object"},"deprecated":2}]}]}`, "domains[0].tools[0]", `"deprecated" must be true, false or a string`},
		{"deprecated too long", `{"domains":[{"name":"a","tools":[{"name":"x","inputSchema":{"type":"object"},"deprecated":"` + strings.Repeat("x", 301) + `"}]}]}`, "domains[0].tools[0].deprecated", "at most 300"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			specs, err := ParseCatalog("cat.json", []byte(tc.input))
			if err == nil {
				_, err = NewCatalog(specs)
			}
			if err == nil {
				t.Fatalf("load(%s) succeeded, want error at %q", tc.input, tc.wantPath)
			}
			var ce *CatalogError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is %T, want *CatalogError", err, err)
			}
			if ce.File != "cat.json" {
				t.Errorf("File = %q, want cat.json", ce.File)
			}
			if ce.Path != tc.wantPath {
				t.Errorf("Path = %q, want %q (error: %v)", ce.Path, tc.wantPath, err)
			}
			if !strings.Contains(ce.Reason, tc.wantIn) {
				t.Errorf("Reason = %q, want it to contain %q", ce.Reason, tc.wantIn)
			}
		})
	}
}

func TestLoadCatalogFilesNothingHalfLoaded(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.json", `{"domains":[{"name":"a","tools":[{"name":"x","inputSchema":{"type":"object"}}]}]}`)
	bad := writeFile(t, dir, "bad.json", `{"domains":[{"name":"b","tools":[{"name":"y","inputSchema":{"type":"array"}}]}]}`)
	cat, err := LoadCatalogFiles([]string{good, bad})
	if err == nil || cat != nil {
		t.Fatalf("LoadCatalogFiles(good, bad) = %v, %v; want nil catalog and an error", cat, err)
	}
	if !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("error %q does not name bad.json", err)
	}
	if _, err := LoadCatalogFiles([]string{dir + "/missing.json"}); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing file: error %v, want one naming the file", err)
	}
}

func TestCatalogModel(t *testing.T) {
	cat := mustCatalog(t, `{"domains":[
	 {"name":"github","description":"GitHub","tools":[
	   {"name":"create_issue","description":"Open a new issue. It has a body.","group":"issues","inputSchema":{"type":"object","properties":{"repo":{"type":"string","description":"Repository"},"title":{"type":"string"}},"required":["repo"]}},
	   {"name":"search_code","description":"Search code.","group":"code","inputSchema":{"type":"object"}}]},
	 {"name":"jira","description":"Jira","tools":[
	   {"name":"create_issue","description":"Create a Jira issue.","inputSchema":{"type":"object"}}]}]}`)
	if got, want := cat.Len(), 3; got != want {
		t.Fatalf("Len() = %d, want %d", got, want)
	}
	gh := cat.Domain("github")
	if gh == nil || strings.Join(gh.Groups, ",") != "code,issues" {
		t.Fatalf("Domain(github).Groups = %v, want [code issues]", gh)
	}
	tool := cat.Tool("github__create_issue")
	if tool == nil {
		t.Fatal("Tool(github__create_issue) = nil")
	}
	if tool.Summary != "Open a new issue." {
		t.Errorf("Summary = %q, want first sentence", tool.Summary)
	}
	ps := tool.Params()
	if len(ps) != 2 || ps[0].Name != "repo" || !ps[0].Required || ps[0].Description != "Repository" || ps[1].Required {
		t.Errorf("Params() = %+v, want repo (required) and title", ps)
	}
	// Resolution: qualified, domain/tool, unique bare, ambiguous bare, unknown.
	if got, err := cat.Resolve("search_code"); err != nil || got.QualifiedName != "github__search_code" {
		t.Errorf("Resolve(search_code) = %v, %v", got, err)
	}
	if got, err := cat.Resolve("jira/create_issue"); err != nil || got.QualifiedName != "jira__create_issue" {
		t.Errorf("Resolve(jira/create_issue) = %v, %v", got, err)
	}
	var amb *AmbiguousError
	if _, err := cat.Resolve("create_issue"); !errors.As(err, &amb) || len(amb.Candidates) != 2 {
		t.Errorf("Resolve(create_issue) error = %v, want AmbiguousError with 2 candidates", err)
	}
	if _, err := cat.Resolve("nope"); !errors.Is(err, ErrToolNotFound) {
		t.Errorf("Resolve(nope) error = %v, want ErrToolNotFound", err)
	}
	// Hash: stable for equal content, different when a description changes.
	again := mustCatalog(t, `{"domains":[{"name":"jira","description":"Jira","tools":[{"name":"create_issue","description":"Create a Jira issue.","inputSchema":{"type":"object"}}]}]}`)
	changed := mustCatalog(t, `{"domains":[{"name":"jira","description":"Jira","tools":[{"name":"create_issue","description":"Create an issue.","inputSchema":{"type":"object"}}]}]}`)
	h := cat.Tool("jira__create_issue").Hash
	if again.Tool("jira__create_issue").Hash != h {
		t.Error("hash differs for identical tool content")
	}
	if changed.Tool("jira__create_issue").Hash == h {
		t.Error("hash unchanged after the description changed")
	}
}

var strictName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestQualifiedName(t *testing.T) {
	long := strings.Repeat("very_long_tool_name_", 5)
	tests := []struct {
		domain, tool string
		want         string // "" means: only check validity
	}{
		{"github", "create_issue", "github__create_issue"},
		{"k8s", "get-pods", "k8s__get-pods"},
		{"fs", "read.file", ""},
		{"x", long, ""},
		{"x", "名前", ""},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			got := QualifiedName(tc.domain, tc.tool)
			if tc.want != "" && got != tc.want {
				t.Errorf("QualifiedName(%q, %q) = %q, want %q", tc.domain, tc.tool, got, tc.want)
			}
			if !strictName.MatchString(got) {
				t.Errorf("QualifiedName(%q, %q) = %q, not valid for strict clients", tc.domain, tc.tool, got)
			}
			if QualifiedName(tc.domain, tc.tool) != got {
				t.Error("QualifiedName is not stable")
			}
		})
	}
	if QualifiedName("fs", "read.file") == QualifiedName("fs", "read_file") {
		t.Error("read.file and read_file share a qualified name")
	}
	if QualifiedName("x", long+"a") == QualifiedName("x", long+"b") {
		t.Error("two long names that differ at the end share a qualified name")
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Open a new issue. Then more text.", "Open a new issue."},
		{"  Multi\n  line   text  ", "Multi line text"},
		{"First paragraph.\n\nSecond paragraph is long.", "First paragraph."},
		{"Use e.g. labels to filter the list of issues in the repository. More.", "Use e.g. labels to filter the list of issues in the repository."},
		{strings.Repeat("word ", 30), "word word word word word word word word word word word word word word word…"},
		{"", ""},
	}
	for _, tc := range tests {
		got := Summarize(tc.in)
		if got != tc.want {
			t.Errorf("Summarize(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if n := utf8.RuneCountInString(got); n > MaxSummary {
			t.Errorf("Summarize(%q) has %d characters, over %d", tc.in, n, MaxSummary)
		}
	}
}

func TestSplitIdentifier(t *testing.T) {
	tests := []struct{ in, want string }{
		{"getUserByID", "get user by id"},
		{"search_repositories", "search repositories"},
		{"get-file-contents", "get file contents"},
		{"s3.put_object.v2", "s3 put object v2"},
		{"HTMLParser", "html parser"},
		{"listEC2Instances", "list ec2 instances"},
		{"oauth2Token", "oauth2 token"},
		{"version10", "version10"},
		{"2faCodes", "2fa codes"},
	}
	for _, tc := range tests {
		if got := NameWords(tc.in); got != tc.want {
			t.Errorf("NameWords(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestBuiltinCatalog(t *testing.T) {
	cat, err := BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	if cat.Len() < 300 || len(cat.Domains()) < 15 {
		t.Errorf("built-in catalog has %d tools in %d domains, want ≥ 300 in ≥ 15", cat.Len(), len(cat.Domains()))
	}
	for _, name := range []string{"search", "list_issues", "create_issue"} {
		var amb *AmbiguousError
		if _, err := cat.Resolve(name); !errors.As(err, &amb) {
			t.Errorf("Resolve(%q) = %v, want an ambiguous name across domains", name, err)
		}
	}
}

func FuzzParseCatalog(f *testing.F) {
	f.Add([]byte(`{"domains":[{"name":"a","tools":[{"name":"x","description":"Do it. Now.","inputSchema":{"type":"object","properties":{"p":{"type":"string"}}}}]}]}`))
	f.Add([]byte(`{"domains":[{"name":"a-b_c","tools":[{"name":"x.y/z","inputSchema":{"type":"object"},"group":"g","tags":["t"]}]}]}`))
	f.Add([]byte(`{"domains":[]}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		specs, err := ParseCatalog("fuzz", data)
		if err != nil {
			return
		}
		cat, err := NewCatalog(specs)
		if err != nil {
			var ce *CatalogError
			if !errors.As(err, &ce) {
				t.Fatalf("NewCatalog error %T is not a *CatalogError: %v", err, err)
			}
			return
		}
		seen := map[string]bool{}
		for _, tool := range cat.Tools() {
			if !strictName.MatchString(tool.QualifiedName) {
				t.Fatalf("qualified name %q is not valid", tool.QualifiedName)
			}
			if seen[tool.QualifiedName] {
				t.Fatalf("qualified name %q is not unique", tool.QualifiedName)
			}
			seen[tool.QualifiedName] = true
			if utf8.RuneCountInString(tool.Summary) > MaxSummary {
				t.Fatalf("summary %q is too long", tool.Summary)
			}
			if cat.Tool(tool.QualifiedName) != tool {
				t.Fatalf("Tool(%q) does not find the tool", tool.QualifiedName)
			}
		}
	})
}

// TestSpecsRebuildTheCatalog: a catalog built from Specs() has the same
// tools and hash.
// TestToolState: "enabled": false and "deprecated" (true or a string)
// reach the tool without changing its content hash, and survive Specs.
func TestToolState(t *testing.T) {
	plain := `{"domains":[{"name":"a","tools":[{"name":"x","inputSchema":{"type":"object"}},{"name":"y","inputSchema":{"type":"object"}},{"name":"z","inputSchema":{"type":"object"}}]}]}`
	withState := `{"domains":[{"name":"a","tools":[{"name":"x","inputSchema":{"type":"object"},"enabled":false},{"name":"y","inputSchema":{"type":"object"},"deprecated":true},{"name":"z","inputSchema":{"type":"object"},"enabled":true,"deprecated":" use a__x "}]}]}`
	a, b := mustCatalog(t, plain), mustCatalog(t, withState)
	for _, tc := range []struct {
		name       string
		disabled   bool
		deprecated string
	}{{"a__x", true, ""}, {"a__y", false, DeprecatedTrue}, {"a__z", false, "use a__x"}} {
		tl := b.Tool(tc.name)
		if tl.Disabled != tc.disabled || tl.Deprecated != tc.deprecated {
			t.Errorf("%s: disabled %v, deprecated %q; want %v, %q", tc.name, tl.Disabled, tl.Deprecated, tc.disabled, tc.deprecated)
		}
		if tl.Hash != a.Tool(tc.name).Hash {
			t.Errorf("%s: the state changed the content hash", tc.name)
		}
	}
	again, err := NewCatalog(b.Specs())
	if err != nil {
		t.Fatal(err)
	}
	if tl := again.Tool("a__x"); !tl.Disabled {
		t.Error("Specs lost enabled: false")
	}
	if js, _ := json.Marshal(b.Specs()[0].Tools[1]); !strings.Contains(string(js), `"deprecated":true`) {
		t.Errorf("deprecated true encodes as %s", js)
	}
}

func TestSpecsRebuildTheCatalog(t *testing.T) {
	cat, err := BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	again, err := NewCatalog(cat.Specs())
	if err != nil {
		t.Fatal(err)
	}
	if again.Hash() != cat.Hash() || again.Len() != cat.Len() {
		t.Errorf("rebuilt catalog: %d tools, hash %s; want %d, %s", again.Len(), again.Hash(), cat.Len(), cat.Hash())
	}
}

// TestCatalogHashLines: the catalog hash is that of its tools' lines
// "qualified name=hash" sorted and joined, names that begin with
// another's included ('=' sorts after '-' and digits, before letters
// and '_').
func TestCatalogHashLines(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	const alphabet = "ab0-_Z"
	for round := 0; round < 200; round++ {
		var tools []*Tool
		seen := map[string]bool{}
		for i := r.Intn(40); i >= 0; i-- {
			name := "d__"
			for k := r.Intn(4); k >= 0; k-- {
				name += string(alphabet[r.Intn(len(alphabet))])
			}
			if seen[name] {
				continue
			}
			seen[name] = true
			tools = append(tools, &Tool{QualifiedName: name, Hash: fmt.Sprintf("%x", r.Intn(1<<20))})
		}
		var lines []string
		for _, tl := range tools {
			lines = append(lines, tl.QualifiedName+"="+tl.Hash)
		}
		sort.Strings(lines)
		sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
		if got, want := catalogHash(tools), hex.EncodeToString(sum[:16]); got != want {
			t.Fatalf("round %d: catalogHash = %s, want %s (lines %q)", round, got, want, lines)
		}
	}
}

// TestNewCatalogSkipping: a lenient domain that cannot be built is left
// out with its error, the others kept; a strict one fails the build.
func TestNewCatalogSkipping(t *testing.T) {
	obj := json.RawMessage(`{"type":"object"}`)
	good := DomainSpec{Name: "good", Tools: []ToolSpec{{Name: "a", InputSchema: obj}}}
	other := DomainSpec{Name: "other", Tools: []ToolSpec{{Name: "b", InputSchema: obj}}}
	bad := DomainSpec{Name: "Bad Name", Tools: []ToolSpec{{Name: "c", InputSchema: obj}}}
	for _, tc := range []struct {
		name            string
		strict, lenient []DomainSpec
		wantTools       []string
		wantSkipped     int
		wantErr         bool
	}{
		{"all valid", []DomainSpec{good}, []DomainSpec{other}, []string{"good__a", "other__b"}, 0, false},
		{"bad lenient domain left out", []DomainSpec{good}, []DomainSpec{bad, other}, []string{"good__a", "other__b"}, 1, false},
		{"bad strict domain fails", []DomainSpec{bad}, []DomainSpec{other}, nil, 0, true},
		{"only lenient, one bad", nil, []DomainSpec{bad}, nil, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat, skipped, err := NewCatalogSkipping(tc.strict, tc.lenient, nil)
			if (err != nil) != tc.wantErr || len(skipped) != tc.wantSkipped {
				t.Fatalf("NewCatalogSkipping = skipped %v, err %v; want %d skipped, error %v", skipped, err, tc.wantSkipped, tc.wantErr)
			}
			if err != nil {
				return
			}
			var names []string
			for _, tl := range cat.Tools() {
				names = append(names, tl.QualifiedName)
			}
			if strings.Join(names, ",") != strings.Join(tc.wantTools, ",") {
				t.Errorf("tools = %v, want %v", names, tc.wantTools)
			}
		})
	}
}
