package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/index"
)

func TestLint(t *testing.T) {
	long := strings.Repeat("Searches the archive for matching records and returns them. ", 80) // about 4,700 characters
	js := fmt.Sprintf(`{"domains":[
 {"name":"a","description":"A","tools":[
  {"name":"long","description":%q,"inputSchema":{"type":"object"}},
  {"name":"bare","description":"Create a record.","inputSchema":{"type":"object","properties":{"id":{"type":"string"},"note":{"type":"string","description":"A note."}}}},
  {"name":"none","inputSchema":{"type":"object"}},
  {"name":"list_open","description":"List the open tickets of the current project board, with their status and owner.","inputSchema":{"type":"object"}},
  {"name":"list_opened","description":"List the open tickets of the current project board, with their status and owner. Paged.","inputSchema":{"type":"object"}},
  {"name":"clean","description":"Delete a record by its id.","inputSchema":{"type":"object","properties":{"id":{"type":"string","description":"The record id."}}}}]},
 {"name":"b","description":"B","tools":[
  {"name":"copy","description":"Create a record!","inputSchema":{"type":"object"}}]}]}`, long)
	specs, err := index.ParseCatalog("t", []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := index.NewCatalog(specs)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Lint(cat, LintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	problems := map[string]string{}
	for _, tl := range rep.Tools {
		problems[tl.Name] = strings.Join(tl.Problems, "|")
	}
	for name, want := range map[string]string{
		"a__long":        "description is",
		"a__bare":        "1 parameter without a description: id",
		"a__none":        "no description",
		"a__list_open":   "nearly the same as a__list_opened",
		"a__list_opened": "nearly the same as a__list_open",
		"b__copy":        "nearly the same as a__bare",
	} {
		if !strings.Contains(problems[name], want) {
			t.Errorf("%s: problems %q, want %q", name, problems[name], want)
		}
	}
	if problems["a__clean"] != "" {
		t.Errorf("clean tool flagged: %q", problems["a__clean"])
	}
	if rep.Flagged != 6 || rep.Tools[0].Name != "a__long" || rep.Tools[0].Description <= DefaultMaxDescription {
		t.Errorf("flagged %d, costliest %+v", rep.Flagged, rep.Tools[0])
	}
	// A budget above the long description clears it.
	rep, _ = Lint(cat, LintOptions{MaxDescription: 100000})
	for _, tl := range rep.Tools {
		if tl.Name == "a__long" && len(tl.Problems) != 0 {
			t.Errorf("with a large budget a__long still has %q", tl.Problems)
		}
	}
}
