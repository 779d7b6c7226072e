package arguments

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
)

func TestExamples(t *testing.T) {
	tests := []struct {
		name, schema, source string
		want                 map[string]any // a subset of the first example
	}{
		{"schema examples, the invalid one skipped",
			`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"examples":[{"q":7},{"q":"weather in Oslo"}]}`,
			"schema", map[string]any{"q": "weather in Oslo"}},
		{"defaults and property examples",
			`{"type":"object","properties":{"city":{"type":"string","examples":["Oslo"]},"units":{"type":"string","enum":["metric","imperial"],"default":"metric"},"days":{"type":"integer","minimum":1}},"required":["city","days"]}`,
			"defaults", map[string]any{"city": "Oslo", "units": "metric", "days": float64(30)}},
		{"synthesized from types",
			`{"type":"object","properties":{"to":{"type":"string","format":"email"},"when":{"type":"string","format":"date-time"},"count":{"type":"integer","minimum":3,"maximum":9},"kind":{"enum":["a","b"]},"opts":{"type":"object","properties":{"deep":{"type":"boolean"}},"required":["deep"]},"tags":{"type":"array","items":{"type":"string"},"minItems":1},"note":{"type":"string"}},"required":["to","when","count","kind","opts","tags"]}`,
			"synthesized", map[string]any{"to": "alice@acme.io", "when": "2026-03-14T09:30:00Z", "count": float64(9), "kind": "a"}},
		{"named by the properties' names and descriptions",
			`{"type":"object","properties":{"repo":{"type":"string"},"file_path":{"type":"string"},"per_page":{"type":"integer","maximum":5},"city":{"type":"string","description":"City name, e.g. Lyon"},"branch":{"type":"string","description":"for example: 'develop'"},"issue_number":{"type":"integer"},"labels":{"type":"array","items":{"type":"string"},"minItems":1},"zzz":{"type":"string"}},"required":["repo","file_path","per_page","city","branch","issue_number","labels","zzz"]}`,
			"synthesized", map[string]any{"repo": "octocat/hello-world", "file_path": "/home/alice/projects/notes.md", "per_page": float64(5), "city": "Lyon", "branch": "develop", "issue_number": float64(42), "labels": "[bug]", "zzz": "Acme Corp"}},
		{"kinds by name: image, object key, issue key, token, by description",
			`{"type":"object","properties":{"image":{"type":"string"},"key":{"type":"string"},"issue_key":{"type":"string"},"api_key":{"type":"string"},"destination":{"type":"string","description":"Destination directory"},"calendars":{"type":"array","items":{"type":"string"}},"state":{"type":"string","description":"Two-letter US state code"}},"required":["image","key","issue_key","api_key","destination","state","calendars"]}`,
			"synthesized", map[string]any{"image": "nginx:1.27", "key": "reports/2026-03/summary.csv", "issue_key": "PROJ-123", "api_key": "tok_9f8e7d6c5b4a", "destination": "/home/alice/projects", "state": "CA", "calendars": "[primary]"}},
		{"a required array gets an item built from its items schema",
			`{"type":"object","properties":{"entities":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"entityType":{"type":"string"}},"required":["name","entityType"]}},"ids":{"type":"array","items":{"type":"string"},"minItems":2}},"required":["entities","ids"]}`,
			"synthesized", map[string]any{"entities": "[map[entityType:person name:Alice Martin]]", "ids": "[a1b2c3d4 a1b2c3d4]"}},
		{"patterns, bounds, timestamps asked for in words",
			`{"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]{3}-[0-9]+$"},"when":{"type":"string","description":"RFC3339 timestamp"},"n":{"type":"number","minimum":0.5,"maximum":0.75}},"required":["code","when","n"]}`,
			"synthesized", map[string]any{"code": "AAA-0", "when": "2026-03-14T09:30:00Z", "n": 0.75}},
		{"placeholder defaults and schema examples are passed over",
			`{"type":"object","properties":{"image":{"type":"string","default":"sample text"},"tag":{"type":"string","examples":["foo","1.27"]}},"required":["image"],"examples":[{"image":"YOUR_IMAGE"}]}`,
			"defaults", map[string]any{"image": "nginx:1.27", "tag": "1.27"}},
		{"no properties", `{"type":"object"}`, "synthesized", map[string]any{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			specs := []index.DomainSpec{{Name: "d", Tools: []index.ToolSpec{{Name: "t", InputSchema: json.RawMessage(tc.schema)}}}}
			cat, err := index.NewCatalog(specs)
			if err != nil {
				t.Fatal(err)
			}
			tool := cat.Tool("d__t")
			exs := Examples(tool)
			if len(exs) == 0 || exs[0].Source != tc.source {
				t.Fatalf("examples = %+v, want a first one from %s", exs, tc.source)
			}
			for _, ex := range exs {
				if err := Validate(tool, ex.Arguments); err != nil {
					t.Errorf("example %v does not validate: %v", ex.Arguments, err)
				}
				if ex.Description == "" {
					t.Errorf("example %v has no description", ex.Arguments)
				}
			}
			got, _ := json.Marshal(exs[0].Arguments)
			var back map[string]any
			json.Unmarshal(got, &back)
			for k, v := range tc.want {
				if fmt.Sprint(back[k]) != fmt.Sprint(v) {
					t.Errorf("%s = %v, want %v (example %s)", k, back[k], v, got)
				}
			}
			if tc.source == "synthesized" && strings.Contains(tc.schema, `"note"`) {
				if _, ok := back["note"]; ok {
					t.Errorf("optional property in a synthesized example: %s", got)
				}
			}
		})
	}
}

// TestExamplesInContext: the tool's name and description shape an
// example's values and its description.
func TestExamplesInContext(t *testing.T) {
	tests := []struct {
		name, tool, description, schema, wantDescription string
		want                                             map[string]any
	}{
		{"a tool of directories takes a directory", "create_directory", "Create a directory, including parents.",
			`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`,
			"Create directory: path /home/alice/projects", map[string]any{"path": "/home/alice/projects"}},
		{"a move goes from one path to another", "move_file", "Move or rename a file.",
			`{"type":"object","properties":{"source":{"type":"string"},"destination":{"type":"string"}},"required":["source","destination"]}`,
			"Move file: source /home/alice/projects/notes.md, destination /home/alice/archive/notes.md",
			map[string]any{"source": "/home/alice/projects/notes.md", "destination": "/home/alice/archive/notes.md"}},
		{"directions go from a place to another", "directions", "Get directions between two places.",
			`{"type":"object","properties":{"origin":{"type":"string"},"destination":{"type":"string"}},"required":["origin","destination"]}`,
			"Directions: origin Paris, destination Lyon", map[string]any{"origin": "Paris", "destination": "Lyon"}},
		{"an argument the tool's name says is given by its value", "pull_image", "Pull an image from a registry.",
			`{"type":"object","properties":{"image":{"type":"string"}},"required":["image"]}`,
			"Pull image: nginx:1.27", map[string]any{"image": "nginx:1.27"}},
		{"no argument to show: the tool's summary", "read_graph", "Read the entire knowledge graph. Returns every entity.",
			`{"type":"object","properties":{"depth":{"type":"integer"}}}`,
			"Read entire knowledge graph", map[string]any{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cat, err := index.NewCatalog([]index.DomainSpec{{Name: "d", Tools: []index.ToolSpec{{Name: tc.tool, Description: tc.description, InputSchema: json.RawMessage(tc.schema)}}}})
			if err != nil {
				t.Fatal(err)
			}
			exs := Examples(cat.Tool("d__" + tc.tool))
			if len(exs) == 0 {
				t.Fatalf("Examples(%s) = none", tc.tool)
			}
			if exs[0].Description != tc.wantDescription {
				t.Errorf("Examples(%s) description = %q, want %q", tc.tool, exs[0].Description, tc.wantDescription)
			}
			for k, v := range tc.want {
				if exs[0].Arguments[k] != v {
					t.Errorf("Examples(%s) %s = %v, want %v", tc.tool, k, exs[0].Arguments[k], v)
				}
			}
		})
	}
}

// TestBuiltinExamples: every example of every tool of the built-in
// catalog is real (checkExamples).
func TestBuiltinExamples(t *testing.T) {
	cat, err := index.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	checkExamples(t, cat)
}

// TestReferenceServerExamples: the same for every tool of the npm
// reference servers, as their tools/list gives them.
func TestReferenceServerExamples(t *testing.T) {
	var specs []index.DomainSpec
	allowed := t.TempDir()
	for _, s := range []struct {
		domain, bin string
		args        []string
	}{
		{"everything", "mcp-server-everything", nil}, {"memory", "mcp-server-memory", nil}, {"files", "mcp-server-filesystem", []string{allowed}},
	} {
		cmd := exec.Command(npmBin(t, s.bin), s.args...)
		cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), "memory.jsonl"))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "examples-test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("start %s: %v", s.bin, err)
		}
		ds := index.DomainSpec{Name: s.domain}
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatalf("%s: tools/list: %v", s.bin, err)
			}
			schema, _ := json.Marshal(tool.InputSchema)
			ds.Tools = append(ds.Tools, index.ToolSpec{Name: tool.Name, Title: tool.Title, Description: tool.Description, InputSchema: schema})
		}
		cs.Close()
		specs = append(specs, ds)
	}
	cat, err := index.NewCatalog(specs)
	if err != nil {
		t.Fatal(err)
	}
	if cat.Len() < 30 {
		t.Fatalf("%d tools from the reference servers, want 30 at least", cat.Len())
	}
	checkExamples(t, cat)
	// The filesystem server's examples, given its allowed folder, stay
	// inside it.
	for _, tool := range cat.Tools() {
		if tool.Domain != "files" {
			continue
		}
		for _, ex := range ExamplesWithin(tool, []string{allowed}) {
			data, _ := json.Marshal(ex.Arguments)
			if err := Validate(tool, ex.Arguments); err != nil {
				t.Errorf("%s: example %s does not validate: %v", tool.QualifiedName, data, err)
			}
			if p := pathOutside(decodedArgs(ex.Arguments), allowed); p != "" {
				t.Errorf("%s: example %s has the path %s outside the allowed folder %s", tool.QualifiedName, data, p, allowed)
			}
		}
	}
}

// pathOutside returns a string of v that is an absolute path outside
// root, or "".
func pathOutside(v any, root string) string {
	switch v := v.(type) {
	case string:
		if filepath.IsAbs(v) && v != root && !strings.HasPrefix(v, root+string(filepath.Separator)) {
			return v
		}
	case map[string]any:
		for _, k := range sortedKeys(v) {
			if p := pathOutside(v[k], root); p != "" {
				return p
			}
		}
	case []any:
		for _, x := range v {
			if p := pathOutside(x, root); p != "" {
				return p
			}
		}
	}
	return ""
}

func npmBin(t *testing.T, name string) string {
	t.Helper()
	p, _ := filepath.Abs(filepath.Join("..", "..", "node_modules", ".bin", name))
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed: run npm ci (make test does)", name)
		}
		t.Skipf("%s is not installed: run npm ci (make test does)", name)
	}
	return p
}

// placeholderRe finds what stands for a value instead of being one.
var placeholderRe = regexp.MustCompile(`(?i)sample text|your_|\b(foo|bar|baz|string|example|test|lorem|ipsum|placeholder)\b`)

// checkExamples fails on a tool without an example, and on an example
// that does not validate against its tool's schema, has no description,
// holds a placeholder word or an empty required array.
func checkExamples(t *testing.T, cat *index.Catalog) {
	t.Helper()
	for _, tool := range cat.Tools() {
		exs := Examples(tool)
		if len(exs) == 0 {
			t.Errorf("%s: no example", tool.QualifiedName)
		}
		var schema map[string]any
		json.Unmarshal(tool.InputSchema(), &schema)
		for _, ex := range exs {
			data, _ := json.Marshal(ex.Arguments)
			if err := Validate(tool, ex.Arguments); err != nil {
				t.Errorf("%s: example %s does not validate: %v", tool.QualifiedName, data, err)
			}
			if strings.TrimSpace(ex.Description) == "" {
				t.Errorf("%s: example %s has no description", tool.QualifiedName, data)
			}
			// The description's words come from the tool's own ("Echoes
			// back the input string"): only the arguments are checked.
			if m := placeholderRe.FindString(string(data)); m != "" {
				t.Errorf("%s: example %s holds the placeholder %q", tool.QualifiedName, data, m)
			}
			if path := emptyRequired(schema, decodedArgs(ex.Arguments), ""); path != "" {
				t.Errorf("%s: example %s has an empty required array or object at %s", tool.QualifiedName, data, path)
			}
			if path := equalRange(decodedArgs(ex.Arguments), ""); path != "" {
				t.Errorf("%s: example %s has a range that ends where it starts at %s", tool.QualifiedName, data, path)
			}
			if cut := cutMidWord(ex.Description, decodedArgs(ex.Arguments)); cut != "" {
				t.Errorf("%s: example description %q cuts %q mid-word", tool.QualifiedName, ex.Description, cut)
			}
		}
	}
}

// cutMidWord returns a string value of v that desc quotes cut inside a
// word (a prefix of it followed by "…" where the value goes on with a
// letter or digit after a letter or digit), or "".
func cutMidWord(desc string, v any) string {
	switch v := v.(type) {
	case string:
		r := []rune(v)
		for n := 1; n < len(r); n++ {
			if wordRune(r[n-1]) && wordRune(r[n]) && strings.Contains(desc, string(r[:n])+"…") {
				return v
			}
		}
	case map[string]any:
		for _, k := range sortedKeys(v) {
			if got := cutMidWord(desc, v[k]); got != "" {
				return got
			}
		}
	case []any:
		for _, x := range v {
			if got := cutMidWord(desc, x); got != "" {
				return got
			}
		}
	}
	return ""
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// emptyRequired returns the path of the first required array or object
// of v that is empty, or of an item of an array that is, or "".
func emptyRequired(schema map[string]any, v any, path string) string {
	switch v := v.(type) {
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		required := requiredSet(schema)
		for _, name := range sortedKeys(v) {
			p, _ := props[name].(map[string]any)
			if required[name] && isEmpty(v[name]) {
				return path + "/" + name
			}
			if got := emptyRequired(p, v[name], path+"/"+name); got != "" {
				return got
			}
		}
	case []any:
		items, _ := schema["items"].(map[string]any)
		for i, x := range v {
			if isEmpty(x) {
				return fmt.Sprintf("%s/%d", path, i)
			}
			if got := emptyRequired(items, x, fmt.Sprintf("%s/%d", path, i)); got != "" {
				return got
			}
		}
	}
	return ""
}

func isEmpty(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}

// rangeEnds are the (start, end) property names checked by equalRange.
var rangeEnds = [][2]string{{"start", "end"}, {"startTime", "endTime"}, {"start_time", "end_time"}, {"start_date", "end_date"},
	{"startDate", "endDate"}, {"time_min", "time_max"}, {"timeMin", "timeMax"}, {"since", "until"}, {"from", "to"}, {"min", "max"}}

// equalRange returns the path of the first object of v whose start and
// end of a range hold the same value, or "".
func equalRange(v any, path string) string {
	switch v := v.(type) {
	case map[string]any:
		for _, r := range rangeEnds {
			a, okA := v[r[0]]
			b, okB := v[r[1]]
			if okA && okB && fmt.Sprint(a) == fmt.Sprint(b) {
				return path + "/" + r[1]
			}
		}
		for _, name := range sortedKeys(v) {
			if got := equalRange(v[name], path+"/"+name); got != "" {
				return got
			}
		}
	case []any:
		for i, x := range v {
			if got := equalRange(x, fmt.Sprintf("%s/%d", path, i)); got != "" {
				return got
			}
		}
	}
	return ""
}
