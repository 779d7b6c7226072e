package index_test

import (
	"fmt"

	"github.com/toolscout/toolscout/index"
)

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
