// Package srccheck reads a package's Go source for the tests that hold
// its shape (how many methods a type has): go/parser over the non-test
// files of a folder, nothing compiled.
package srccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
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

// MethodsByType returns the methods declared in the non-test files of
// dir, by the name of their receiver's type (generic receivers by the
// type's name); it fails t when a file cannot be read.
func MethodsByType(t testing.TB, dir string) map[string][]Method {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string][]Method{}
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
			if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 {
				continue
			}
			if name := receiverType(fd.Recv.List[0].Type); name != "" {
				out[name] = append(out[name], Method{File: path, Name: fd.Name.Name})
			}
		}
	}
	return out
}

// receiverType returns the name of a receiver's type: T, *T, T[P] or
// *T[P, Q].
func receiverType(e ast.Expr) string {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	switch x := e.(type) {
	case *ast.IndexExpr:
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// Func is a function or method declared in a file, with its cyclomatic
// complexity.
type Func struct {
	File, Name string
	Complexity int
}

// Complexities returns the functions and methods declared in the
// non-test files of dir with their cyclomatic complexity, counted as
// gocyclo counts it: 1, plus one for each if, for, range, case and
// select case other than default, && and ||. It fails t when a file
// cannot be read.
func Complexities(t testing.TB, dir string) []Func {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []Func
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
			if !ok || fd.Body == nil {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				name = receiverType(fd.Recv.List[0].Type) + "." + name
			}
			out = append(out, Func{File: path, Name: name, Complexity: complexity(fd.Body)})
		}
	}
	return out
}

// complexity is the cyclomatic complexity of a function's body.
func complexity(body *ast.BlockStmt) int {
	n := 1
	ast.Inspect(body, func(node ast.Node) bool {
		switch x := node.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			n++
		case *ast.CaseClause:
			if x.List != nil {
				n++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				n++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				n++
			}
		}
		return true
	})
	return n
}
