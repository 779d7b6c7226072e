package search

import (
	"context"
	"testing"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
)

// TestServingLoadPreparesLookups: a serving index has the catalog's
// lookups by name built when its first load has settled, so that its
// first query does not build them; a load that does not serve (the index
// command) leaves them to the first use.
func TestServingLoadPreparesLookups(t *testing.T) {
	specs, err := index.ParseCatalog("reference servers", []byte(referenceServers))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		serving bool
	}{{"serving", true}, {"not serving", false}} {
		t.Run(c.name, func(t *testing.T) {
			st, err := store.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			live, err := NewLive(LiveOptions{Store: st, Serving: c.serving})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { live.Close() })
			if _, err := live.Load(context.Background(), specs, embed.NewBuiltin(embed.BuiltinOptions{}), nil); err != nil {
				t.Fatal(err)
			}
			select {
			case <-live.Settled():
			default:
				t.Fatal("Load returned before Settled")
			}
			cat := live.Engine().Catalog()
			if cat.Len() == 0 {
				t.Fatal("the load gave an empty catalog")
			}
			if got := cat.LookupsPrepared(); got != c.serving {
				t.Fatalf("LookupsPrepared() after the first load = %v, want %v", got, c.serving)
			}
			if ts := cat.ToolsWithName("read_graph"); len(ts) != 1 || ts[0].Domain != "memory" {
				t.Fatalf("ToolsWithName(read_graph) = %v, want memory's", ts)
			}
			if !cat.LookupsPrepared() {
				t.Fatal("LookupsPrepared() = false after a lookup")
			}
		})
	}
}
