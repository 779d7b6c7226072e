package tsdecl

import (
	"maps"
	"slices"
	"testing"
)

func TestIdent(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "valid identifier", in: "create_entities", want: "create_entities"},
		{name: "dollar and digits kept", in: "$get2", want: "$get2"},
		{name: "hyphens", in: "get-sum", want: "get_sum"},
		{name: "dots and slashes", in: "repo.files/list", want: "repo_files_list"},
		{name: "leading digit", in: "1password", want: "_1password"},
		{name: "reserved word", in: "delete", want: "delete_"},
		{name: "strict-mode name", in: "eval", want: "eval_"},
		{name: "reserved after replacing", in: "new", want: "new_"},
		{name: "not reserved in another case", in: "Delete", want: "Delete"},
		{name: "non-ASCII letters, one _ each", in: "café", want: "caf_"},
		{name: "invalid UTF-8", in: "a\xffb", want: "a_b"},
		{name: "empty", in: "", want: "_"},
		{name: "only punctuation", in: "--", want: "__"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Ident(tt.in); got != tt.want {
				t.Errorf("Ident(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestIdents(t *testing.T) {
	tests := []struct {
		name  string
		names []string
		want  map[string]string
	}{
		{name: "no collision",
			names: []string{"echo", "get-sum"},
			want:  map[string]string{"echo": "echo", "get-sum": "get_sum"}},
		{name: "two invalid names, byte order decides",
			names: []string{"get.sum", "get-sum"},
			want:  map[string]string{"get-sum": "get_sum", "get.sum": "get_sum_2"}},
		{name: "a valid name keeps its identifier",
			names: []string{"get-sum", "get.sum", "get_sum"},
			want:  map[string]string{"get_sum": "get_sum", "get-sum": "get_sum_2", "get.sum": "get_sum_3"}},
		{name: "a suffix that is taken is skipped",
			names: []string{"a-b", "a.b", "a_b_2"},
			want:  map[string]string{"a_b_2": "a_b_2", "a-b": "a_b", "a.b": "a_b_3"}},
		{name: "reserved word next to its escape",
			names: []string{"delete", "delete_"},
			want:  map[string]string{"delete_": "delete_", "delete": "delete__2"}},
		{name: "repeated names count once",
			names: []string{"get-sum", "get-sum"},
			want:  map[string]string{"get-sum": "get_sum"}},
		{name: "none", names: nil, want: map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Idents(tt.names)
			if !maps.Equal(got, tt.want) {
				t.Errorf("Idents(%q) = %v, want %v", tt.names, got, tt.want)
			}
			// The same for any order of the names.
			rev := slices.Clone(tt.names)
			slices.Reverse(rev)
			if again := Idents(rev); !maps.Equal(again, got) {
				t.Errorf("Idents(%q) = %v, but Idents(%q) = %v", rev, again, tt.names, got)
			}
			// Distinct identifiers, each valid.
			seen := map[string]string{}
			for n, id := range got {
				if other, ok := seen[id]; ok {
					t.Errorf("Idents(%q): %q and %q both %q", tt.names, n, other, id)
				}
				seen[id] = n
				if Ident(id) != id {
					t.Errorf("Idents(%q)[%q] = %q, not a valid identifier", tt.names, n, id)
				}
			}
		})
	}
}
