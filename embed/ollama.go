package embed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"
)

// DefaultOllamaModel is the model used when none is named.
const DefaultOllamaModel = "nomic-embed-text"

// OllamaOptions configures an Ollama embedder. Zero values mean defaults.
type OllamaOptions struct {
	// Host is the server URL, as ParseOllamaHost returns it
	// (http://127.0.0.1:11434 when nil).
	Host *url.URL
	// Model is the embedding model (DefaultOllamaModel when empty).
	Model string
	// Dimensions asks the model for shorter vectors (0: native size).
	Dimensions int
	// NoTruncate makes over-long inputs an error instead of truncating them.
	NoTruncate bool
	// KeepAlive is how long Ollama keeps the model loaded after a call
	// (server default when zero).
	KeepAlive time.Duration
	// BatchSize is the number of texts per /api/embed call (32 when zero).
	BatchSize int
	// Timeout bounds each HTTP request (2 minutes when zero).
	Timeout time.Duration
	// Prompts maps model names to query/document prompts
	// (KnownPrompts() when nil).
	Prompts map[string]Prompt
	// HTTPClient overrides the HTTP client (Timeout is then ignored).
	HTTPClient *http.Client
	// Logger receives debug logs (discarded when nil).
	Logger *slog.Logger
}

// Ollama embeds through a local Ollama server's /api/embed.
type Ollama struct {
	client    *api.Client
	host      string
	model     string
	prompt    Prompt
	dims      int // requested
	truncate  bool
	keepAlive *api.Duration
	batch     int
	log       *slog.Logger

	mu     sync.Mutex
	actual int // learned dimension
}

var _ Embedder = (*Ollama)(nil)
var _ Checker = (*Ollama)(nil)

// NewOllama returns an Ollama embedder. It does not contact the server:
// call Check for that.
func NewOllama(opts OllamaOptions) *Ollama {
	host := opts.Host
	if host == nil {
		host, _ = ParseOllamaHost("")
	}
	model := opts.Model
	if model == "" {
		model = DefaultOllamaModel
	}
	prompts := opts.Prompts
	if prompts == nil {
		prompts = KnownPrompts()
	}
	p, _ := PromptFor(prompts, model)
	hc := opts.HTTPClient
	if hc == nil {
		timeout := opts.Timeout
		if timeout <= 0 {
			timeout = 2 * time.Minute
		}
		hc = &http.Client{Timeout: timeout}
	}
	batch := opts.BatchSize
	if batch <= 0 {
		batch = 32
	}
	o := &Ollama{
		client:   api.NewClient(host, hc),
		host:     host.String(),
		model:    model,
		prompt:   p,
		dims:     opts.Dimensions,
		truncate: !opts.NoTruncate,
		batch:    batch,
		log:      opts.Logger,
		actual:   opts.Dimensions,
	}
	if opts.KeepAlive > 0 {
		o.keepAlive = &api.Duration{Duration: opts.KeepAlive}
	}
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	return o
}

// ParseOllamaHost interprets an OLLAMA_HOST value the way Ollama does:
// empty gives http://127.0.0.1:11434; a bare host gets port 11434; an
// explicit http:// or https:// scheme without a port gets 80 or 443.
func ParseOllamaHost(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	defaultPort := "11434"
	scheme, hostport, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		scheme, hostport = "http", s
	case scheme == "http":
		defaultPort = "80"
	case scheme == "https":
		defaultPort = "443"
	default:
		return nil, fmt.Errorf("OLLAMA_HOST %q: scheme must be http or https", s)
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = "127.0.0.1", defaultPort
		if ip := net.ParseIP(strings.Trim(hostport, "[]")); ip != nil {
			host = ip.String()
		} else if hostport != "" {
			host = hostport
		}
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return nil, fmt.Errorf("OLLAMA_HOST %q: invalid port %q", s, port)
	}
	return &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port), Path: path}, nil
}

// Info reports provider "ollama", the model and the dimension (0 until the
// first successful call or Check).
func (o *Ollama) Info() Info {
	o.mu.Lock()
	defer o.mu.Unlock()
	return Info{Provider: "ollama", Model: o.model, Dims: o.actual}
}

// Host returns the server URL.
func (o *Ollama) Host() string { return o.host }

// Check verifies that the server answers and has the model by embedding a
// short text, and learns the vector dimension.
func (o *Ollama) Check(ctx context.Context) error {
	_, err := o.embed(ctx, []string{o.prompt.Query + "ping"})
	return err
}

// EmbedQuery embeds a query with the model's query prompt.
func (o *Ollama) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vecs, err := o.embed(ctx, []string{o.prompt.Query + text})
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

// EmbedDocuments embeds documents with the model's document prompt, in
// batches of BatchSize texts per request.
func (o *Ollama) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += o.batch {
		part := texts[start:min(start+o.batch, len(texts))]
		in := make([]string, len(part))
		for i, t := range part {
			in[i] = o.prompt.Document + t
		}
		vecs, err := o.embed(ctx, in)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func (o *Ollama) embed(ctx context.Context, input []string) ([][]float32, error) {
	truncate := o.truncate
	req := &api.EmbedRequest{
		Model:      o.model,
		Input:      input,
		Truncate:   &truncate,
		KeepAlive:  o.keepAlive,
		Dimensions: o.dims,
	}
	start := time.Now()
	resp, err := o.client.Embed(ctx, req)
	if err != nil {
		return nil, o.mapError(err)
	}
	if len(resp.Embeddings) != len(input) {
		return nil, fmt.Errorf("ollama embed: got %d embeddings for %d inputs", len(resp.Embeddings), len(input))
	}
	dims := len(resp.Embeddings[0])
	for _, v := range resp.Embeddings {
		if len(v) != dims || dims == 0 {
			return nil, fmt.Errorf("ollama embed: embeddings of unequal or zero length (%d and %d)", dims, len(v))
		}
	}
	o.mu.Lock()
	o.actual = dims
	o.mu.Unlock()
	o.log.Debug("ollama embed", "model", o.model, "texts", len(input), "dims", dims, "elapsed", time.Since(start))
	return resp.Embeddings, nil
}

// mapError turns client errors into the sentinels, with messages that say
// what to run.
func (o *Ollama) mapError(err error) error {
	var se api.StatusError
	if errors.As(err, &se) {
		if se.StatusCode == http.StatusNotFound {
			return fmt.Errorf("%w: ollama at %s has no model %q: run `ollama pull %s` (%s)", ErrModelNotFound, o.host, o.model, o.model, se.ErrorMessage)
		}
		return fmt.Errorf("ollama embed with %s: %s (HTTP %d)", o.model, se.ErrorMessage, se.StatusCode)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: ollama at %s did not answer in time: %v", ErrUnavailable, o.host, err)
	}
	var ue *url.Error
	var ne net.Error
	if errors.As(err, &ue) || errors.As(err, &ne) {
		return fmt.Errorf("%w: cannot reach ollama at %s: start it with `ollama serve` or set OLLAMA_HOST (%v)", ErrUnavailable, o.host, err)
	}
	return fmt.Errorf("ollama embed: %w", err)
}
