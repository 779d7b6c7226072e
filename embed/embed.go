package embed

import (
	"context"
	"errors"
	"io"
)

// Embedder turns texts into vectors. Implementations are safe for
// concurrent use.
type Embedder interface {
	// EmbedDocuments embeds texts to be indexed, one vector per text.
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
	// EmbedQuery embeds a search query.
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
	// Info names the embedder. Dims may be 0 until the first call for
	// embedders that learn it from their server.
	Info() Info
}

// Info describes an embedder.
type Info struct {
	Provider string `json:"provider"` // "ollama" or "builtin"
	Model    string `json:"model"`
	Dims     int    `json:"dims"`
}

// String is "provider/model", the form results and logs show.
func (i Info) String() string { return i.Provider + "/" + i.Model }

// Fitter is implemented by embedders that learn term statistics from the
// indexed documents (the built-in embedder's IDF weights).
type Fitter interface {
	Fit(docs []string)
}

// DocumentCounter is a Fitter that can take its statistics from the
// documents it embeds instead of a pass of its own, when a sync embeds
// every document of the catalog anyway (a first index).
type DocumentCounter interface {
	Fitter
	// StartCounting starts counting what Fit counts over the documents
	// EmbedDocuments embeds, from now until FitCounted.
	StartCounting()
	// FitCounted stops counting. When exactly n documents were counted it
	// fits from them, as Fit would over those documents, and reports true;
	// otherwise it leaves the statistics as they were.
	FitCounted(n int) bool
}

// FitSaver is a Fitter whose fitted statistics can be saved, so that a
// start over an unchanged catalog restores them instead of fitting again.
type FitSaver interface {
	Fitter
	SaveFit(w io.Writer) error
	LoadFit(r io.Reader) error
}

// Checker is implemented by embedders that depend on a server: Check
// verifies it answers and has the model, and learns the dimension.
type Checker interface {
	Check(ctx context.Context) error
}

// Fingerprinter is implemented by embedders whose vectors change with
// data they carry (the built-in embedder's lexicon): stored vectors are
// kept per fingerprint.
type Fingerprinter interface {
	Fingerprint() string
}

// Sentinel errors callers branch on with errors.Is.
var (
	// ErrUnavailable means the embedding server cannot be reached.
	ErrUnavailable = errors.New("embedding server unavailable")
	// ErrModelNotFound means the server does not have the model.
	ErrModelNotFound = errors.New("embedding model not found")
)
