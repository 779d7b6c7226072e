package tsdecl

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

const sumSchema = `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`

// TestDeclare: what a declaration says besides the types (names,
// comments, optional arguments, output types), how names become
// identifiers, and what is left out past MaxBytes.
func TestDeclare(t *testing.T) {
	sum := Tool{Domain: "everything", Name: "get-sum", QualifiedName: "everything__get-sum", Description: "Returns the sum of two numbers", InputSchema: json.RawMessage(sumSchema)}
	tests := []struct {
		name        string
		tools       []Tool
		opts        Options
		want        string
		wantOmitted []string
	}{
		{name: "one tool, output unknown",
			tools: []Tool{sum},
			want: `declare namespace tools.everything {
  /**
   * Returns the sum of two numbers
   * (tool: everything__get-sum)
   */
  function get_sum(args: { a: number; b: number }): Promise<unknown>;
}
`},
		{name: "output schema, optional arguments, no description, no qualified name",
			tools: []Tool{{Domain: "weather", Name: "now", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`),
				OutputSchema: json.RawMessage(`{"type":"object","properties":{"celsius":{"type":"number"}},"required":["celsius"]}`)}},
			want: `declare namespace tools.weather {
  /** (tool: weather/now) */
  function now(args?: { city?: string }): Promise<{ celsius: number }>;
}
`},
		{name: "input schema that is not an object",
			tools: []Tool{{Domain: "d", Name: "f", QualifiedName: "d__f", InputSchema: json.RawMessage(`{"type":"string"}`)}},
			want: `declare namespace tools.d {
  function f(args: string): Promise<unknown>;
}
`},
		{name: "notes, deprecation and examples",
			tools: []Tool{{Domain: "files", Name: "read_file", QualifiedName: "files__read_file", Description: "Read a file.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
				Notes:       []string{"Warning: its description asks to send secrets."},
				Deprecated:  "use read_text_file",
				Examples:    []json.RawMessage{json.RawMessage(`{ "path": "/tmp/a*/b.txt" }`), json.RawMessage(`{"path":"` + strings.Repeat("x", maxExample) + `"}`)}}},
			want: `declare namespace tools.files {
  /**
   * Read a file.
   * Warning: its description asks to send secrets.
   * @deprecated use read_text_file
   * @example
   * await tools.files.read_file({"path":"/tmp/a*\/b.txt"})
   */
  function read_file(args: { path: string }): Promise<unknown>;
}
`},
		{name: "bare deprecation",
			tools: []Tool{{Domain: "d", Name: "old", QualifiedName: "d__old", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`), Deprecated: "deprecated"}},
			want: `declare namespace tools.d {
  /** @deprecated */
  function old(args?: {}): Promise<unknown>;
}
`},
		{name: "domains grouped in the order of their first tool",
			tools: []Tool{
				{Domain: "b", Name: "one", InputSchema: json.RawMessage(`{}`)},
				{Domain: "a", Name: "two", InputSchema: json.RawMessage(`{}`)},
				{Domain: "b", Name: "three", InputSchema: json.RawMessage(`{}`)},
			},
			want: `declare namespace tools.b {
  /** (tool: b/one) */
  function one(args?: unknown): Promise<unknown>;
  /** (tool: b/three) */
  function three(args?: unknown): Promise<unknown>;
}

declare namespace tools.a {
  /** (tool: a/two) */
  function two(args?: unknown): Promise<unknown>;
}
`},
		{name: "colliding names and a domain that is not an identifier",
			tools: []Tool{
				{Domain: "my-server", Name: "get.sum", InputSchema: json.RawMessage(`{}`)},
				{Domain: "my-server", Name: "get-sum", InputSchema: json.RawMessage(`{}`)},
			},
			want: `/** domain "my-server" */
declare namespace tools.my_server {
  /** (tool: my-server/get.sum) */
  function get_sum_2(args?: unknown): Promise<unknown>;
  /** (tool: my-server/get-sum) */
  function get_sum(args?: unknown): Promise<unknown>;
}
`},
		{name: "Names: a tool not declared keeps its identifier",
			tools: []Tool{{Domain: "my-server", Name: "get-sum", InputSchema: json.RawMessage(`{}`)}},
			opts:  Options{Names: map[string][]string{"my-server": {"get_sum", "get-sum"}, "my_server": nil}},
			want: `/** domain "my-server" */
declare namespace tools.my_server_2 {
  /** (tool: my-server/get-sum) */
  function get_sum_2(args?: unknown): Promise<unknown>;
}
`},
		{name: "MaxBytes leaves out what does not fit, and says so",
			tools: []Tool{sum, {Domain: "everything", Name: "echo", QualifiedName: "everything__echo", InputSchema: json.RawMessage(`{}`)}, {Domain: "x", Name: "y", QualifiedName: "x__y", InputSchema: json.RawMessage(`{}`)}},
			opts:  Options{MaxBytes: 125},
			want: `declare namespace tools.everything {
  function echo(args?: unknown): Promise<unknown>;
}

// 2 tools left out to stay within 125 bytes: everything__get-sum, x__y
`,
			wantOmitted: []string{"everything__get-sum", "x__y"}},
		{name: "a property's comment said once",
			tools: []Tool{
				{Domain: "m", Name: "make", QualifiedName: "m__make", InputSchema: json.RawMessage(entitySchema), OutputSchema: json.RawMessage(entitySchema)},
				{Domain: "m", Name: "too_big", QualifiedName: "m__too_big", InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"The id"},"n":{"type":"string","description":"` + strings.Repeat("n", 400) + `"}}}`)},
				{Domain: "m", Name: "find", QualifiedName: "m__find", InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"The entity's name"},"id":{"type":"string","description":"The id"}}}`)},
			},
			opts: Options{MaxBytes: 500},
			want: `declare namespace tools.m {
  function make(args?: {
    /** The entity's name */
    name?: string;
    /** Its kind */
    kind?: string;
  }): Promise<{ name?: string; kind?: string }>;
  function find(args?: {
    name?: string;
    /** The id */
    id?: string;
  }): Promise<unknown>;
}

// 1 tool left out to stay within 500 bytes: m__too_big
`,
			wantOmitted: []string{"m__too_big"}},
		{name: "none", tools: nil, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, omitted := Declare(tt.tools, tt.opts)
			if got != tt.want {
				t.Errorf("Declare =\n%s\nwant\n%s", got, tt.want)
			}
			if !slices.Equal(omitted, tt.wantOmitted) {
				t.Errorf("Declare left out %q, want %q", omitted, tt.wantOmitted)
			}
			if err := checkStructure(got); err != nil {
				t.Errorf("Declare: %v\n%s", err, got)
			}
		})
	}
}

// TestDeclareManyLeftOut: the note names the first tools left out and
// counts the others.
func TestDeclareManyLeftOut(t *testing.T) {
	var tools []Tool
	for i := range 30 {
		tools = append(tools, Tool{Domain: "d", Name: fmt.Sprintf("t%d", i), InputSchema: json.RawMessage(sumSchema)})
	}
	got, omitted := Declare(tools, Options{MaxBytes: 200})
	if len(omitted) != 29 || !strings.HasSuffix(got, "// 29 tools left out to stay within 200 bytes: d/t1, d/t2, d/t3, d/t4, d/t5, d/t6, d/t7, d/t8, d/t9, d/t10, d/t11, d/t12, d/t13, d/t14, d/t15, d/t16, d/t17, d/t18, d/t19, d/t20 and 9 more\n") {
		t.Errorf("Declare of 30 tools in 200 bytes left out %d:\n%s", len(omitted), got)
	}
}

func ExampleDeclare() {
	text, _ := Declare([]Tool{{
		Domain: "memory", Name: "open_nodes", QualifiedName: "memory__open_nodes",
		Description: "Open specific nodes in the knowledge graph by their names",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"names":{"type":"array","items":{"type":"string"}}},"required":["names"]}`),
	}}, Options{})
	fmt.Print(text)
	// Output:
	// declare namespace tools.memory {
	//   /** Open specific nodes in the knowledge graph by their names */
	//   function open_nodes(args: { names: string[] }): Promise<unknown>;
	// }
}

func ExampleIdents() {
	ids := Idents([]string{"get-sum", "get_sum", "delete"})
	fmt.Println(ids["get_sum"], ids["get-sum"], ids["delete"])
	// Output: get_sum get_sum_2 delete_
}

const entitySchema = `{"type":"object","properties":{"name":{"type":"string","description":"The entity's name"},"kind":{"type":"string","description":"Its kind"}}}`
