package index_test

import (
	"context"
	"fmt"

	"github.com/toolscout/toolscout/index"
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
	kw, err := index.OpenKeyword("") // in memory, BM25
	if err != nil {
		panic(err)
	}
	defer kw.Close()
	st, _ := kw.Sync(context.Background(), cat)
	fmt.Println(st)
	hits, _ := kw.Search(context.Background(), index.KeywordQuery{Text: "sending messages", Size: 1})
	fmt.Println(hits[0].ID)
	// Output:
	// 3 added, 0 changed, 0 removed, 0 unchanged
	// slack__post_message
}

func ExampleCatalog_Resolve() {
	specs, _ := index.BuiltinSpecs()
	cat, _ := index.NewCatalog(specs)
	if _, err := cat.Resolve("create_issue"); err != nil {
		fmt.Println(err)
	}
	t, _ := cat.Resolve("jira/create_issue")
	fmt.Println(t.QualifiedName, "-", t.Summary)
	// Output:
	// tool name "create_issue" is ambiguous: use one of github__create_issue, gitlab__create_issue, jira__create_issue, linear__create_issue
	// jira__create_issue - Create a Jira issue (story, bug, task) in a project.
}
