package srccheck

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// MethodSets returns, for each exported type declared in the non-test
// files of dir, the exported methods a caller in another package can
// call on it: the method set of *T (of T for an interface) as go/types
// computes it, the methods promoted from embedded fields included, each
// with the file that declares it. Unlike MethodsByType, which reads what
// each type declares, this is what callers see: a type that embeds
// three others offers their methods too.
//
// It type-checks the package, its imports read from the export data the
// go command builds for them (go list -export, a cached build after the
// first), so it fails t when the package does not build.
func MethodSets(t testing.TB, dir string) map[string][]Method {
	t.Helper()
	pkgPath, goFiles, exports := exportData(t, dir)
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range goFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok || file == "" {
			return nil, fmt.Errorf("go list -export gave no export data for %s", path)
		}
		return os.Open(file)
	})
	conf := types.Config{Importer: imp}
	pkg, err := conf.Check(pkgPath, fset, files, nil)
	if err != nil {
		t.Fatalf("type-check %s: %v", pkgPath, err)
	}
	out := map[string][]Method{}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok || !tn.Exported() || tn.IsAlias() {
			continue
		}
		typ := tn.Type()
		if !types.IsInterface(typ) {
			typ = types.NewPointer(typ)
		}
		ms := types.NewMethodSet(typ)
		for i := range ms.Len() {
			m := ms.At(i).Obj()
			if m.Exported() {
				out[name] = append(out[name], Method{File: fset.Position(m.Pos()).Filename, Name: m.Name()})
			}
		}
		sort.Slice(out[name], func(i, j int) bool { return out[name][i].Name < out[name][j].Name })
	}
	return out
}

// exportData returns the import path of the package in dir, its non-test
// files built for this platform, and, by import path, the export data
// file of every package it depends on, as go list -export -deps gives
// them.
func exportData(t testing.TB, dir string) (pkgPath string, goFiles []string, exports map[string]string) {
	t.Helper()
	gobin := "go"
	if root := os.Getenv("GOROOT"); root != "" {
		gobin = filepath.Join(root, "bin", "go")
	}
	cmd := exec.Command(gobin, "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}\t{{join .GoFiles \" \"}}", ".")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export -deps in %s: %v\n%s", dir, err, stderr.String())
	}
	exports = map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), "\t", 3)
		if len(f) != 3 {
			t.Fatalf("go list -export -deps in %s: unexpected line %q", dir, sc.Text())
		}
		exports[f[0]] = f[1]
		// -deps lists the package itself last.
		pkgPath, goFiles = f[0], strings.Fields(f[2])
	}
	return pkgPath, goFiles, exports
}
