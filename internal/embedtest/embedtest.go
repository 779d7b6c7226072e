// Package embedtest holds embedders for tests of the packages that index
// and search: one that blocks until released, to catch an index between
// its keyword and its vector step.
package embedtest

import (
	"context"

	"github.com/toolscout/toolscout/embed"
)

// Blocking is the built-in embedder whose document embedding waits until
// Release is closed (or the context ends).
type Blocking struct {
	*embed.Builtin
	Release chan struct{}
}

// NewBlocking returns a Blocking embedder, not yet released.
func NewBlocking() *Blocking {
	return &Blocking{Builtin: embed.NewBuiltin(embed.BuiltinOptions{}), Release: make(chan struct{})}
}

// EmbedDocuments waits for Release, then embeds.
func (b *Blocking) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	select {
	case <-b.Release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return b.Builtin.EmbedDocuments(ctx, texts)
}
