package srccheck_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const racetestPath = "github.com/toolscout/toolscout/internal/racetest"

// TestPlainTestsListed: the tests that skip themselves under -race
// (racetest.Plain) are the Makefile's PLAIN_TESTS, which make unit runs
// in its plain pass. A test that calls Plain and is not listed would run
// in no build of make test; a listed test that does not call it would
// run in both.
func TestPlainTestsListed(t *testing.T) {
	root := moduleRoot(t)
	listed := plainTests(t, filepath.Join(root, "Makefile"))
	if len(listed) == 0 {
		t.Fatal("the Makefile's PLAIN_TESTS lists no test")
	}
	calling := plainCallers(t, root)
	for _, tc := range calling {
		if !slices.Contains(listed, tc) {
			t.Errorf("%s calls racetest.Plain and is not in the Makefile's PLAIN_TESTS: it runs in no build of make test; add it there", tc)
		}
	}
	for _, tc := range listed {
		if !slices.Contains(calling, tc) {
			t.Errorf("the Makefile's PLAIN_TESTS lists %s, which does not call racetest.Plain (or does not exist): it would run in both builds", tc)
		}
	}
}

// plainTests returns the entries of the Makefile's PLAIN_TESTS
// ("./pkg:TestName" each).
func plainTests(t *testing.T, makefile string) []string {
	t.Helper()
	out := makeListEntries(t, makefile, "PLAIN_TESTS")
	for _, f := range out {
		pkg, name, ok := strings.Cut(f, ":")
		if !ok || !strings.HasPrefix(pkg, "./") || !strings.HasPrefix(name, "Test") {
			t.Fatalf("PLAIN_TESTS entry %q is not ./pkg:TestName", f)
		}
	}
	return out
}

// plainCallers returns, as "./pkg:TestName", the test functions under
// root whose bodies call racetest.Plain.
func plainCallers(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		local := ""
		for _, im := range f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == racetestPath {
				local = "racetest"
				if im.Name != nil {
					local = im.Name.Name
				}
			}
		}
		if local == "" {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || fd.Body == nil || !strings.HasPrefix(fd.Name.Name, "Test") {
				continue
			}
			if callsPlain(fd.Body, local) {
				out = append(out, "./"+filepath.ToSlash(rel)+":"+fd.Name.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// callsPlain reports whether body calls local.Plain.
func callsPlain(body *ast.BlockStmt, local string) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return !found
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Plain" {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == local {
				found = true
			}
		}
		return !found
	})
	return found
}
