package search

import "github.com/toolscout/toolscout/embed"

// WordFrequency returns a word stem's relative frequency in general
// English text (the corpus the built-in embedder's word vectors were
// learned from), and whether the stem is known there: rare words say more
// about a text than common ones. The server picks the telling words of an
// upstream's tools with it; ranking knowledge stays behind this package.
func WordFrequency(stem string) (float64, bool) { return embed.CorpusFrequency(stem) }
