package keyword_test

import (
	"context"
	"fmt"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/keyword"
)

func Example() {
	specs, err := index.ParseCatalog("catalog.json", []byte(`{"domains": [
	  {"name": "github", "description": "GitHub", "tools": [
	    {"name": "create_issue", "description": "Open a new issue in a repository.", "inputSchema": {"type": "object"}},
	    {"name": "search_code", "description": "Search code across repositories.", "inputSchema": {"type": "object"}}]},
	  {"name": "slack", "description": "Slack", "tools": [
	    {"name": "post_message", "description": "Send a message to a channel.", "inputSchema": {"type": "object"}}]}]}`))
	if err != nil {
		panic(err)
	}
	cat, err := index.NewCatalog(specs)
	if err != nil {
		panic(err)
	}
	kw, err := keyword.Open("") // in memory, BM25
	if err != nil {
		panic(err)
	}
	defer kw.Close()
	st, _ := kw.Sync(context.Background(), cat)
	fmt.Println(st)
	hits, _ := kw.Search(context.Background(), keyword.Query{Text: "sending messages", Size: 1})
	fmt.Println(hits[0].ID)
	// Output:
	// 3 added, 0 changed, 0 removed, 0 unchanged
	// slack__post_message
}
