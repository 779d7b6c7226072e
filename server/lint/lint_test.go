package lint

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/indextest"
)

func TestLint(t *testing.T) {
	long := strings.Repeat("Searches the archive for matching records and returns them. ", 80) // about 4,700 characters
	props := []string{}
	for i := range 12 {
		props = append(props, fmt.Sprintf(`"option_%d":{"type":"string","description":"Option %d of the export, in the format the archive expects."}`, i, i))
	}
	bloated := `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
	js := fmt.Sprintf(`{"domains":[
 {"name":"a","description":"A","tools":[
  {"name":"long","description":%q,"inputSchema":{"type":"object"}},
  {"name":"bare","description":"Create a record.","inputSchema":{"type":"object","properties":{"id":{"type":"string"},"note":{"type":"string","description":"A note."}}}},
  {"name":"none","inputSchema":{"type":"object"}},
  {"name":"list_open","description":"List the open tickets of the current project board, with their status and owner.","inputSchema":{"type":"object"}},
  {"name":"list_opened","description":"List the open tickets of the current project board, with their status and owner. Paged.","inputSchema":{"type":"object"}},
  {"name":"clean","description":"Delete a record by its id.","inputSchema":{"type":"object","properties":{"id":{"type":"string","description":"The record id."}}}},
  {"name":"manage","description":"Manage records.","inputSchema":{"type":"object","properties":{"action":{"type":"string","description":"What to do.","enum":["create","read","update","delete","archive"]}}}},
  {"name":"bloated","description":"Export records.","inputSchema":%s}]},
 {"name":"b","description":"B","tools":[
  {"name":"copy","description":"Create a record!","inputSchema":{"type":"object"}}]}]}`, long, bloated)
	cat := indextest.MustCatalog(t, js)
	rep, err := Check(cat, Options{})
	if err != nil {
		t.Fatal(err)
	}
	problems, notes := map[string]string{}, map[string]string{}
	for _, tl := range rep.Tools {
		problems[tl.Name] = strings.Join(tl.Problems, "|")
		notes[tl.Name] = strings.Join(tl.Notes, "|")
	}
	// A parameter without a description is a note, not a problem.
	if !strings.Contains(notes["a__bare"], "1 parameter without a description: id") || strings.Contains(problems["a__bare"], "without a description") {
		t.Errorf("a__bare: problems %q, notes %q: want the bare parameter as a note", problems["a__bare"], notes["a__bare"])
	}
	for name, want := range map[string]string{
		"a__long":        "description is",
		"a__manage":      "parameter action chooses among 5 operations",
		"a__none":        "no description",
		"a__list_open":   "nearly the same as a__list_opened",
		"a__list_opened": "nearly the same as a__list_open",
		"b__copy":        "nearly the same as a__bare",
	} {
		if !strings.Contains(problems[name], want) {
			t.Errorf("%s: problems %q, want %q", name, problems[name], want)
		}
	}
	// A schema verbose beside the catalog's median but within the budget
	// is a note.
	if !strings.Contains(notes["a__bloated"], "the catalog's median") || problems["a__bloated"] != "" {
		t.Errorf("a__bloated: problems %q, notes %q: want the bloated schema as a note", problems["a__bloated"], notes["a__bloated"])
	}
	if problems["a__clean"] != "" {
		t.Errorf("clean tool flagged: %q", problems["a__clean"])
	}
	if rep.Flagged != 7 || rep.Tools[0].Name != "a__long" || rep.Tools[0].Description <= DefaultMaxDescription {
		t.Errorf("flagged %d, costliest %+v", rep.Flagged, rep.Tools[0])
	}
	// A budget above the long description leaves it verbose against the
	// catalog's median: a note.
	rep, _ = Check(cat, Options{MaxDescription: 100000})
	for _, tl := range rep.Tools {
		if tl.Name == "a__long" && (len(tl.Problems) != 0 || len(tl.Notes) != 1 || !strings.Contains(tl.Notes[0], "× the catalog's median")) {
			t.Errorf("with a large budget a__long has problems %q, notes %q, want it noted verbose", tl.Problems, tl.Notes)
		}
	}
	// Strict makes the notes problems.
	rep, _ = Check(cat, Options{Strict: true})
	for _, tl := range rep.Tools {
		if tl.Name == "a__bare" && !strings.Contains(strings.Join(tl.Problems, "|"), "1 parameter without a description: id") {
			t.Errorf("strict: a__bare has %q", tl.Problems)
		}
		if tl.Name == "a__bloated" && !strings.Contains(strings.Join(tl.Problems, "|"), "the catalog's median") {
			t.Errorf("strict: a__bloated has %q", tl.Problems)
		}
	}
}

// TestLargeEnums: an enum of LargeEnum values or more is noted at any
// depth, named by its path; a short enum, and a core enum beside a
// string (the recommended form), are not.
func TestLargeEnums(t *testing.T) {
	var many, core []string
	for i := range 30 {
		many = append(many, fmt.Sprintf("%q", fmt.Sprintf("v%d", i)))
	}
	core = many[:8]
	js := fmt.Sprintf(`{"domains":[{"name":"a","description":"A","tools":[
  {"name":"nested","description":"Label records.","inputSchema":{"type":"object","properties":{
    "records":{"type":"array","description":"Records.","items":{"type":"object","properties":{"country":{"type":"string","description":"Country.","enum":[%s]}}}},
    "size":{"type":"string","description":"Size.","enum":["s","m","l"]}}}},
  {"name":"core","description":"Pick a country.","inputSchema":{"type":"object","properties":{
    "country":{"description":"Country.","anyOf":[{"type":"string","enum":[%s]},{"type":"string"}]}}}}]}]}`, strings.Join(many, ","), strings.Join(core, ","))
	rep, err := Check(indextest.MustCatalog(t, js), Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tl := range rep.Tools {
		got[tl.Name] = strings.Join(tl.Problems, "; ")
	}
	if !strings.Contains(got["a__nested"], "parameter records[].country lists 30 values") || strings.Contains(got["a__nested"], "size") {
		t.Errorf("nested: %q, want records[].country's 30 values noted and size's 3 not", got["a__nested"])
	}
	if strings.Contains(got["a__core"], "values") {
		t.Errorf("core enum beside a string: %q, want nothing", got["a__core"])
	}
	if rep.Counts[LargeEnumKind] != 1 {
		t.Errorf("counts %v, want one large enum", rep.Counts)
	}
}

func TestCheckSpecs(t *testing.T) {
	cat := indextest.MustCatalog(t, `{"domains":[{"name":"a","description":"A","tools":[
  {"name":"none","inputSchema":{"type":"object"}},
  {"name":"clean","description":"Delete a record by its id.","inputSchema":{"type":"object","properties":{"id":{"type":"string","description":"The record id."}}}}]}]}`)
	want, err := Check(cat, Options{MaxDescription: 5})
	if err != nil {
		t.Fatal(err)
	}
	got, err := CheckSpecs(cat.Specs(), Options{MaxDescription: 5})
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("CheckSpecs(specs) = %+v, %v, want Check's %+v", got, err, want)
	}
	tests := []struct {
		name  string
		specs []index.DomainSpec
	}{
		{"same domain twice", append(cat.Specs(), cat.Specs()...)},
		{"tool without a name", []index.DomainSpec{{Name: "b", Tools: []index.ToolSpec{{Name: ""}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, want := index.NewCatalog(tc.specs)
			rep, err := CheckSpecs(tc.specs, Options{})
			if want == nil || err == nil || err.Error() != want.Error() || rep != nil {
				t.Errorf("CheckSpecs(%s) = %v, %v, want the build's error %v", tc.name, rep, err, want)
			}
		})
	}
}
