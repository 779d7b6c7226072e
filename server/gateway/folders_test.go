package gateway

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestFolders: a stdio server's folders are the absolute paths of
// existing directories among its arguments; a file, a relative path, a
// missing folder, a remote server and an unknown domain give none.
func TestFolders(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	g := New(Options{Upstreams: []UpstreamConfig{
		{Domain: "files", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", dir + "/", "relative/dir", filepath.Join(dir, "missing"), other}},
		{Domain: "remote", URL: "http://127.0.0.1:9/mcp", Args: []string{dir}},
	}})
	for _, tc := range []struct {
		domain string
		want   []string
	}{
		{"files", []string{dir, other}},
		{"remote", nil},
		{"nobody", nil},
	} {
		if got := g.Upstreams().Folders(tc.domain); !slices.Equal(got, tc.want) {
			t.Errorf("Folders(%q) = %q, want %q", tc.domain, got, tc.want)
		}
	}
}
