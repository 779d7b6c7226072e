package condense_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/server/condense"
)

// TestSummary: real descriptions, from the reference servers, the
// built-in catalog and public tool sets, and what a listing shows of
// them.
func TestSummary(t *testing.T) {
	tests := []struct {
		name, desc, want string
	}{
		{"filesystem read_text_file: the first of six sentences",
			"Read the complete contents of a file from the file system as text. Handles various text encodings and provides detailed error messages if the file cannot be read. Use this tool when you need to examine the contents of a single file. Use the 'head' parameter to read only the first N lines of a file, or the 'tail' parameter to read only the last N lines of a file. Operates on the file as text regardless of extension. Only works within allowed directories.",
			"Read the complete contents of a file from the file system as text."},
		{"filesystem read_file: the deprecation notice comes first",
			"Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead.",
			"Deprecated: Use read_text_file instead. Read the complete contents of a file as text."},
		{"filesystem list_directory_with_sizes: 15 words, whole",
			"Get a detailed listing of all files and directories in a specified path, including sizes. Results clearly distinguish between files and directories with [FILE] and [DIR] prefixes. This tool is useful for understanding directory structure and finding specific files within a directory. Only works within allowed directories.",
			"Get a detailed listing of all files and directories in a specified path, including sizes."},
		{"filesystem directory_tree: the parenthesis of a later sentence goes with it",
			"Get a recursive tree view of files and directories as a JSON structure. Each entry includes 'name', 'type' (file/directory), and 'children' for directories. Files have no children array, while directories always have a children array (which may be empty).",
			"Get a recursive tree view of files and directories as a JSON structure."},
		{"everything get-env: one sentence without a period, kept",
			"Returns all environment variables, helpful for debugging MCP server configuration",
			"Returns all environment variables, helpful for debugging MCP server configuration"},
		{"everything simulate-research-query: a list inside the first sentence",
			"Simulates a deep research operation that gathers, analyzes, and synthesizes information. Demonstrates MCP task-based operations with progress through multiple stages. If 'ambiguous' is true and client supports elicitation, sends an elicitation request for clarification.",
			"Simulates a deep research operation that gathers, analyzes, and synthesizes information."},
		{"memory create_relations: a second sentence without a period",
			"Create multiple new relations between entities in the knowledge graph. Relations should be in active voice",
			"Create multiple new relations between entities in the knowledge graph."},
		{"built-in get_file_contents: 16 words, a phrase goes rather than half of a pair",
			"Get the contents of a file or directory in a repository at a branch or commit.",
			"Get the contents of a file or directory in a repository."},
		{"built-in list_oncalls: cut at the comma",
			"List who is on call now or in a time range, per schedule and escalation policy.",
			"List who is on call now or in a time range."},
		{"built-in create_issue: a parenthesis",
			"Create a Jira issue (story, bug, task) in a project.",
			"Create a Jira issue in a project."},
		{"built-in execute: a parenthesis at the end",
			"Run a SQL statement that changes data or schema (INSERT, UPDATE, DELETE, DDL).",
			"Run a SQL statement that changes data or schema."},
		{"built-in modify_labels: examples",
			"Add or remove labels on emails, e.g. mark as read, star or archive.",
			"Add or remove labels on emails."},
		{"BFCL requests.get: the comma before a dangling 'based on'",
			"Sends a GET request to a specified URL to retrieve a summary of anomalies, based on the provided insights group or fabric.",
			"Sends a GET request to a specified URL to retrieve a summary of anomalies."},
		{"BFCL get_current_weather: a participle clause",
			"Retrieves the current weather conditions for a specified location, allowing for a choice between Celsius and Fahrenheit units.",
			"Retrieves the current weather conditions for a specified location."},
		{"BFCL search_web_tool: cut at 'and' rather than after 'number'",
			"Executes a search query using the DuckDuckGo search engine and returns a specified number of search results from a given source.",
			"Executes a search query using the DuckDuckGo search engine."},
		{"MetaTool locator: no dangling 'current'",
			"Add-on for displaying the current coordinates of the ISS and the names of the current astronauts in space.",
			"Add-on for displaying the current coordinates of the ISS."},
		{"MetaTool Tax_Calculator: U.S. does not end the sentence",
			"Calculate sales tax given a U.S. address (or just a city) and an amount. Powered by Avalara.",
			"Calculate sales tax given a U.S. address and an amount."},
		{"a docstring: the paragraph before Args",
			"Search the web for pages.\n\n    Args:\n        query: what to look for\n",
			"Search the web for pages."},
		{"a docstring without a blank line",
			"Fetch a URL and return its text\nArgs:\n  url: the page",
			"Fetch a URL and return its text"},
		{"no clause to cut at: after 15 words, then no dangling word",
			"Compute the rolling mean variance skew kurtosis median mode range sum count min max quartiles of the given series quickly",
			"Compute the rolling mean variance skew kurtosis median mode range sum count min max quartiles"},
		{"empty", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := condense.Summary(tc.desc); got != tc.want {
				t.Errorf("Summary(%q) = %q, want %q", tc.desc, got, tc.want)
			}
		})
	}
}

// TestSummaryShape: for every tool of the reference servers and of the
// built-in catalog, the summary has at most MaxWords words, each a whole
// word of the description, and ends on none that leaves it hanging.
func TestSummaryShape(t *testing.T) {
	var ref struct {
		Tools []struct{ Name, Description string }
	}
	b, err := os.ReadFile("testdata/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	descs := map[string]string{}
	for _, tl := range ref.Tools {
		descs["reference/"+tl.Name] = tl.Description
	}
	cat, err := index.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range cat.Tools() {
		descs["built-in/"+tl.QualifiedName] = tl.Description
	}
	if len(descs) < 37+300 {
		t.Fatalf("%d descriptions, want the 37 reference tools and the built-in catalog", len(descs))
	}
	for name, desc := range descs {
		got := condense.Summary(desc)
		words := strings.Fields(got)
		if len(words) == 0 || len(words) > condense.MaxWords {
			t.Errorf("%s: Summary = %q: %d words, want 1 to %d", name, got, len(words), condense.MaxWords)
			continue
		}
		whole := map[string]bool{}
		for _, w := range strings.Fields(desc) {
			whole[bare(w)] = true
		}
		for _, w := range words {
			if !whole[bare(w)] {
				t.Errorf("%s: Summary = %q: %q is not a word of %q", name, got, w, desc)
			}
		}
		switch last := bare(words[len(words)-1]); last {
		case "and", "or", "of", "the", "a", "to", "with", "for", "in", "that":
			t.Errorf("%s: Summary = %q ends on %q", name, got, last)
		}
	}
}

// bare is w in lower case without the punctuation around it.
func bare(w string) string {
	return strings.ToLower(strings.Trim(w, ".,;:!?()[]\"'"))
}

func ExampleSummary() {
	fmt.Println(condense.Summary("Make line-based edits to a text file. Each edit replaces exact line sequences with new content. Returns a git-style diff showing the changes made."))
	fmt.Println(condense.Summary("Create a Jira issue (story, bug, task) in a project."))
	// Output:
	// Make line-based edits to a text file.
	// Create a Jira issue in a project.
}
