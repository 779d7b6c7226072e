package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// owners are the folders (from the module root) whose code may open
// files in the data dir: this package, the two indexes it opens in their
// folders, and the file helpers they write through.
var owners = []string{"index/store", "index/keyword", "index/vector", "internal/fileio", "internal/checksum"}

// fileCalls are the functions of package os that open, create, change
// or remove files or folders by name.
var fileCalls = map[string]bool{
	"Open": true, "OpenFile": true, "Create": true, "CreateTemp": true, "ReadFile": true, "WriteFile": true,
	"ReadDir": true, "Mkdir": true, "MkdirAll": true, "MkdirTemp": true, "Remove": true, "RemoveAll": true,
	"Rename": true, "Truncate": true, "Chtimes": true, "Symlink": true, "Link": true,
}

// dataDirValue reports whether n names the data dir or a folder in it:
// a dataDir, DataDir or storeDir value, or a store's Dir().
func dataDirValue(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.Ident:
		return strings.EqualFold(n.Name, "dataDir") || strings.EqualFold(n.Name, "storeDir")
	case *ast.CallExpr:
		sel, ok := n.Fun.(*ast.SelectorExpr)
		return ok && sel.Sel.Name == "Dir" && len(n.Args) == 0
	}
	return false
}

// TestOnlyTheStoreOpensTheDataDir: outside the owners, no production
// code hands os or internal/fileio a path built from the data dir (a
// dataDir, DataDir or storeDir value, a store's Dir()): what is in the
// data dir is this package's to open.
func TestOnlyTheStoreOpensTheDataDir(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if name == "node_modules" || name == "testdata" || strings.HasPrefix(name, ".") && rel != "." {
				return filepath.SkipDir
			}
			for _, o := range owners {
				if rel == o {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			// internal/fileio's helpers write and map files as os does.
			if !ok || !(pkg.Name == "os" && fileCalls[sel.Sel.Name] || pkg.Name == "fileio") {
				return true
			}
			for _, arg := range call.Args {
				ast.Inspect(arg, func(n ast.Node) bool {
					if dataDirValue(n) {
						t.Errorf("%s: %s.%s on a path of the data dir: open it through index/store", fset.Position(call.Pos()), pkg.Name, sel.Sel.Name)
						return false
					}
					return true
				})
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d Go files checked: the walk missed the module", checked)
	}
}
