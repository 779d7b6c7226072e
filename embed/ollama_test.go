package embed

import (
	"context"
	"errors"
	"github.com/toolscout/toolscout/internal/ollamafake"
	"net"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func newFake(t *testing.T) (*ollamafake.Server, *url.URL) {
	f := &ollamafake.Server{Models: map[string]int{"nomic-embed-text:latest": 8, "nomic-embed-text": 8, "all-minilm": 4}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return f, u
}

func TestOllamaEmbed(t *testing.T) {
	ctx := context.Background()
	f, u := newFake(t)
	o := NewOllama(OllamaOptions{Host: u, BatchSize: 2, KeepAlive: 5 * time.Minute})
	if err := o.Check(ctx); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if info := o.Info(); info.Dims != 8 || info.Model != "nomic-embed-text" || info.Provider != "ollama" {
		t.Errorf("Info() = %+v, want ollama/nomic-embed-text with 8 dims", info)
	}
	vecs, err := o.EmbedDocuments(ctx, []string{"a", "bb", "ccc"})
	if err != nil || len(vecs) != 3 || len(vecs[0]) != 8 {
		t.Fatalf("EmbedDocuments = %d vectors, %v", len(vecs), err)
	}
	if _, err := o.EmbedQuery(ctx, "find"); err != nil {
		t.Fatal(err)
	}
	// Check + 2 document batches + 1 query.
	if len(f.Requests()) != 4 {
		t.Fatalf("%d requests, want 4 (check, two batches of at most 2, query)", len(f.Requests()))
	}
	doc, query := f.Requests()[1], f.Requests()[3]
	if len(doc.Input) != 2 || doc.Input[0] != "search_document: a" {
		t.Errorf("document request input = %q, want the search_document: prompt in batches of 2", doc.Input)
	}
	if query.Input[0] != "search_query: find" {
		t.Errorf("query input = %q, want the search_query: prompt", query.Input[0])
	}
	if doc.Truncate == nil || !*doc.Truncate {
		t.Errorf("truncate = %v, want true", doc.Truncate)
	}
	if doc.KeepAlive == nil {
		t.Error("keep_alive not sent")
	}
}

func TestOllamaModelWithoutPrompts(t *testing.T) {
	f, u := newFake(t)
	o := NewOllama(OllamaOptions{Host: u, Model: "all-minilm", Dimensions: 2})
	if _, err := o.EmbedQuery(context.Background(), "plain"); err != nil {
		t.Fatal(err)
	}
	if got := f.Requests()[0]; got.Input[0] != "plain" || got.Dimensions != 2 {
		t.Errorf("request = %+v, want no prompt and dimensions 2", got)
	}
}

func TestOllamaErrors(t *testing.T) {
	ctx := context.Background()
	_, u := newFake(t)

	o := NewOllama(OllamaOptions{Host: u, Model: "x"})
	err := o.Check(ctx)
	if !errors.Is(err, ErrModelNotFound) {
		t.Fatalf("unknown model: %v, want ErrModelNotFound", err)
	}
	if !strings.Contains(err.Error(), "ollama pull x") || !strings.Contains(err.Error(), `model "x" not found, try pulling it first`) {
		t.Errorf("unknown model message %q: want the server's words and `ollama pull x`", err)
	}

	o = NewOllama(OllamaOptions{Host: u, NoTruncate: true})
	_, err = o.EmbedDocuments(ctx, []string{strings.Repeat("long ", 1000)})
	if err == nil || !strings.Contains(err.Error(), "exceeds the context length") || !strings.Contains(err.Error(), "400") {
		t.Errorf("over-long input without truncation: %v, want the server's 400 message", err)
	}

	// Connection refused: a port nobody listens on.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	dead, _ := url.Parse("http://" + addr)
	o = NewOllama(OllamaOptions{Host: dead})
	err = o.Check(ctx)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "ollama serve") {
		t.Errorf("server down: %v, want ErrUnavailable telling to run `ollama serve`", err)
	}
}

func TestParseOllamaHost(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "http://127.0.0.1:11434"},
		{"localhost", "http://localhost:11434"},
		{"http://localhost", "http://localhost:80"},
		{"https://ollama.example", "https://ollama.example:443"},
		{"0.0.0.0:9999", "http://0.0.0.0:9999"},
		{"http://[::1]:8080", "http://[::1]:8080"},
	}
	for _, tc := range tests {
		u, err := ParseOllamaHost(tc.in)
		if err != nil || u.String() != tc.want {
			t.Errorf("ParseOllamaHost(%q) = %v, %v; want %s", tc.in, u, err, tc.want)
		}
	}
	for _, bad := range []string{"ftp://x", "localhost:99999"} {
		if _, err := ParseOllamaHost(bad); err == nil {
			t.Errorf("ParseOllamaHost(%q) accepted a bad value", bad)
		}
	}
}

func TestPrompts(t *testing.T) {
	table := KnownPrompts()
	for _, model := range []string{"nomic-embed-text", "nomic-embed-text:v1.5", "library/mxbai-embed-large:latest", "embeddinggemma", "qwen3-embedding:0.6b", "snowflake-arctic-embed"} {
		p, ok := PromptFor(table, model)
		if !ok || p.Query == "" {
			t.Errorf("PromptFor(%q) = %+v, %v; want a query prompt", model, p, ok)
		}
	}
	if p, ok := PromptFor(table, "all-minilm"); !ok || p != (Prompt{}) {
		t.Errorf("PromptFor(all-minilm) = %+v, %v; want known with no prompt", p, ok)
	}
	model, p, err := ParsePrompt("my-model=q: |d: ")
	if err != nil || model != "my-model" || p.Query != "q: " || p.Document != "d: " {
		t.Errorf("ParsePrompt = %q, %+v, %v", model, p, err)
	}
	if _, _, err := ParsePrompt("no-equals"); err == nil {
		t.Error("ParsePrompt accepted a value without '='")
	}
}

// TestOllamaLive runs against a real Ollama when OLLAMA_HOST answers and
// has the model (TOOLSCOUT_OLLAMA_MODEL, default nomic-embed-text).
func TestOllamaLive(t *testing.T) {
	hostEnv := os.Getenv("OLLAMA_HOST")
	if hostEnv == "" {
		t.Skip("OLLAMA_HOST not set")
	}
	u, err := ParseOllamaHost(hostEnv)
	if err != nil {
		t.Fatal(err)
	}
	model := os.Getenv("TOOLSCOUT_OLLAMA_MODEL")
	o := NewOllama(OllamaOptions{Host: u, Model: model})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := o.Check(ctx); errors.Is(err, ErrUnavailable) {
		t.Skipf("ollama at %s does not answer: %v", u, err)
	} else if err != nil {
		t.Fatal(err)
	}
	docs, err := o.EmbedDocuments(ctx, []string{"Send a message to a Slack channel.", "Get the weather forecast for a city."})
	if err != nil {
		t.Fatal(err)
	}
	q, err := o.EmbedQuery(ctx, "will it rain tomorrow")
	if err != nil {
		t.Fatal(err)
	}
	if dot(q, docs[1]) <= dot(q, docs[0]) {
		t.Errorf("live model ranks the chat tool above the weather tool for a weather query")
	}
}

func TestListEmbeddingModels(t *testing.T) {
	ctx := context.Background()
	f, u := newFake(t)
	f.Installed = map[string][]string{
		"nomic-embed-text:latest": {"embedding"},
		"llama3.2:latest":         {"completion", "tools"},
		"tiny-embed:latest":       {"embedding"},
		"qwen3-embedding:0.6b":    {"embedding"},
		"gemma3:4b":               {"completion", "vision"},
	}
	got, err := ListEmbeddingModels(ctx, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"nomic-embed-text", "qwen3-embedding:0.6b", "tiny-embed"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ListEmbeddingModels = %q, want %q", got, want)
	}
	if f.Shows() != 5 {
		t.Errorf("%d /api/show calls, want one per installed model (5)", f.Shows())
	}
	f.Installed = map[string][]string{}
	if got, err := ListEmbeddingModels(ctx, u, nil); err != nil || len(got) != 0 {
		t.Errorf("no models: ListEmbeddingModels = %q, %v; want none", got, err)
	}
	down, _ := url.Parse("http://127.0.0.1:9")
	if _, err := ListEmbeddingModels(ctx, down, nil); !errors.Is(err, ErrUnavailable) {
		t.Errorf("unreachable server: error %v, want ErrUnavailable", err)
	}
}

func TestChooseOllamaModel(t *testing.T) {
	tests := []struct {
		name                  string
		installed             []string
		requested, configured string
		want                  string
		reason                string
		ok                    bool
	}{
		{"flag wins", []string{"nomic-embed-text"}, "mine", "cfg", "mine", "--model", true},
		{"config next", []string{"nomic-embed-text"}, "", "cfg", "cfg", "configured", true},
		{"preference order", []string{"all-minilm", "mxbai-embed-large", "nomic-embed-text"}, "", "", "mxbai-embed-large", "preferred", true},
		{"preferred with a tag", []string{"aaa-embed", "qwen3-embedding:0.6b"}, "", "", "qwen3-embedding:0.6b", "preferred", true},
		{"unknown model only", []string{"tiny-embed"}, "", "", "tiny-embed", "installed", true},
		{"nothing installed", nil, "", "", "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := ChooseOllamaModel(tc.installed, tc.requested, tc.configured)
			if ok != tc.ok || c.Model != tc.want || c.Reason != tc.reason {
				t.Errorf("ChooseOllamaModel(%q, %q, %q) = %+v, %v; want %s (%s), %v", tc.installed, tc.requested, tc.configured, c, ok, tc.want, tc.reason, tc.ok)
			}
		})
	}
}
