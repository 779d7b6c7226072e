package srccheck_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// heavy are the modules a fuzzed decoder's package must not reach: go
// test -fuzz builds every package of the test binary with coverage
// instrumentation, a third variant of each beside the race and plain
// ones, and these are most of a cold `make fuzz` (issue 47, item 5).
var heavy = []string{
	"github.com/blevesearch/bleve",
	"github.com/blevesearch/bleve_index_api",
	"github.com/blevesearch/zapx",
	"github.com/blevesearch/scorch",
	"go.etcd.io/bbolt",
	"github.com/modelcontextprotocol/go-sdk",
	"github.com/philippgille/chromem-go",
	"gonum.org/v1/gonum",
	"github.com/ollama/ollama",
	"net/http",
}

// TestFuzzTargetsAreLight: each package of the Makefile's FUZZ_TARGETS
// (its test binary: the package, its tests and what they import) reaches
// none of the heavy modules, so that `make fuzz` on an empty build cache
// instruments the decoders' few dependencies, not Bleve, the go-sdk or
// chromem-go. A decoder that needs one of their types belongs beside its
// fellows in a format package (index/store/format,
// index/keyword/manifest, embed/fitfile, index/vector/snapfile), not
// back in its caller's.
func TestFuzzTargetsAreLight(t *testing.T) {
	root := moduleRoot(t)
	pkgs := fuzzPackages(t, filepath.Join(root, "Makefile"))
	if len(pkgs) == 0 {
		t.Fatal("the Makefile's FUZZ_TARGETS lists no package")
	}
	gobin := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if os.Getenv("GOROOT") == "" {
		gobin = "go"
	}
	for _, pkg := range pkgs {
		cmd := exec.Command(gobin, "list", "-deps", "-test", pkg)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps -test %s: %v", pkg, err)
		}
		var hits []string
		for _, dep := range strings.Fields(string(out)) {
			for _, h := range heavy {
				if dep == h || strings.HasPrefix(dep, h+"/") {
					hits = append(hits, dep)
					break
				}
			}
		}
		if len(hits) > 0 {
			t.Errorf("fuzzed package %s reaches %d packages of heavy modules (through its imports or its tests' imports), e.g. %s: -fuzz would instrument them all; move its decoders to a package without them",
				pkg, len(hits), strings.Join(hits[:min(len(hits), 4)], ", "))
		}
	}
}

// fuzzPackages returns the packages of the Makefile's FUZZ_TARGETS
// ("./pkg:FuzzName" each), each once.
func fuzzPackages(t *testing.T, makefile string) []string {
	t.Helper()
	var (
		pkgs []string
		seen = map[string]bool{}
	)
	for _, f := range makeListEntries(t, makefile, "FUZZ_TARGETS") {
		pkg, _, ok := strings.Cut(f, ":")
		if !ok || !strings.HasPrefix(pkg, "./") {
			t.Fatalf("FUZZ_TARGETS entry %q is not ./pkg:FuzzName", f)
		}
		if !seen[pkg] {
			seen[pkg] = true
			pkgs = append(pkgs, pkg)
		}
	}
	return pkgs
}

// makeListEntries returns the words of the Makefile variable name,
// assigned with ":=" and continued over lines ending in a backslash.
func makeListEntries(t *testing.T, makefile, name string) []string {
	t.Helper()
	data, err := os.ReadFile(makefile)
	if err != nil {
		t.Fatal(err)
	}
	var (
		out []string
		in  bool
	)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, name+" :="); ok {
			line, in = rest, true
		} else if !in {
			continue
		}
		out = append(out, strings.Fields(strings.TrimSuffix(line, "\\"))...)
		in = strings.HasSuffix(line, "\\")
	}
	return out
}

// moduleRoot returns the folder of go.mod above the test's.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = parent
	}
}
