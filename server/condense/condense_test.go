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
		{"filesystem read_text_file: the first of six sentences, at most nine words",
			"Read the complete contents of a file from the file system as text. Handles various text encodings and provides detailed error messages if the file cannot be read. Use this tool when you need to examine the contents of a single file. Use the 'head' parameter to read only the first N lines of a file, or the 'tail' parameter to read only the last N lines of a file. Operates on the file as text regardless of extension. Only works within allowed directories.",
			"Read complete contents of file from file system."},
		{"filesystem read_file: the deprecation notice comes first",
			"Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead.",
			"Deprecated: Use read_text_file instead. Read complete contents of file."},
		{"filesystem list_directory_with_sizes: a trailing modifier goes, then a phrase",
			"Get a detailed listing of all files and directories in a specified path, including sizes. Results clearly distinguish between files and directories with [FILE] and [DIR] prefixes. This tool is useful for understanding directory structure and finding specific files within a directory. Only works within allowed directories.",
			"Get detailed listing of all files and directories."},
		{"filesystem directory_tree: the parenthesis of a later sentence goes with it",
			"Get a recursive tree view of files and directories as a JSON structure. Each entry includes 'name', 'type' (file/directory), and 'children' for directories. Files have no children array, while directories always have a children array (which may be empty).",
			"Get recursive tree view of files and directories."},
		{"everything get-env: one sentence without a period, cut at its comma",
			"Returns all environment variables, helpful for debugging MCP server configuration",
			"Returns all environment variables"},
		{"everything simulate-research-query: a list is no place to cut; a clause is",
			"Simulates a deep research operation that gathers, analyzes, and synthesizes information. Demonstrates MCP task-based operations with progress through multiple stages. If 'ambiguous' is true and client supports elicitation, sends an elicitation request for clarification.",
			"Simulates deep research operation."},
		{"memory create_relations: a second sentence without a period",
			"Create multiple new relations between entities in the knowledge graph. Relations should be in active voice",
			"Create multiple new relations between entities in knowledge graph."},
		{"built-in get_file_contents: a phrase goes rather than half of a pair",
			"Get the contents of a file or directory in a repository at a branch or commit.",
			"Get contents of file or directory in repository."},
		{"built-in list_oncalls: the modifier after the comma goes, then a phrase",
			"List who is on call now or in a time range, per schedule and escalation policy.",
			"List who is on call now."},
		{"built-in create_issue: a parenthesis",
			"Create a Jira issue (story, bug, task) in a project.",
			"Create Jira issue in project."},
		{"built-in execute: a parenthesis at the end",
			"Run a SQL statement that changes data or schema (INSERT, UPDATE, DELETE, DDL).",
			"Run SQL statement that changes data or schema."},
		{"built-in modify_labels: examples",
			"Add or remove labels on emails, e.g. mark as read, star or archive.",
			"Add or remove labels on emails."},
		{"BFCL requests.get: the comma before a dangling 'based on'",
			"Sends a GET request to a specified URL to retrieve a summary of anomalies, based on the provided insights group or fabric.",
			"Sends GET request to specified URL."},
		{"BFCL get_current_weather: a participle clause",
			"Retrieves the current weather conditions for a specified location, allowing for a choice between Celsius and Fahrenheit units.",
			"Retrieves current weather conditions for specified location."},
		{"BFCL search_web_tool: cut at 'and' rather than after 'number'",
			"Executes a search query using the DuckDuckGo search engine and returns a specified number of search results from a given source.",
			"Executes search query using DuckDuckGo search engine."},
		{"MetaTool locator: no dangling 'current'",
			"Add-on for displaying the current coordinates of the ISS and the names of the current astronauts in space.",
			"Add-on for displaying current coordinates of ISS."},
		{"MetaTool Tax_Calculator: U.S. does not end the sentence",
			"Calculate sales tax given a U.S. address (or just a city) and an amount. Powered by Avalara.",
			"Calculate sales tax given U.S. address and amount."},
		{"a docstring: the paragraph before Args",
			"Search the web for pages.\n\n    Args:\n        query: what to look for\n",
			"Search web for pages."},
		{"a docstring without a blank line",
			"Fetch a URL and return its text\nArgs:\n  url: the page",
			"Fetch URL and return text"},
		{"no clause to cut at: after nine words",
			"Compute the rolling mean variance skew kurtosis median mode range sum count min max quartiles of the given series quickly",
			"Compute rolling mean variance skew kurtosis median mode range"},
		{"built-in describe_table: the list after a colon goes",
			"Describe a table: columns, types, nullability, defaults, indexes and foreign keys.",
			"Describe table."},
		{"built-in get_pull_request: what 'with its' adds goes",
			"Get a pull request with its status, mergeability and reviewers.",
			"Get pull request."},
		{"built-in read_file: what follows a semicolon goes",
			"Read the content of a file; Google Docs come as text, Sheets as CSV.",
			"Read content of file."},
		{"built-in export_file: the commas of a list are no clause; a phrase is",
			"Export a Google Doc, Sheet or Slides file as PDF, DOCX, XLSX or CSV.",
			"Export Google Doc, Sheet or Slides file."},
		{"built-in create_filter: no cut before a list's last item",
			"Create a filter that labels, archives or forwards incoming mail automatically.",
			"Create filter that labels, archives or forwards incoming mail."},
		{"built-in quick_add_event: no cut inside a quotation",
			"Create an event from a sentence like \"Lunch with Ana tomorrow at 1pm\".",
			"Create event from sentence."},
		{"articles inside quotes and a capital A inside the sentence stay",
			"Rename the branch to \"the main line\" for plan A.",
			"Rename branch to \"the main line\" for plan A."},
		{"an article that opens the sentence gives its capital to the next word",
			"The current time in a time zone.",
			"Current time in time zone."},
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

// TestSummaryFor: a summary listed beside a tool's name leaves out the
// domain that the name begins with where it only names what the next
// word is, and keeps it where the sentence needs it.
func TestSummaryFor(t *testing.T) {
	tests := []struct {
		name, desc, domain, want string
	}{
		{"a proper name before its noun goes", "List Linear issues filtered by team, state or label.", "linear", "List issues filtered by team, state or label."},
		{"a name in capitals", "Create an S3 bucket in a region.", "s3", "Create bucket in region."},
		{"before a preposition it stays", "Search errors in Sentry by message, file or tag across projects.", "sentry", "Search errors in Sentry by message, file or tag."},
		{"in lower case it is a word of the sentence", "Get the current time in a time zone.", "time", "Get current time in time zone."},
		{"the first word stays", "Slack messages of a channel.", "slack", "Slack messages of channel."},
		{"a possessive stays", "Search Slack messages with Slack's search modifiers.", "slack", "Search messages with Slack's search modifiers."},
		{"no domain", "List Linear issues.", "", "List Linear issues."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := condense.SummaryFor(tc.desc, tc.domain); got != tc.want {
				t.Errorf("SummaryFor(%q, %q) = %q, want %q", tc.desc, tc.domain, got, tc.want)
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
	// Make line-based edits to text file.
	// Create Jira issue in project.
}
