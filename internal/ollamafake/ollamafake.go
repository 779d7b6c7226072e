// Package ollamafake is an httptest server that speaks Ollama v0.17.4's
// /api/embed, /api/tags and /api/show byte for byte (request and response
// shapes, status codes, error bodies), for tests of code that talks to
// Ollama where no Ollama can run.
package ollamafake

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"
	"sync"
)

// Server speaks Ollama v0.17.4's /api/embed, /api/tags and /api/show: the
// same request and response bodies, status codes and error bodies.
type Server struct {
	// Models maps the model names /api/embed accepts to their dimension.
	Models map[string]int
	// Installed lists the models /api/tags returns ("name:tag") with the
	// capabilities /api/show reports for each.
	Installed map[string][]string
	// Vector, when set, makes each embedding (default: a unit vector that
	// depends on the input's length).
	Vector func(input string, dims int) []float32

	mu    sync.Mutex
	reqs  []EmbedRequest
	shows int
}

// Requests returns the /api/embed requests received so far.
func (f *Server) Requests() []EmbedRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]EmbedRequest(nil), f.reqs...)
}

// Shows returns the number of /api/show requests received so far.
func (f *Server) Shows() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.shows
}

// BagOfWords is a Vector function: words hashed into dims buckets, so that
// texts sharing words come out similar.
func BagOfWords(input string, dims int) []float32 {
	v := make([]float32, dims)
	for _, w := range strings.Fields(strings.ToLower(input)) {
		h := fnv.New32a()
		h.Write([]byte(strings.Trim(w, ".,:;?!")))
		v[h.Sum32()%uint32(dims)]++
	}
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		v[0] = 1
		return v
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

// EmbedRequest is the body of an /api/embed request.
type EmbedRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Truncate   *bool    `json:"truncate"`
	KeepAlive  any      `json:"keep_alive"`
	Dimensions int      `json:"dimensions"`
}

// ServeHTTP answers the three endpoints; anything else is 404.
func (f *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	writeJSON := func(code int, v any) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	switch {
	case r.URL.Path == "/api/tags" && r.Method == http.MethodGet:
		f.tags(writeJSON)
		return
	case r.URL.Path == "/api/show" && r.Method == http.MethodPost:
		f.show(r, writeJSON)
		return
	case r.URL.Path != "/api/embed" || r.Method != http.MethodPost:
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req EmbedRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	if req.Model == "" {
		writeJSON(http.StatusInternalServerError, map[string]string{"error": "model is required"})
		return
	}
	dims, ok := f.Models[req.Model]
	if !ok {
		writeJSON(http.StatusNotFound, map[string]string{"error": fmt.Sprintf("model %q not found, try pulling it first", req.Model)})
		return
	}
	for _, in := range req.Input {
		if len(in) > 2000 && req.Truncate != nil && !*req.Truncate {
			writeJSON(http.StatusBadRequest, map[string]string{"error": "the input length exceeds the context length"})
			return
		}
	}
	if req.Dimensions > 0 {
		dims = req.Dimensions
	}
	embs := make([][]float32, len(req.Input))
	for i, in := range req.Input {
		if f.Vector != nil {
			embs[i] = f.Vector(in, dims)
			continue
		}
		v := make([]float32, dims)
		v[len(in)%dims] = 1 // unit vector, as Ollama returns L2-normalised ones
		embs[i] = v
	}
	writeJSON(http.StatusOK, map[string]any{
		"model": req.Model, "embeddings": embs,
		"total_duration": 14143917, "load_duration": 1019500, "prompt_eval_count": 8,
	})
}

// tags answers GET /api/tags as Ollama v0.17.4's ListHandler does.
func (f *Server) tags(writeJSON func(int, any)) {
	names := make([]string, 0, len(f.Installed))
	for n := range f.Installed {
		names = append(names, n)
	}
	sort.Strings(names)
	models := []map[string]any{}
	for _, n := range names {
		models = append(models, map[string]any{
			"name": n, "model": n, "modified_at": "2026-11-01T10:00:00.000000000Z",
			"size": 274302450, "digest": "0a109f422b47e3a30ba2b10eca18548e944e8a23073ee3f3e947efcf3c45e59f",
			"details": map[string]any{"parent_model": "", "format": "gguf", "family": "bert", "families": []string{"bert"},
				"parameter_size": "137M", "quantization_level": "F16"},
		})
	}
	writeJSON(http.StatusOK, map[string]any{"models": models})
}

// show answers POST /api/show as Ollama v0.17.4's ShowHandler does,
// including its 400 and 404 bodies.
func (f *Server) show(r *http.Request, writeJSON func(int, any)) {
	f.mu.Lock()
	f.shows++
	f.mu.Unlock()
	var req struct {
		Model string `json:"model"`
		Name  string `json:"name"`
	}
	body, _ := io.ReadAll(r.Body)
	if len(body) == 0 {
		writeJSON(http.StatusBadRequest, map[string]string{"error": "missing request body"})
		return
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	name := req.Model
	if name == "" {
		name = req.Name
	}
	if name == "" {
		writeJSON(http.StatusBadRequest, map[string]string{"error": "model is required"})
		return
	}
	full := name
	if !strings.Contains(full, ":") {
		full += ":latest"
	}
	caps, ok := f.Installed[full]
	if !ok {
		writeJSON(http.StatusNotFound, map[string]string{"error": fmt.Sprintf("model '%s' not found", name)})
		return
	}
	writeJSON(http.StatusOK, map[string]any{
		"license": "Apache License 2.0", "modelfile": "FROM /models/blob\n", "parameters": "num_ctx 8192",
		"details":      map[string]any{"parent_model": "", "format": "gguf", "family": "bert", "families": []string{"bert"}, "parameter_size": "137M", "quantization_level": "F16"},
		"model_info":   map[string]any{"general.architecture": "bert", "bert.embedding_length": 768},
		"capabilities": caps,
		"modified_at":  "2026-11-01T10:00:00.000000000Z",
	})
}
