// Package srccheck reads a package's Go source for the tests that hold
// its shape (how many methods a type has, which functions of another
// package it calls, how complex its functions are): go/parser over the
// non-test files of a folder, nothing compiled; MethodSets alone
// type-checks the package (go/types), for the methods callers see.
package srccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
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
	var out []Method
	for path, f := range parseDir(t, dir) {
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

// parseDir parses the non-test Go files of dir, by path; it fails t
// when a file cannot be read.
func parseDir(t testing.TB, dir string) map[string]*ast.File {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string]*ast.File{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		out[path] = f
	}
	return out
}

// Call is a call, in function Func of File, of function Name of another
// package.
type Call struct {
	File, Func, Name string
}

// Calls returns the calls, in the non-test files of dir, of the
// package-level functions names of the package imported as pkgPath
// (under whatever name each file imports it).
func Calls(t testing.TB, dir, pkgPath string, names ...string) []Call {
	t.Helper()
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []Call
	for path, f := range parseDir(t, dir) {
		local := importName(f, pkgPath)
		if local == "" {
			continue
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == local && want[sel.Sel.Name] {
					out = append(out, Call{File: path, Func: fd.Name.Name, Name: sel.Sel.Name})
				}
				return true
			})
		}
	}
	return out
}

// importName returns the name f imports pkgPath under ("" when it does
// not; the path's last element when unnamed).
func importName(f *ast.File, pkgPath string) string {
	for _, im := range f.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil || p != pkgPath {
			continue
		}
		if im.Name != nil {
			return im.Name.Name
		}
		return pkgPath[strings.LastIndex(pkgPath, "/")+1:]
	}
	return ""
}

// Func is a function or method declared in File, and its cyclomatic
// complexity.
type Func struct {
	File, Name string
	Complexity int
}

// Complexities returns the cyclomatic complexity of each function and
// method declared in the non-test files of dir, counted as gocyclo
// counts it: 1, plus 1 for each if, for, range, non-default case and
// select case, && and ||, function literals in a body counting toward
// the function. Methods are named Type.Method.
func Complexities(t testing.TB, dir string) []Func {
	t.Helper()
	var out []Func
	for path, f := range parseDir(t, dir) {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				recv := fd.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				if id, ok := recv.(*ast.Ident); ok {
					name = id.Name + "." + name
				}
			}
			out = append(out, Func{File: path, Name: name, Complexity: complexity(fd)})
		}
	}
	return out
}

func complexity(fd *ast.FuncDecl) int {
	c := 1
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if n.List != nil {
				c++
			}
		case *ast.CommClause:
			if n.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if n.Op == token.LAND || n.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}

// Import is a package imported by a non-test file, and that file.
type Import struct {
	File, Path string
}

// Imports returns the imports of the non-test files of dir; it fails t
// when a file cannot be read.
func Imports(t testing.TB, dir string) []Import {
	t.Helper()
	var out []Import
	for path, f := range parseDir(t, dir) {
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, Import{File: path, Path: p})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Path < out[j].Path
	})
	return out
}

// MethodsByType returns the methods declared in the non-test files of
// dir, by the name of their receiver's type (generic receivers by the
// type's name); it fails t when a file cannot be read.
func MethodsByType(t testing.TB, dir string) map[string][]Method {
	t.Helper()
	out := map[string][]Method{}
	for path, f := range parseDir(t, dir) {
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
