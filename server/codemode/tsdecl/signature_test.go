package tsdecl

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSignatures: each tool's call on one line, without comments, with
// the identifiers Declare gives; "" for a signature over the bound.
func TestSignatures(t *testing.T) {
	ref := map[string]Tool{}
	for _, tl := range referenceTools(t) {
		ref[tl.Name] = tl
	}
	long := Tool{Domain: "big", Name: "wide", InputSchema: json.RawMessage(`{"type":"object","properties":{` + wideProps(80) + `}}`)}
	tests := []struct {
		name  string
		tools []Tool
		opts  Options
		max   int
		want  []string
	}{
		{"nested arrays and an output schema", []Tool{ref["open_nodes"]}, Options{}, 0,
			[]string{"tools.memory.open_nodes(args: { names: string[] }): Promise<{ entities: Array<{ name: string; entityType: string; observations: string[] }>; relations: Array<{ from: string; to: string; relationType: string }> }>"}},
		{"a name made an identifier, no output schema", []Tool{ref["get-sum"]}, Options{}, 0,
			[]string{"tools.everything.get_sum(args: { a: number; b: number }): Promise<unknown>"}},
		{"optional arguments and an enum", []Tool{ref["list_directory_with_sizes"], ref["get-tiny-image"]}, Options{}, 0,
			[]string{`tools.filesystem.list_directory_with_sizes(args: { path: string; sortBy?: "name" | "size" }): Promise<{ content: string }>`,
				"tools.everything.get_tiny_image(args?: {}): Promise<unknown>"}},
		{"an identifier another tool of the domain claims first", []Tool{{Domain: "d", Name: "a-b", InputSchema: json.RawMessage(`{"type":"object"}`)}},
			Options{Names: map[string][]string{"d": {"a_b", "a-b"}}}, 0,
			[]string{"tools.d.a_b_2(args?: { [key: string]: unknown }): Promise<unknown>"}},
		{"over the bound", []Tool{long, ref["get-sum"]}, Options{}, 0,
			[]string{"", "tools.everything.get_sum(args: { a: number; b: number }): Promise<unknown>"}},
		{"a smaller bound", []Tool{ref["get-sum"]}, Options{}, 40, []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Signatures(tt.tools, tt.opts, tt.max)
			if len(got) != len(tt.want) {
				t.Fatalf("Signatures = %d signatures, want %d", len(got), len(tt.want))
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("Signatures(%s)[%d] =\n%s\nwant\n%s", tt.name, i, got[i], tt.want[i])
				}
			}
		})
	}
}

func wideProps(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"property_number_` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + `":{"type":"string"}`)
	}
	return b.String()
}
