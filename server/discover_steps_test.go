package server

import (
	"slices"
	"testing"
)

// TestDomainContents runs discover_tools' listing of the domains, a
// function of the catalog, the servers without tools and the enabled
// set: no server.
func TestDomainContents(t *testing.T) {
	t.Parallel()
	cat := modeTestCatalog(t)
	tests := []struct {
		name        string
		down        map[string]string
		enabled     map[string]bool
		cursor      string
		size        int
		wantDomains []string
		wantTotal   int
		wantNext    string
		wantErr     bool
	}{
		{name: "every domain", size: PageSize, wantDomains: []string{"github", "weather"}, wantTotal: 4},
		{name: "a page of one", size: 1, wantDomains: []string{"github"}, wantTotal: 4, wantNext: "1"},
		{name: "the second page", cursor: "1", size: 1, wantDomains: []string{"weather"}, wantTotal: 4},
		{name: "a cursor past the end", cursor: "9", size: 1, wantErr: true},
		{name: "a server without tools", down: map[string]string{"jira": "connection refused"}, size: PageSize, wantDomains: []string{"github", "jira", "weather"}, wantTotal: 4},
		{name: "enabled domains and groups", enabled: map[string]bool{"weather": true, "github/repos": true}, size: PageSize, wantDomains: []string{"github", "weather"}, wantTotal: 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := domainContents(cat, tc.down, tc.enabled, tc.cursor, tc.size)
			if tc.wantErr {
				if err == nil {
					t.Errorf("domainContents(cursor %q) = %+v, want an error", tc.cursor, got)
				}
				return
			}
			var names []string
			for _, d := range got.Domains {
				names = append(names, d.Name)
				if tc.enabled[d.Name] != d.Enabled {
					t.Errorf("domain %s enabled = %v, want %v", d.Name, d.Enabled, tc.enabled[d.Name])
				}
				if why, ok := tc.down[d.Name]; ok && d.Status != "unavailable: "+why {
					t.Errorf("domain %s status = %q, want it unavailable", d.Name, d.Status)
				}
				if d.Name == "github" && (d.ToolCount != 3 || d.DisabledTools != 1) {
					t.Errorf("github counts %d tools, %d disabled; want 3 and 1", d.ToolCount, d.DisabledTools)
				}
				if d.Name == "github" && tc.enabled["github/repos"] && !slices.Equal(d.EnabledGroups, []string{"repos"}) {
					t.Errorf("github enabled groups = %v, want [repos]", d.EnabledGroups)
				}
			}
			if err != nil || !slices.Equal(names, tc.wantDomains) || got.TotalTools != tc.wantTotal || got.NextCursor != tc.wantNext {
				t.Errorf("domainContents = %v (total %d, next %q), %v; want %v (total %d, next %q)", names, got.TotalTools, got.NextCursor, err, tc.wantDomains, tc.wantTotal, tc.wantNext)
			}
		})
	}
}

// TestDomainTools runs discover_tools' listing of a domain's tools.
func TestDomainTools(t *testing.T) {
	t.Parallel()
	cat := modeTestCatalog(t)
	tests := []struct {
		name        string
		args        DiscoverArgs
		enabled     map[string]bool
		size        int
		want        []string
		wantEnabled bool
		wantTotal   int
		wantErr     bool
	}{
		{name: "a domain", args: DiscoverArgs{Domain: "github"}, size: PageSize, want: []string{"github__create_issue", "github__list_issues", "github__get_repo"}},
		{name: "with the disabled", args: DiscoverArgs{Domain: "github", IncludeDisabled: true}, size: PageSize, want: []string{"github__create_issue", "github__list_issues", "github__get_repo", "github__delete_repo"}},
		{name: "a group", args: DiscoverArgs{Domain: "github", Group: "repos"}, enabled: map[string]bool{"github/repos": true}, size: PageSize, want: []string{"github__get_repo"}, wantEnabled: true},
		{name: "a page", args: DiscoverArgs{Domain: "github"}, enabled: map[string]bool{"github": true}, size: 2, want: []string{"github__create_issue", "github__list_issues"}, wantEnabled: true, wantTotal: 3},
		{name: "an unknown domain", args: DiscoverArgs{Domain: "jira"}, size: PageSize, wantErr: true},
		{name: "an unknown group", args: DiscoverArgs{Domain: "github", Group: "wiki"}, size: PageSize, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := domainTools(cat, tc.enabled, tc.args, tc.size, toolStatus{})
			if tc.wantErr {
				if err == nil {
					t.Errorf("domainTools(%+v) = %+v, want an error", tc.args, got)
				}
				return
			}
			var names []string
			for _, e := range got.Tools {
				names = append(names, e.Name)
			}
			if err != nil || !slices.Equal(names, tc.want) || got.Enabled != tc.wantEnabled || got.Total != tc.wantTotal {
				t.Errorf("domainTools(%+v) = %v (enabled %v, total %d), %v; want %v (enabled %v, total %d)", tc.args, names, got.Enabled, got.Total, err, tc.want, tc.wantEnabled, tc.wantTotal)
			}
		})
	}
}

// TestDisabledOutcome: what disable_domain says it took off the list.
func TestDisabledOutcome(t *testing.T) {
	t.Parallel()
	cat := modeTestCatalog(t)
	gh := cat.Domain("github")
	tests := []struct {
		name          string
		key           string
		before, after map[string]bool
		wantRemoved   []string
		wantNote      string
	}{
		{name: "a domain", key: "github", before: map[string]bool{"github": true}, after: map[string]bool{}, wantRemoved: []string{"github__create_issue", "github__list_issues", "github__get_repo"}},
		{name: "not enabled", key: "github", before: map[string]bool{}, after: map[string]bool{}, wantNote: "github was not enabled: nothing removed"},
		{name: "a group under its enabled domain", key: "github/repos", before: map[string]bool{"github": true, "github/repos": true}, after: map[string]bool{"github": true}, wantNote: "github/repos's tools stay listed: domain github is enabled"},
		{name: "a group", key: "github/repos", before: map[string]bool{"github/repos": true}, after: map[string]bool{}, wantRemoved: []string{"github__get_repo"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			removed, note := disabledOutcome(gh, "github", tc.key, tc.before, tc.after)
			if !slices.Equal(removed, tc.wantRemoved) || note != tc.wantNote {
				t.Errorf("disabledOutcome(%s) = %v, %q; want %v, %q", tc.key, removed, note, tc.wantRemoved, tc.wantNote)
			}
		})
	}
}
