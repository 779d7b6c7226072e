package arguments

import (
	"encoding/json"
	"testing"
)

func TestCompact(t *testing.T) {
	tests := []struct {
		name, schema string
		optional     int    // Schema's argument
		want         string // the compact schema's JSON
		more         int    // Optional()
	}{
		{"required only: types, a short enum, an array's item type; no descriptions, formats or defaults",
			`{"type":"object","$defs":{"x":{"type":"string"}},"properties":{
			   "repo":{"type":"string","description":"owner/name","pattern":"^[^/]+/[^/]+$"},
			   "state":{"type":"string","enum":["open","closed"],"default":"open"},
			   "labels":{"type":"array","items":{"type":"string","maxLength":50},"description":"labels to add"},
			   "meta":{"anyOf":[{"type":"string"},{"type":"object"},{"type":"string"}]}},
			 "required":["repo","labels"]}`,
			0, `{"properties":{"labels":{"items":{"type":"string"},"type":"array"},"repo":{"type":"string"}},"required":["repo","labels"],"type":"object"}`, 2},
		{"optional ones in the order the schema declares them",
			`{"type":"object","properties":{"z":{"type":"integer"},"q":{"type":"string"},"a":{"type":"boolean"}},"required":["q"]}`,
			1, `{"properties":{"q":{"type":"string"},"z":{"type":"integer"}},"required":["q"],"type":"object"}`, 2},
		{"every optional one, anyOf's types, nested arrays, items as the whole schema has them",
			`{"type":"object","properties":{"meta":{"anyOf":[{"type":"string"},{"type":"object"},{"type":"string"}]},"rows":{"type":"array","items":{"type":"array","items":{"type":"number","minimum":0}}},"any":{"type":"array"},"refs":{"type":"array","items":{"$ref":"#/$defs/x"}}}}`,
			-1, `{"properties":{"any":{"type":"array"},"meta":{"type":["string","object"]},"refs":{"items":{},"type":"array"},"rows":{"items":{"items":{"type":"number"},"type":"array"},"type":"array"}},"type":"object"}`, 4},
		{"a long enum keeps its type only",
			`{"type":"object","properties":{"tz":{"type":"string","enum":["a","b","c","d","e","f","g","h","i"]}},"required":["tz"]}`,
			0, `{"properties":{"tz":{"type":"string"}},"required":["tz"],"type":"object"}`, 0},
		{"a required name without a property stays required",
			`{"type":"object","required":["id"]}`,
			0, `{"required":["id"],"type":"object"}`, 0},
		{"no properties", `{"type":"object","properties":{}}`, -1, `{"type":"object"}`, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Compact(json.RawMessage(tc.schema))
			got, err := json.Marshal(c.Schema(tc.optional))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want || c.Optional() != tc.more {
				t.Errorf("Compact(%s).Schema(%d) = %s (%d optional), want %s (%d)", tc.schema, tc.optional, got, c.Optional(), tc.want, tc.more)
			}
		})
	}
}
