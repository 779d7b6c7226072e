package gateway

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"sort"
	"strings"
	"testing"
)

// maxMethods bounds the methods declared on any one type of the package
// (issue 49): Gateway routes between upstreams, an upstream owns one
// server's life, and what is separable (the upstreams by domain, what
// they serve, their prompts and resources, the calls in flight, the
// pins) is a type of its own. A ratchet: a type that grows past it is a
// concern to split off, not a bound to raise.
const maxMethods = 15

// TestMethodsPerType counts the methods declared on each type of the
// package, in its non-test files, and fails for one over maxMethods.
func TestMethodsPerType(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string][]string{}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Recv == nil || len(fd.Recv.List) == 0 {
					continue
				}
				if name := receiverType(fd.Recv.List[0].Type); name != "" {
					methods[name] = append(methods[name], fd.Name.Name)
				}
			}
		}
	}
	for _, typ := range []string{"Gateway", "upstream"} {
		if len(methods[typ]) == 0 {
			t.Errorf("no methods found on %s: the count reads the wrong files", typ)
		}
	}
	for typ, ms := range methods {
		if len(ms) > maxMethods {
			sort.Strings(ms)
			t.Errorf("%s has %d methods, over %d: split a concern off into a type of its own (%s)", typ, len(ms), maxMethods, strings.Join(ms, ", "))
		}
	}
}

// receiverType returns the name of a method's receiver type (T or *T,
// with or without type parameters).
func receiverType(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
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
