package tsdecl

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzDeclare: any schemas, names and description give well-formed
// declarations within MaxBytes (and the note), without a panic, in
// bounded time.
func FuzzDeclare(f *testing.F) {
	seeds := []string{
		`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`,
		`{"$ref":"#","properties":{"x":{"$ref":"#/properties"}}}`,
		`{"$ref":"#/$defs/a","$defs":{"a":{"anyOf":[{"$ref":"#/$defs/b"},{"$ref":"#/$defs/b"}]},"b":{"allOf":[{"$ref":"#/$defs/a"}]}}}`,
		`{"type":["object","array"],"items":[{"const":{"a":1}}],"additionalProperties":{"enum":["*/",1e400,-0]}}`,
		`{"properties":{"*/":{"description":"*/ /* \u2028 \"","default":"*/"}},"patternProperties":{"":false}}`,
		`{"oneOf":[],"allOf":[false],"nullable":true}`,
		`[{"type":"string"}]`,
		`nonsense`,
	}
	if b, err := os.ReadFile(filepath.Join("testdata", "reference.json")); err == nil {
		var ref struct {
			Tools []goldenTool `json:"tools"`
		}
		if json.Unmarshal(b, &ref) == nil {
			for _, t := range ref.Tools[:5] {
				seeds = append(seeds, string(t.InputSchema))
			}
		}
	}
	for _, s := range seeds {
		f.Add("d-1", "class", "a */ b", s, `{"type":"object"}`, 2000)
	}
	f.Fuzz(func(t *testing.T, domain, name, desc, input, output string, maxBytes int) {
		maxBytes = 1 + abs(maxBytes)%(1<<16)
		tools := []Tool{
			{Domain: domain, Name: name, Description: desc, InputSchema: json.RawMessage(input), OutputSchema: json.RawMessage(output)},
			{Domain: domain, Name: name + "-", QualifiedName: name, InputSchema: json.RawMessage(output), Notes: []string{desc}, Deprecated: desc},
		}
		text, omitted := Declare(tools, Options{MaxBytes: maxBytes})
		body := text
		if len(omitted) > 0 {
			i := strings.LastIndex(text, "// ")
			if i < 0 {
				t.Fatalf("Declare left out %q without a note:\n%s", omitted, text)
			}
			body = text[:i]
		}
		if len(body) > maxBytes+1 { // +1: the blank line before the note
			t.Errorf("Declare = %d bytes of declarations, want at most %d", len(body), maxBytes)
		}
		if err := checkStructure(text); err != nil {
			t.Errorf("Declare: %v\n%s", err, text)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
