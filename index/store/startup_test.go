package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// openers are the functions (file from the module root, then the
// top-level function's name) allowed to call Open or OpenWith: toolscout's
// start-up (every command opens its data dir through openStore), and the
// research program fusionfit's own, which caches an Ollama embedder's
// indexes in a data dir of its own. Everything else (eval, search,
// server) is handed a store, or a StoreOpener that ends in openStore.
var openers = map[string]bool{
	"cmd/toolscout/app.go:openStore": true,
	"cmd/fusionfit/main.go:run":      true,
	// benchscale's in-process figures open the data dir `toolscout index`
	// built, read-only, as a program's start-up of its own.
	"cmd/benchscale/concurrent.go:inProcess": true,
}

// TestOneStartUpPath fails when production code outside this package
// calls store.Open or store.OpenWith anywhere but in openers.
func TestOneStartUpPath(t *testing.T) {
	found := map[string]bool{}
	eachStoreCall(t, func(rel string) bool { return !strings.HasPrefix(rel, "index/store/") }, func(c storeCall) {
		if c.name != "Open" && c.name != "OpenWith" {
			return
		}
		where := c.rel + ":" + c.fn
		found[where] = true
		if !openers[where] {
			t.Errorf("%s: store.%s in %s: only the program's start-up opens the data dir (cmd/toolscout's openStore); take a *store.Store or an eval.StoreOpener instead", c.pos, c.name, c.fn)
		}
	})
	// The check must see the calls it allows, or it checks nothing.
	for o := range openers {
		if !found[o] {
			t.Errorf("no call of store.Open or OpenWith found in %s: the walk or the parse missed it (or it moved: update openers)", o)
		}
	}
}

// walkGo calls f with each production Go file of the module (no tests,
// no testdata or node_modules), by its path from root and its full path.
func walkGo(root string, f func(rel, path string) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
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
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		return f(rel, path)
	})
}

// TestStoreImportsNoEmbedder: the store runs the embedder's fit through
// the interfaces it declares (fit.go) and knows nothing of ranking: no
// production file of this package imports embed or search.
func TestStoreImportsNoEmbedder(t *testing.T) {
	const module = "github.com/toolscout/toolscout/"
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if ip == module+"embed" || strings.HasPrefix(ip, module+"embed/") || ip == module+"search" || strings.HasPrefix(ip, module+"search/") {
				t.Errorf("%s imports %s: declare the small interface the store needs instead (fit.go)", path, ip)
			}
		}
	}
	if checked < 5 {
		t.Fatalf("only %d files checked", checked)
	}
}

// cmdCalls are the functions of this package cmd/toolscout may call:
// OpenWith (in openStore: TestOneStartUpPath), and what is left to
// move behind the value it returns (issue 36, item 1): the feedback
// lines' codec that replicas write and index --feedback reads (files
// outside the data dir). Everything else about the data dir is a method of Store or an
// Options field; the list only shrinks.
var cmdCalls = map[string]bool{
	"OpenWith":            true,
	"EncodeFeedbackLine":  true,
	"DecodeFeedbackLines": true,
	// doctor's look at catalog files as they are now: no data dir is
	// opened or written (issue 49: cmd builds no catalog itself).
	"InspectCatalog": true,
}

// TestCmdCallsFewStoreFunctions fails when cmd/toolscout calls a
// function of this package not in cmdCalls: a path into the data dir
// that bypasses the store it opened (a set folder, pins or feedback
// made from a path, a prune of a data dir).
func TestCmdCallsFewStoreFunctions(t *testing.T) {
	found := map[string]bool{}
	eachStoreCall(t, func(rel string) bool { return strings.HasPrefix(rel, "cmd/toolscout/") }, func(c storeCall) {
		found[c.name] = true
		if !cmdCalls[c.name] {
			t.Errorf("%s: store.%s: cmd opens the data dir with store.OpenWith (openStore) and asks the Store it returns; make this a method of Store or an Options field", c.pos, c.name)
		}
	})
	for c := range cmdCalls {
		if !found[c] {
			t.Errorf("cmd/toolscout no longer calls store.%s: take it off cmdCalls so that it does not come back (or the walk missed it)", c)
		}
	}
}

// storeCall is a call of a function of this package (store.X(...)) in a
// production file of the module.
type storeCall struct {
	rel  string         // the file, from the module's root
	fn   string         // the top-level function it is in
	name string         // X
	pos  token.Position // where
}

// eachStoreCall calls visit with every package-level call of this
// package's functions in the module's production files whose path from
// the root include accepts: not a method of a value that a local
// variable named store holds.
func eachStoreCall(t *testing.T, include func(rel string) bool, visit func(storeCall)) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	err = walkGo(root, func(rel, path string) error {
		if !include(rel) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		name := storeImportName(f)
		if name == "" {
			return nil
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); !ok || id.Name != name || id.Obj != nil {
					return true
				}
				visit(storeCall{rel: rel, fn: fn.Name.Name, name: sel.Sel.Name, pos: fset.Position(call.Pos())})
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// storeImportName returns the name a file imports index/store under, or
// "" when it does not import it.
func storeImportName(f *ast.File) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "github.com/toolscout/toolscout/index/store" {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return "store"
		}
	}
	return ""
}
