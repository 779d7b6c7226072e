package tsdecl

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolscout/toolscout/index"
)

var update = flag.Bool("update", false, "rewrite the golden declarations in testdata/ from this run")

// goldenTool is a tool as testdata/reference.json holds it.
type goldenTool struct {
	Domain       string          `json:"domain"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

// builtinPicks are tools of the built-in catalog with enums, arrays,
// nested objects and long descriptions.
var builtinPicks = map[string][]string{
	"github":    {"create_issue", "list_issues", "create_pull_request_review", "push_files"},
	"jira":      {"create_issue"},
	"gcalendar": {"create_event", "find_free_slots"},
}

// TestGolden: the declarations of the reference servers' tools (memory's
// nested arrays of objects and output schemas, everything's enums and
// defaults, the filesystem's deprecated read_file) and of a few tools of
// the built-in catalog are those in testdata/*.d.ts (go test -update
// rewrites them), and are well formed.
func TestGolden(t *testing.T) {
	tests := []struct {
		name  string
		tools func(t *testing.T) []Tool
	}{
		{name: "reference", tools: referenceTools},
		{name: "builtin", tools: builtinTools},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, omitted := Declare(tt.tools(t), Options{})
			if len(omitted) > 0 {
				t.Errorf("Declare(%s) left out %v", tt.name, omitted)
			}
			if err := checkStructure(got); err != nil {
				t.Errorf("Declare(%s): %v", tt.name, err)
			}
			path := filepath.Join("testdata", tt.name+".d.ts")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("Declare(%s) differs from %s (go test -update rewrites it):\n%s", tt.name, path, got)
			}
		})
	}
}

// referenceTools are the tools of testdata/reference.json.
func referenceTools(t *testing.T) []Tool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Tools []goldenTool `json:"tools"`
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	var out []Tool
	for _, g := range ref.Tools {
		tool := Tool{Domain: g.Domain, Name: g.Name, QualifiedName: g.Domain + "__" + g.Name,
			Description: g.Description, InputSchema: g.InputSchema, OutputSchema: g.OutputSchema}
		if g.Name == "read_file" {
			tool.Deprecated = "use read_text_file"
		}
		out = append(out, tool)
	}
	return out
}

// builtinTools are builtinPicks, read from the built-in catalog file.
func builtinTools(t *testing.T) []Tool {
	t.Helper()
	var cat struct {
		Domains []struct {
			Name  string       `json:"name"`
			Tools []goldenTool `json:"tools"`
		} `json:"domains"`
	}
	if err := json.Unmarshal(index.BuiltinCatalogJSON(), &cat); err != nil {
		t.Fatal(err)
	}
	var out []Tool
	for _, d := range cat.Domains {
		for _, g := range d.Tools {
			for _, want := range builtinPicks[d.Name] {
				if g.Name == want {
					out = append(out, Tool{Domain: d.Name, Name: g.Name, QualifiedName: d.Name + "__" + g.Name,
						Description: g.Description, InputSchema: g.InputSchema, OutputSchema: g.OutputSchema})
				}
			}
		}
	}
	if n := len(builtinPicks["github"]) + len(builtinPicks["jira"]) + len(builtinPicks["gcalendar"]); len(out) != n {
		t.Fatalf("found %d of the %d picked tools in the built-in catalog", len(out), n)
	}
	return out
}
