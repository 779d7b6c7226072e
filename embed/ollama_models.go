package embed

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/types/model"
)

// PreferredOllamaModels are well-known Ollama embedding models, in the
// order toolscout prefers them when several are installed: roughly by
// their published retrieval quality, larger and newer first.
var PreferredOllamaModels = []string{
	"qwen3-embedding",
	"embeddinggemma",
	"mxbai-embed-large",
	"nomic-embed-text",
	"snowflake-arctic-embed",
	"bge-m3",
	"all-minilm",
}

// ListEmbeddingModels returns the names of the models an Ollama server
// has that can embed: every model of /api/tags whose /api/show lists the
// "embedding" capability, sorted. A ":latest" tag is dropped from names.
// A server that cannot be reached gives an error wrapping ErrUnavailable.
func ListEmbeddingModels(ctx context.Context, host *url.URL, hc *http.Client) ([]string, error) {
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	o := &Ollama{host: host.String()}
	client := api.NewClient(host, hc)
	list, err := client.List(ctx)
	if err != nil {
		return nil, o.mapListError(err)
	}
	var out []string
	for _, m := range list.Models {
		show, err := client.Show(ctx, &api.ShowRequest{Model: m.Model})
		if err != nil {
			return nil, o.mapListError(err)
		}
		if slices.Contains(show.Capabilities, model.CapabilityEmbedding) {
			out = append(out, strings.TrimSuffix(m.Model, ":latest"))
		}
	}
	slices.Sort(out)
	return out, nil
}

func (o *Ollama) mapListError(err error) error {
	var se api.StatusError
	if errors.As(err, &se) {
		return fmt.Errorf("ollama at %s: list models: %s (HTTP %d)", o.host, se.ErrorMessage, se.StatusCode)
	}
	return o.mapError(err)
}

// ModelChoice is the model ChooseOllamaModel picked and why.
type ModelChoice struct {
	Model  string
	Reason string // "--model", "configured", "preferred", "installed"
}

// ChooseOllamaModel picks the embedding model, in order: the one the user
// asked for (requested), the configured one, the first of
// PreferredOllamaModels that is installed (any tag), or the first other
// installed embedding model. ok is false when there is nothing to pick.
func ChooseOllamaModel(installed []string, requested, configured string) (c ModelChoice, ok bool) {
	switch {
	case requested != "":
		return ModelChoice{requested, "--model"}, true
	case configured != "":
		return ModelChoice{configured, "configured"}, true
	}
	for _, want := range PreferredOllamaModels {
		for _, m := range installed {
			if base, _, _ := strings.Cut(m, ":"); base == want {
				return ModelChoice{m, "preferred"}, true
			}
		}
	}
	if len(installed) > 0 {
		return ModelChoice{installed[0], "installed"}, true
	}
	return ModelChoice{}, false
}
