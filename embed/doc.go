// Package embed turns text into vectors for toolscout's semantic search.
//
// Place in the flow: beside index, below search. cmd picks the embedder
// (Ollama when it answers, else built-in); search.Live embeds documents
// through it when syncing, search.Engine embeds queries.
//
// An [Embedder] embeds batches of documents and single queries. Two are
// provided: [Ollama], the real path, which calls a local Ollama server's
// /api/embed with each model's documented query and document prompts; and
// [Builtin], an offline embedder that needs no model download, built from
// hashed word, word-bigram, concept and character n-gram features.
//
//	e := embed.NewBuiltin(embed.BuiltinOptions{})
//	e.Fit(corpus) // optional: learn term weights from the indexed documents
//	vec, err := e.EmbedQuery(ctx, "who is on call tonight")
package embed
