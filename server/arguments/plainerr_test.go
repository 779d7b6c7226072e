package arguments

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPlainArgumentError(t *testing.T) {
	schema := Decode(map[string]any{
		"type": "object", "required": []string{"repo"}, "additionalProperties": false,
		"properties": map[string]any{
			"repo":  map[string]any{"type": "string", "minLength": 3},
			"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": 100},
			"mode":  map[string]any{"type": "string", "enum": []string{"a", "b"}},
			"tags":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": 2},
			"ratio": map[string]any{"type": "number"},
		},
	})
	tests := []struct{ args, want string }{
		{`{"repo":"octo/x"}`, ""},
		{`{"repo":"octo/x","ratio":1}`, ""},
		{`{}`, "repo is required: add it to the arguments"},
		{`{"repo":"octo/x","limit":500}`, "limit must be at most 100; you sent 500"},
		{`{"repo":"octo/x","limit":0}`, "limit must be at least 1; you sent 0"},
		{`{"repo":"octo/x","limit":2.5}`, "limit must be an integer; you sent 2.5"},
		{`{"repo":"octo/x","limit":"5"}`, `limit must be an integer; you sent "5"`},
		{`{"repo":"octo/x","mode":"c"}`, `mode must be one of a, b; you sent "c"`},
		{`{"repo":"ab"}`, `repo must be at least 3 characters long; you sent "ab"`},
		{`{"repo":"octo/x","tags":["a",2]}`, `tags[1] must be a string; you sent 2; e.g. tags: ["bug"]`},
		{`{"repo":"octo/x","tags":["a","b","c"]}`, "tags must have at most 2 items; you sent 3"},
		{`{"repo":"octo/x","color":"red"}`, `unknown argument "color": valid arguments are limit, mode, ratio, repo, tags`},
		{`{"repo":{"owner":"octo"}}`, "repo must be a string; you sent an object of 1 property"},
	}
	for _, tc := range tests {
		var args map[string]any
		if err := json.Unmarshal([]byte(tc.args), &args); err != nil {
			t.Fatal(err)
		}
		if got := plainArgumentError(schema, args); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.args, got, tc.want)
		}
	}
	// A huge value is echoed in at most a few dozen bytes.
	huge := map[string]any{"repo": "octo/x", "mode": strings.Repeat("x", 100<<10)}
	if got := plainArgumentError(schema, huge); len(got) > 200 || !strings.Contains(got, "102400 bytes") {
		t.Errorf("huge enum value: %d bytes: %.200s", len(got), got)
	}
}
