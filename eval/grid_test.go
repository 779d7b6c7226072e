package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/search"
)

func TestLoadGrid(t *testing.T) {
	dir := t.TempDir()
	yml := filepath.Join(dir, "grid.yaml")
	os.WriteFile(yml, []byte(`baseline: kw
runs:
  - label: kw
    mode: keyword
  - label: fused
    mode: hybrid
    rrf_k: 30
    semantic_weight: 2
    keyword_weight: 1
    fields: {text: 3}
  - mode: semantic
    embedder: ollama
    model: all-minilm
`), 0o644)
	g, err := LoadGrid(yml)
	if err != nil {
		t.Fatal(err)
	}
	if g.Baseline != "kw" || len(g.Runs) != 3 || g.Runs[2].Label != "semantic#3" {
		t.Fatalf("grid = %+v", g)
	}
	spec := g.Runs[1].Spec()
	if spec.Mode != search.Hybrid || spec.Params.RRFK != 30 || spec.Params.SemanticWeight != 2 || spec.Params.Fields["text"] != 3 {
		t.Errorf("spec = %+v", spec)
	}
	if g.Runs[2].EmbedderKey() != "ollama:all-minilm" || g.Runs[0].EmbedderKey() != "" {
		t.Errorf("embedder keys %q %q", g.Runs[2].EmbedderKey(), g.Runs[0].EmbedderKey())
	}
	tests := []struct{ name, file, content, want string }{
		{"unknown field", "g.json", `{"runs": [{"mode": "keyword", "rrfk": 1}]}`, "unknown field"},
		{"bad mode", "g.json", `{"runs": [{"mode": "vector"}]}`, "runs[0].mode"},
		{"no runs", "g.json", `{"runs": []}`, "no runs"},
		{"bad baseline", "g.json", `{"baseline": "x", "runs": [{"mode": "keyword"}]}`, `baseline "x"`},
		{"duplicate label", "g.yml", "runs:\n  - {label: a, mode: keyword}\n  - {label: a, mode: hybrid}\n", "used twice"},
		{"bad embedder", "g.yml", "runs:\n  - {mode: semantic, embedder: openai}\n", "runs[0].embedder"},
		{"bad fusion", "g.json", `{"runs": [{"mode": "hybrid", "fusion": "max"}]}`, "runs[0].fusion"},
		{"negative rrf_k", "g.json", `{"runs": [{"mode": "hybrid", "rrf_k": -3}]}`, "runs[0].rrf_k -3: use a value ≥ 0"},
		{"boost below off", "g.json", `{"runs": [{"mode": "hybrid", "exact_boost": -2}]}`, "or -1 to turn it off"},
		{"domain text of 1", "g.json", `{"runs": [{"mode": "keyword", "domain_text": 1}]}`, "runs[0].domain_text 1: use a value below 1"},
		{"field not indexed", "g.yml", "runs:\n  - {mode: keyword, fields: {description: 2}}\n", `keyword field "description": the index holds qname, name, name_words, text, text_exact`},
		{"negative field weight", "g.yml", "runs:\n  - {mode: keyword, fields: {text: -1}}\n", "keyword field text weight -1: use a value ≥ 0"},
	}
	for _, tc := range tests {
		p := filepath.Join(dir, tc.file)
		os.WriteFile(p, []byte(tc.content), 0o644)
		if _, err := LoadGrid(p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: LoadGrid error = %v, want %q", tc.name, err, tc.want)
		}
	}
}
