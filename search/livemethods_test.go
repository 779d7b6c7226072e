package search

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// liveMethods are the exported methods Live may have (issue 36, item
// 1): the goal is Open (a function), Update, Swap and Follow, with the
// typed state (State and the channels derived from it) and Close. The
// others are still here and leave one by one; a method is taken off
// this list when it goes, so that it does not come back.
var liveMethods = []string{
	"Close", "Engine", "Follow", "Load", "Loaded", "Ready",
	"Settled", "State", "Subscribe", "Swap", "Update", "UseCatalog",
}

// TestLiveHasFewMethods fails when Live gains an exported method not in
// liveMethods: a new way to change its state, or an accessor that lets
// callers reach below it (its store).
func TestLiveHasFewMethods(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 || !fd.Name.IsExported() {
				continue
			}
			typ := fd.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if id, ok := typ.(*ast.Ident); ok && id.Name == "Live" {
				found = append(found, fd.Name.Name)
				if !slices.Contains(liveMethods, fd.Name.Name) {
					t.Errorf("%s: Live.%s is new: Live changes state through Open, Update, Swap and Follow only; give the job to one of them (or to the store), or say why in liveMethods", path, fd.Name.Name)
				}
			}
		}
	}
	if !slices.Contains(found, "Follow") {
		t.Fatalf("Live.Follow not found among %v: the count is broken", found)
	}
	for _, m := range liveMethods {
		if !slices.Contains(found, m) {
			t.Errorf("Live.%s is gone: take it off liveMethods so that it does not come back", m)
		}
	}
}
