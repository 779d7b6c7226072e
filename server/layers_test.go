package server

import (
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/internal/srccheck"
)

// The server talks to ranking through search only: it must not reach
// into the embedders, their word statistics included (issue 25, item 6).
// That holds for its sub-packages too (server/gateway, server/stdio, ...),
// and none of them may import the server: it sits on top of them.
func TestServerImportsNoEmbedder(t *testing.T) {
	t.Parallel()
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

// server/gateway and server/arguments are tested and reused on their own:
// no package they import, directly or through others, may be search
// (issue 36, item 2). The string helpers they share with search live in
// internal/text; the word frequencies the gateway weighs a server's
// words by come in its Options.
func TestGatewayAndArgumentsImportNoSearch(t *testing.T) {
	t.Parallel()
	const module = "github.com/toolscout/toolscout/"
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, start := range []string{"server/gateway", "server/arguments"} {
		// via maps each module package reached to the one that imports it.
		via := map[string]string{start: ""}
		queue := []string{start}
		for len(queue) > 0 {
			pkg := queue[0]
			queue = queue[1:]
			bp, err := build.ImportDir(filepath.Join(root, pkg), 0) // non-test files, this platform's
			if err != nil {
				t.Fatalf("%s: %v", pkg, err)
			}
			for _, ip := range bp.Imports {
				dep, ok := strings.CutPrefix(ip, module)
				if !ok {
					continue
				}
				if _, seen := via[dep]; seen {
					continue
				}
				via[dep] = pkg
				queue = append(queue, dep)
			}
		}
		if _, ok := via["search"]; ok {
			chain := []string{"search"}
			for p := via["search"]; p != ""; p = via[p] {
				chain = append([]string{p}, chain...)
			}
			t.Errorf("%s imports search (%s): move what it needs below search (internal/text), or pass it in", start, strings.Join(chain, " → "))
		}
		if len(via) < 3 {
			t.Errorf("%s: only %d packages reached (%v): the walk is broken", start, len(via), via)
		}
	}
}

// maxServerMethods bounds the methods of Server (issue 36, item 2): the
// Server wires the parts that each do one job (callerScope, startup,
// exposure, metaTools, greeting, httpHandler) and serves them; a new
// job gets a type of its own, not more methods here.
const maxServerMethods = 20

// TestServerHasFewMethods counts the methods declared on Server or
// *Server in the package's non-test files.
func TestServerHasFewMethods(t *testing.T) {
	t.Parallel()
	var methods []string
	for _, m := range srccheck.Methods(t, ".", "Server", false) {
		methods = append(methods, m.File+": "+m.Name)
	}
	if len(methods) == 0 {
		t.Fatal("no methods of Server found: the count is broken")
	}
	if len(methods) > maxServerMethods {
		t.Errorf("Server has %d methods, more than %d: give the new job a type of its own (see server.go)\n%s", len(methods), maxServerMethods, strings.Join(methods, "\n"))
	}
}

// maxMethods bounds the methods of any type of the package (issue 49,
// item 2): a type that grows past it does more than one job; give the
// new one a type of its own, as viewTable was given the views.
const maxMethods = 15

// overMethods are the types over maxMethods today, with their count: a
// ratchet, each may only shrink (lower its count here when it does, and
// drop it once it is within maxMethods).
var overMethods = map[string]int{}

// TestNoTypeHasManyMethods counts the methods of each type in the
// package's non-test files.
func TestNoTypeHasManyMethods(t *testing.T) {
	t.Parallel()
	byType := srccheck.MethodsByType(t, ".")
	if len(byType["exposure"]) == 0 || len(byType["Server"]) == 0 {
		t.Fatalf("no methods of exposure or Server found: the count is broken (%d types)", len(byType))
	}
	for typ, methods := range byType {
		limit, over := overMethods[typ]
		if !over {
			limit = maxMethods
		}
		if len(methods) > limit {
			var names []string
			for _, m := range methods {
				names = append(names, m.File+": "+m.Name)
			}
			t.Errorf("%s has %d methods, more than %d: give the new job a type of its own\n%s", typ, len(methods), limit, strings.Join(names, "\n"))
		}
		if over && len(methods) < limit {
			t.Errorf("%s has %d methods, fewer than the %d overMethods allows: lower its entry (or drop it at %d or fewer)", typ, len(methods), limit, maxMethods)
		}
	}
	// What callers in other packages see: the exported methods of each
	// exported type, promoted ones included (a type embedding others
	// offers their methods too).
	for typ, methods := range srccheck.MethodSets(t, ".") {
		if len(methods) > maxMethods {
			t.Errorf("callers of %s see %d methods, more than %d (promoted ones included)", typ, len(methods), maxMethods)
		}
	}
	for typ := range overMethods {
		if _, ok := byType[typ]; !ok {
			t.Errorf("overMethods names %s, which has no methods: drop its entry", typ)
		}
	}
}

// maxComplexity bounds the cyclomatic complexity of the package's
// functions (issue 49: metaTools.discover was 44, setEnabled 28): a
// function past it does several steps that read better apart.
const maxComplexity = 25

// TestFunctionsAreSimple counts the cyclomatic complexity of each
// function of the package's non-test files.
func TestFunctionsAreSimple(t *testing.T) {
	t.Parallel()
	funcs := srccheck.Complexities(t, ".")
	if len(funcs) < 100 {
		t.Fatalf("only %d functions found: the count is broken", len(funcs))
	}
	for _, f := range funcs {
		if f.Complexity > maxComplexity {
			t.Errorf("%s: %s has cyclomatic complexity %d, more than %d: split it into steps", f.File, f.Name, f.Complexity, maxComplexity)
		}
	}
}
