package server

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/server/callers"
)

// modeCatalog: github with two groups and a disabled tool, weather with
// one tool.
const modeCatalog = `{"domains":[
 {"name":"github","description":"GitHub","tools":[
  {"name":"create_issue","description":"Open an issue.","group":"issues","inputSchema":{"type":"object"}},
  {"name":"list_issues","description":"List issues.","group":"issues","inputSchema":{"type":"object"}},
  {"name":"get_repo","description":"Get a repository.","group":"repos","inputSchema":{"type":"object"}},
  {"name":"delete_repo","description":"Delete a repository.","group":"repos","enabled":false,"inputSchema":{"type":"object"}}]},
 {"name":"weather","description":"Weather","tools":[
  {"name":"get_forecast","description":"Get the forecast.","inputSchema":{"type":"object"}}]}]}`

func modeTestCatalog(t *testing.T) *index.Catalog {
	t.Helper()
	specs, err := index.ParseCatalog("modes.json", []byte(modeCatalog))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := index.NewCatalog(specs)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// modeTestCaller sees github's issues only.
func modeTestCaller(t *testing.T) *callers.Caller {
	t.Helper()
	set, err := callers.New(callers.Options{Callers: []callers.Config{
		{Name: "issues", Tokens: []string{"issues-token-0123456789"}, Allow: []string{"github__*_issue*"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return set.Caller("issues")
}

func qualifiedNames(tools []*index.Tool) []string {
	out := []string{}
	for _, t := range tools {
		out = append(out, t.QualifiedName)
	}
	slices.Sort(out)
	return out
}

// TestModeLists runs each mode's list function, a pure function of the
// catalog, the caller, the enabled domains and the exposure: no server,
// no session.
func TestModeLists(t *testing.T) {
	t.Parallel()
	cat := modeTestCatalog(t)
	issues := modeTestCaller(t)
	every := []string{"github__create_issue", "github__get_repo", "github__list_issues", "weather__get_forecast"}
	yes := func(*index.Catalog) bool { return true }
	no := func(*index.Catalog) bool { return false }
	tests := []struct {
		name    string
		mode    Mode
		who     *callers.Caller
		enabled map[string]bool
		expose  Exposure
		fits    func(*index.Catalog) bool
		want    []string
	}{
		{name: "meta lists nothing", mode: ExposeMeta, want: []string{}},
		{name: "empty mode lists as meta", mode: "", want: []string{}},
		{name: "unknown mode lists nothing", mode: "bogus", want: []string{}},
		{name: "meta ignores enabled domains", mode: ExposeMeta, enabled: map[string]bool{"github": true}, want: []string{}},
		{name: "eager lists every enabled tool", mode: ExposeEager, want: every},
		{name: "eager lists what the caller sees", mode: ExposeEager, who: issues, want: []string{"github__create_issue", "github__list_issues"}},
		{name: "compact lists every enabled tool", mode: ExposeCompact, want: every},
		{name: "compact lists what the caller sees", mode: ExposeCompact, who: issues, want: []string{"github__create_issue", "github__list_issues"}},
		{name: "core without pins", mode: ExposeCore, want: []string{}},
		{name: "core with a glob and a name", mode: ExposeCore, expose: Exposure{Pinned: []string{"github__*_issue", "weather__get_forecast"}}, want: []string{"github__create_issue", "weather__get_forecast"}},
		{name: "core never lists a disabled pin", mode: ExposeCore, expose: Exposure{Pinned: []string{"github__delete_repo", "github__get_repo"}}, want: []string{"github__get_repo"}},
		{name: "core never lists a pin the caller cannot see", mode: ExposeCore, who: issues, expose: Exposure{Pinned: []string{"weather__*", "github__list_issues"}}, want: []string{"github__list_issues"}},
		{name: "core with a bad glob", mode: ExposeCore, expose: Exposure{Pinned: []string{"github__[", "nope"}}, want: []string{}},
		{name: "dynamic with nothing enabled", mode: ExposeDynamic, want: []string{}},
		{name: "dynamic with a domain", mode: ExposeDynamic, enabled: map[string]bool{"weather": true}, want: []string{"weather__get_forecast"}},
		{name: "dynamic with a group", mode: ExposeDynamic, enabled: map[string]bool{"github/repos": true}, want: []string{"github__get_repo"}},
		{name: "dynamic with a domain and its group", mode: ExposeDynamic, enabled: map[string]bool{"github": true, "github/issues": true}, want: []string{"github__create_issue", "github__get_repo", "github__list_issues"}},
		{name: "dynamic with a domain the caller cannot see", mode: ExposeDynamic, who: issues, enabled: map[string]bool{"weather": true, "github/issues": true}, want: []string{"github__create_issue", "github__list_issues"}},
		{name: "dynamic with an unknown domain", mode: ExposeDynamic, enabled: map[string]bool{"jira": true}, want: []string{}},
		{name: "auto under the budget", mode: ExposeAuto, fits: yes, want: every},
		{name: "auto over the budget", mode: ExposeAuto, fits: no, want: []string{}},
		{name: "auto under the budget for a caller", mode: ExposeAuto, who: issues, fits: yes, want: []string{"github__create_issue", "github__list_issues"}},
		{name: "auto counts under the default budget", mode: ExposeAuto, want: every},
		{name: "auto counts over a budget of 10 tokens", mode: ExposeAuto, expose: Exposure{Budget: 10}, want: []string{}},
		{name: "code lists nothing", mode: ExposeCode, enabled: map[string]bool{"github": true}, fits: yes, want: []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			exp := tc.expose
			exp.Mode = tc.mode
			got := qualifiedNames(tc.mode.lists(listInput{cat: cat, who: tc.who, enabled: tc.enabled, expose: exp, fits: tc.fits}))
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s.lists = %v, want %v", tc.mode, got, tc.want)
			}
		})
	}
}

// TestAutoListAsksOncePerList: auto mode asks fits about the caller's
// catalog, once.
func TestAutoListAsksOncePerList(t *testing.T) {
	t.Parallel()
	cat := modeTestCatalog(t)
	var asked []*index.Catalog
	ExposeAuto.lists(listInput{cat: cat, expose: Exposure{Mode: ExposeAuto}, fits: func(c *index.Catalog) bool { asked = append(asked, c); return true }})
	if len(asked) != 1 || asked[0] != cat {
		t.Errorf("fits asked about %v, want once about the catalog", asked)
	}
}

func TestParseMode(t *testing.T) {
	t.Parallel()
	for _, m := range ExposeModes {
		if got, err := ParseMode(string(m)); err != nil || got != m {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", m, got, err, m)
		}
	}
	for _, bad := range []string{"", "Meta", "auto:500", "eager ", strings.Repeat("x", 1000)} {
		got, err := ParseMode(bad)
		if !errors.Is(err, ErrUnknownMode) {
			t.Errorf("ParseMode(%.20q) = %q, %v; want an error wrapping ErrUnknownMode", bad, got, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "meta, eager, core, dynamic, auto, compact, code") || len(msg) > 300 {
			t.Errorf("ParseMode(%.20q) error %q: want the valid modes listed, and the bad name shortened", bad, msg)
		}
	}
}

// TestModesRegistered: every mode has its policy, under its own name,
// once; the strings are those of --expose.
func TestModesRegistered(t *testing.T) {
	t.Parallel()
	want := []Mode{"meta", "eager", "core", "dynamic", "auto", "compact", "code"}
	if !slices.Equal(ExposeModes, want) {
		t.Errorf("ExposeModes = %v, want %v", ExposeModes, want)
	}
	seen := map[Mode]bool{}
	for _, p := range modePolicies {
		if p.lists == nil || p.workflow == "" || seen[p.mode] {
			t.Errorf("policy of %q: lists %v, workflow %q, registered before: %v", p.mode, p.lists != nil, p.workflow, seen[p.mode])
		}
		seen[p.mode] = true
	}
}
