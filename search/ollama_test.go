package search

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolscout/toolscout/embed"
)

// TestOllamaPath runs the engine on the Ollama embedder against a server
// that speaks /api/embed as Ollama does, then takes the server away.
func TestOllamaPath(t *testing.T) {
	var texts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		embs := make([][]float32, len(req.Input))
		for i, in := range req.Input {
			if !strings.HasPrefix(in, "search_query: ") && !strings.HasPrefix(in, "search_document: ") {
				w.WriteHeader(http.StatusBadRequest)
				json.NewEncoder(w).Encode(map[string]string{"error": "input without the nomic prompt: " + in})
				return
			}
			v := make([]float32, 32)
			for _, word := range strings.Fields(strings.ToLower(in)) {
				h := fnv.New32a()
				h.Write([]byte(strings.Trim(word, ".,:?")))
				v[h.Sum32()%32]++
			}
			embs[i] = v
		}
		texts.Add(int32(len(req.Input)))
		json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "embeddings": embs})
	}))
	u, _ := url.Parse(srv.URL)
	o := embed.NewOllama(embed.OllamaOptions{Host: u})
	eng := newTestEngine(t, o)
	if n := texts.Load(); n < 7 {
		t.Fatalf("%d texts embedded while indexing, want the 7 tools (and the check)", n)
	}
	resp, err := eng.Search(context.Background(), Request{Query: "weather forecast for a city", Mode: Semantic, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Embedder != "ollama/nomic-embed-text" || resp.Mode != Semantic || resp.Results[0].Tool.QualifiedName != "weather__get_forecast" {
		t.Errorf("semantic search through ollama = %+v", resp)
	}
	srv.Close()
	resp, err = eng.Search(context.Background(), Request{Query: "send a chat message", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Mode != Keyword || !strings.Contains(resp.Notice, "ollama serve") || resp.Results[0].Tool.QualifiedName != "slack__post_message" {
		t.Errorf("with ollama gone: mode %s, notice %q, results %v", resp.Mode, resp.Notice, names(resp.Results))
	}
}
