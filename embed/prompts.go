package embed

import (
	"fmt"
	"strings"
)

// Prompt is the text a model expects before queries and documents.
type Prompt struct {
	Query    string
	Document string
}

// KnownPrompts returns the documented query/document prompts of common
// Ollama embedding models, keyed by model name without its tag. Callers may
// add to the returned map (the CLI's --prompt flag does).
func KnownPrompts() map[string]Prompt {
	const retrieval = "Represent this sentence for searching relevant passages: "
	return map[string]Prompt{
		// nomic-embed-text: task prefixes from the model card.
		"nomic-embed-text":        {Query: "search_query: ", Document: "search_document: "},
		"nomic-embed-text-v2-moe": {Query: "search_query: ", Document: "search_document: "},
		// mxbai and arctic: instruction on queries only.
		"mxbai-embed-large":       {Query: retrieval},
		"snowflake-arctic-embed":  {Query: retrieval},
		"snowflake-arctic-embed2": {Query: "query: "},
		// EmbeddingGemma's retrieval prompts.
		"embeddinggemma": {Query: "task: search result | query: ", Document: "title: none | text: "},
		// Qwen3-Embedding: instruction on queries only.
		"qwen3-embedding": {Query: "Instruct: Given a request for a software tool, retrieve the tool descriptions that fulfil it\nQuery:"},
		"bge-m3":          {},
		"all-minilm":      {},
	}
}

// PromptFor returns the prompt for model ("name:tag" or "name") from table,
// and whether the model is known.
func PromptFor(table map[string]Prompt, model string) (Prompt, bool) {
	if p, ok := table[model]; ok {
		return p, true
	}
	base, _, _ := strings.Cut(model, ":")
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	p, ok := table[base]
	return p, ok
}

// ParsePrompt parses the CLI form "MODEL=QUERY_PREFIX|DOCUMENT_PREFIX".
func ParsePrompt(s string) (string, Prompt, error) {
	model, rest, ok := strings.Cut(s, "=")
	if !ok || model == "" {
		return "", Prompt{}, fmt.Errorf("prompt %q: want MODEL=QUERY_PREFIX|DOCUMENT_PREFIX", s)
	}
	q, d, _ := strings.Cut(rest, "|")
	return model, Prompt{Query: q, Document: d}, nil
}
