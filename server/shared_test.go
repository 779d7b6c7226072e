package server

import (
	"context"
	"sync"
	"testing"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/search"
)

// Fixtures the package's tests share because they are costly to make
// and no test changes them (issue 47: the package's CPU under -race on
// two cores). Each is made by the first test that asks for it and
// closed by TestMain once every test has run (closeShared).

// builtinShared is the built-in catalog indexed once, keywords and the
// built-in embedder's vectors (as serve indexes it by default), in
// memory, and the token report of a server over it.
var builtinShared struct {
	once sync.Once
	cat  *index.Catalog
	live *search.Live
	err  error

	reportOnce sync.Once
	report     *TokenReport
	reportErr  error
}

// builtinLive returns the built-in catalog and the package's live index
// of it. The tests that use it only read it: each makes its own Server
// over it.
func builtinLive(t *testing.T) (*index.Catalog, *search.Live) {
	t.Helper()
	b := &builtinShared
	b.once.Do(func() {
		if b.cat, b.err = index.BuiltinCatalog(); b.err != nil {
			return
		}
		st, err := store.Open("")
		if err != nil {
			b.err = err
			return
		}
		b.live, _, b.err = search.Open(context.Background(), search.LiveOptions{Store: st, Embedder: embed.NewBuiltin(embed.BuiltinOptions{})}, b.cat.Specs())
	})
	if b.err != nil {
		t.Fatalf("index the built-in catalog: %v", b.err)
	}
	return b.cat, b.live
}

// builtinTokenReport is CountTokens of a server in meta mode over the
// built-in catalog (what `toolscout tokens` reports), counted once:
// TestTokenBudget and TestSchemaAnswerBudget check different figures of
// the same report, and counting it is most of their CPU (every
// get_tool_schema answer of the catalog through the tokenizer).
func builtinTokenReport(t *testing.T) *TokenReport {
	t.Helper()
	_, live := builtinLive(t)
	b := &builtinShared
	b.reportOnce.Do(func() {
		b.report, b.reportErr = New(Options{Live: live}).CountTokens(context.Background(), "create an issue for a bug")
	})
	if b.reportErr != nil {
		t.Fatalf("count the tokens of the built-in catalog: %v", b.reportErr)
	}
	return b.report
}

// closeShared closes the shared fixtures that were made.
func closeShared() {
	if builtinShared.live != nil {
		builtinShared.live.Close()
	}
}
