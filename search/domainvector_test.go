package search

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolscout/toolscout/embed"
)

// TestDescriptionReachesSemantic: a description added to the memory
// server brings its tools higher in the semantic list of a request that
// names what the server is for, with the shipped weight of the built-in
// embedder; turned off (domain_vector -1) the description changes
// nothing there.
func TestDescriptionReachesSemantic(t *testing.T) {
	plain, described := describedEngine(t, ""), describedEngine(t, memoryDescription)
	const q = "what is stored about Bob?"
	search := func(e *Engine, p *Params) []Result {
		t.Helper()
		resp, err := e.Search(context.Background(), Request{Query: q, Mode: Semantic, Limit: 10, Params: p})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Results
	}
	before, after := search(plain, nil), search(described, nil)
	b, a := firstOf(before, "memory"), firstOf(after, "memory")
	if a == 0 || b != 0 && a >= b {
		t.Errorf("Search(%q, semantic): first memory tool at %d with the description (%v), %d without (%v); want it higher",
			q, a, names(after), b, names(before))
	}
	off := &Params{DomainVector: Off}
	if b, a := names(search(plain, off)), names(search(described, off)); !slices.Equal(a, b) {
		t.Errorf("Search(%q, semantic, domain_vector -1) = %v with the description, %v without; want the same", q, a, b)
	}
}

// TestDomainVectorBounded: a server described in every other server's
// words takes none of the requests those servers' tools match in the
// semantic list, at the shipped weight and at twice it (a weight of 50
// does: the test can fail).
func TestDomainVectorBounded(t *testing.T) {
	const stuffed = "Everything you need: read, write, edit, move, list and search files and directories, echo strings, environment variables, sums of numbers, images, resources, logging and long running operations"
	described := describedEngine(t, stuffed)
	for _, w := range []float64{DefaultDomainVector("builtin"), 2 * DefaultDomainVector("builtin")} {
		p := Params{DomainVector: w}
		for _, q := range []string{
			"read the contents of a text file",
			"rename a file",
			"list the files in a directory",
			"create a new directory",
			"echo back a string",
			"add two numbers",
			"show the environment variables",
		} {
			for _, mode := range []Mode{Semantic, Hybrid} {
				resp, err := described.Search(context.Background(), Request{Query: q, Mode: mode, Limit: 10, Params: &p})
				if err != nil {
					t.Fatal(err)
				}
				if len(resp.Results) == 0 || resp.Results[0].Tool.Domain == "memory" {
					t.Errorf("Search(%q, %s, domain_vector %g) = %v; want a filesystem or everything tool first", q, mode, w, names(resp.Results))
				}
			}
		}
	}
}

// hashedOllama is a server that speaks Ollama's /api/embed with hashed
// bag-of-words vectors (what two texts share is their similarity), and
// fails every request while down is set.
func hashedOllama(t *testing.T, down *atomic.Bool) *embed.Ollama {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, `{"error":"server down"}`, http.StatusServiceUnavailable)
			return
		}
		var req struct {
			Input []string `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		embs := make([][]float32, len(req.Input))
		for i, in := range req.Input {
			v := make([]float32, 64)
			for _, word := range strings.Fields(strings.ToLower(in)) {
				h := fnv.New32a()
				h.Write([]byte(strings.Trim(word, ".,:?!")))
				v[h.Sum32()%64]++
			}
			embs[i] = v
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		json.NewEncoder(w).Encode(map[string]any{"model": "nomic-embed-text", "embeddings": embs})
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return embed.NewOllama(embed.OllamaOptions{Host: u})
}

// TestDomainVectorOllama: with an Ollama embedder the domain texts are
// embedded through the server; a description then lifts the memory
// tools above the other servers' for a request about the server's
// purpose when domain_vector is set, changes nothing at Ollama's shipped weight (0), and a server that
// fails while the domain texts are embedded turns the request into a
// keyword one with a notice, not an error.
func TestDomainVectorOllama(t *testing.T) {
	var down atomic.Bool
	plain := describedEngineWith(t, "", hashedOllama(t, &down))
	described := describedEngineWith(t, memoryDescription, hashedOllama(t, &down))
	const q = "what is stored about Bob?"
	search := func(e *Engine, p *Params) *Response {
		t.Helper()
		resp, err := e.Search(context.Background(), Request{Query: q, Mode: Semantic, Limit: 10, Params: p})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	on := &Params{DomainVector: 0.5}
	before, after := search(plain, on).Results, search(described, on).Results
	if b, a := leading(before, "memory"), leading(after, "memory"); a <= b {
		t.Errorf("Search(%q, semantic, ollama, domain_vector 0.5): %d memory tools lead with the description (%v), %d without (%v); want more",
			q, a, names(after), b, names(before))
	}
	if b, a := names(search(plain, nil).Results), names(search(described, nil).Results); !slices.Equal(a, b) {
		t.Errorf("Search(%q, semantic, ollama, shipped weight %g) = %v with the description, %v without; want the same",
			q, DefaultDomainVector("ollama"), a, b)
	}
	// A new build embeds its domain texts again: the server is down by then.
	fresh := describedEngineWith(t, memoryDescription, hashedOllama(t, &down))
	down.Store(true)
	resp := search(fresh, on)
	if resp.Mode != Keyword || !strings.Contains(resp.Notice, "ranked by keyword") {
		t.Errorf("Search(%q) with the Ollama server down = mode %s, notice %q; want keyword ranking and a notice", q, resp.Mode, resp.Notice)
	}
}

// leading returns how many results lead rs before the first that is not
// in domain.
func leading(rs []Result, domain string) int {
	for i, r := range rs {
		if r.Tool.Domain != domain {
			return i
		}
	}
	return len(rs)
}
