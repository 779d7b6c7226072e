package search_test

import (
	"context"
	"fmt"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/search"
)

func Example() {
	ctx := context.Background()
	specs, _ := index.BuiltinSpecs()
	store, _ := store.Open("") // in memory
	live, _, err := search.Open(ctx, search.LiveOptions{
		Store: store, Embedder: embed.NewBuiltin(embed.BuiltinOptions{}),
	}, specs)
	if err != nil {
		panic(err)
	}
	defer live.Close()
	resp, _ := live.Engine().Search(ctx, search.Request{Query: "restart the web deployment", Limit: 1})
	fmt.Println(resp.Mode, resp.Embedder)
	fmt.Println(resp.Results[0].Tool.QualifiedName)
	// Output:
	// hybrid builtin/wordvec-v2
	// kubernetes__rollout_restart
}

func ExampleFuseRRF() {
	fused := search.FuseRRF(60,
		search.RankedList{IDs: []string{"a", "b"}, Weight: 1},
		search.RankedList{IDs: []string{"b", "c"}, Weight: 1})
	for _, f := range fused {
		fmt.Printf("%s %.4f %v\n", f.ID, f.Score, f.Ranks)
	}
	// Output:
	// b 0.0325 [2 1]
	// a 0.0164 [1 0]
	// c 0.0161 [0 2]
}
