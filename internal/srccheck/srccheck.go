// Package srccheck reads a package's Go source for the tests that hold
// its shape (how many methods a type has): go/parser over the non-test
// files of a folder, nothing compiled.
package srccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Method is a method declared on a type, and the file it is in.
type Method struct {
	File, Name string
}

// Methods returns the methods declared on typ or *typ in the non-test
// files of dir, exported ones only with exported; it fails t when a file
// cannot be read.
func Methods(t testing.TB, dir, typ string, exported bool) []Method {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []Method
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
			if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 || exported && !fd.Name.IsExported() {
				continue
			}
			recv := fd.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			if id, ok := recv.(*ast.Ident); ok && id.Name == typ {
				out = append(out, Method{File: path, Name: fd.Name.Name})
			}
		}
	}
	return out
}

// Import is a package imported by a non-test file, and that file.
type Import struct {
	File, Path string
}

// Imports returns the imports of the non-test files of dir; it fails t
// when a file cannot be read.
func Imports(t testing.TB, dir string) []Import {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []Import
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, Import{File: path, Path: p})
		}
	}
	return out
}
