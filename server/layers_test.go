package server

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The server talks to ranking through search only: it must not reach
// into the embedders, their word statistics included (issue 25, item 6).
// That holds for its sub-packages too (server/gateway, server/stdio, ...),
// and none of them may import the server: it sits on top of them.
func TestServerImportsNoEmbedder(t *testing.T) {
	const module = "github.com/toolscout/toolscout/"
	fset := token.NewFileSet()
	pkgs := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Join("server", filepath.Dir(path)))
		pkgs[pkg] = true
		ast, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range ast.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			switch {
			case ip == module+"embed":
				t.Errorf("%s imports %s: ask package search instead", path, ip)
			case ip == module+"server" && pkg != "server":
				t.Errorf("%s imports %s: the server is built on %s, not the other way", path, ip, pkg)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"server", "server/gateway", "server/stdio", "server/relay"} {
		if !pkgs[want] {
			t.Errorf("package %s not checked: the walk missed it (checked %v)", want, pkgs)
		}
	}
}
