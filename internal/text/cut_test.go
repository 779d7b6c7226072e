package text

import (
	"testing"
	"unicode/utf8"
)

func TestPrefix(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 5, "hello"},
		{"hello", 3, "hel"},
		{"héllo", 2, "h"}, // é is 2 bytes: not split
		{"héllo", 3, "hé"},
		{"日本語", 4, "日"},
		{"日本語", 0, ""},
		{"abc", -1, ""},
	} {
		got := Prefix(tc.s, tc.n)
		if got != tc.want || !utf8.ValidString(got) {
			t.Errorf("Prefix(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
