package main

import (
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/synth"
)

// writeSynthCatalog writes a seeded catalog of n tools to a file.
func writeSynthCatalog(t *testing.T, n int) string {
	t.Helper()
	cat, err := synth.Catalog(n, 1)
	if err != nil {
		t.Fatal(err)
	}
	data, err := synth.CatalogJSON(cat)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "catalog.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestKillDuringIndex kills `toolscout index` (SIGKILL) at seeded points
// of a cold index of 1,200 tools, 20 times: every time, the next search
// answers, healing whatever the kill left half-written. 1,200 tools are
// two Bleve batches (1,000 and 200: index/keyword's keywordBatchSize),
// so a kill can land in a batch's segment or their merge as well as in
// the catalog cache, the vectors or the statistics. Each kill's index
// and the search that heals it scale with the catalog: 2,000 tools
// (5,000 before them) took about 1.4 times the CPU. The second batch's
// segment being smaller, a kill lands in its write less often than at
// 2,000; one in the first batch's segment leaves the same kind of cut
// file.
func TestKillDuringIndex(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills a process 20 times")
	}
	bin := buildBinary(t)
	catalog := writeSynthCatalog(t, 1200)
	// How long a full index takes here bounds the kill delays.
	full := time.Now()
	if out, err := exec.Command(bin, "index", "--catalog", catalog, "--data-dir", t.TempDir(), "--embedder", "builtin").CombinedOutput(); err != nil {
		t.Fatalf("index: %v\n%s", err, out)
	}
	span := time.Since(full)
	rng := rand.New(rand.NewSource(42))
	healed := 0
	for i := 0; i < 20; i++ {
		dir := t.TempDir()
		cmd := exec.Command(bin, "index", "--catalog", catalog, "--data-dir", dir, "--embedder", "builtin")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		delay := time.Duration(rng.Int63n(int64(span)))
		time.Sleep(delay)
		cmd.Process.Kill()
		cmd.Wait()
		out, err := exec.Command(bin, "search", "--catalog", catalog, "--data-dir", dir, "--embedder", "builtin", "--json", "--limit", "3", "list the invoices of a customer").CombinedOutput()
		if err != nil || !strings.Contains(string(out), `"results": [`) || strings.Contains(string(out), "panic") {
			t.Fatalf("kill %d after %s: the next search failed: %v\n%.2000s", i+1, delay, err, out)
		}
		if strings.Contains(string(out), "could not be read") {
			healed++
		}
	}
	t.Logf("20 kills within %s; %d left something the next search healed", span, healed)
}

// TestKillBeforeTheFitIsSaved: a re-index writes the indexes, then the
// built-in embedder's fitted statistics. A kill between the two left the
// previous catalog's statistics, and the next run, the indexes telling it
// nothing changed, reused them for good: the ranking stayed different
// from a clean build, with no warning. This test leaves the data dir as
// such a kill does (the indexes and catalog of the new catalog, the
// statistics of the old one) and wants the statistics fitted again, one
// warning, and the ranking of a clean build. Its 16 commands run as the
// built binary: in-process under -race they took 3 to 4 CPU s.
func TestKillBeforeTheFitIsSaved(t *testing.T) {
	t.Parallel()
	specs := synth.Specs(400, 40, 1)
	old, err := index.NewCatalog(specs)
	if err != nil {
		t.Fatal(err)
	}
	// 50 of 400 tools change: far more than the drift a fit tolerates.
	for d := range specs {
		for i := range specs[d].Tools {
			if i%8 == 0 {
				specs[d].Tools[i].Description += " Also exports the audit trail of every archived invoice."
			}
		}
	}
	changed, err := index.NewCatalog(specs)
	if err != nil {
		t.Fatal(err)
	}
	catalog := filepath.Join(t.TempDir(), "catalog.json")
	write := func(cat *index.Catalog) {
		data, err := synth.CatalogJSON(cat)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(catalog, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cli := func(dir string, args ...string) (string, string) {
		t.Helper()
		args = append(args, "--catalog", catalog, "--data-dir", dir, "--embedder", "builtin")
		stdout, stderr, code := runBinary(t, nil, args...)
		if code != 0 {
			t.Fatalf("toolscout %v: exit %d\n%s", args, code, stderr)
		}
		return stdout, stderr
	}
	queries := []string{"export the audit trail of archived invoices", "list open tickets", "restart a failed deployment", "share a calendar event"}
	ranking := func(dir string) (string, string) {
		var out, warnings strings.Builder
		for _, q := range queries {
			stdout, stderr := cli(dir, "search", "--mode", "semantic", "--json", "--limit", "10", q)
			out.WriteString(stdout)
			warnings.WriteString(stderr)
		}
		return out.String(), warnings.String()
	}

	clean := t.TempDir()
	write(changed)
	cli(clean, "index")
	want, _ := ranking(clean)

	dir := t.TempDir()
	write(old)
	cli(dir, "index")
	fits := func() []string {
		f, _ := filepath.Glob(filepath.Join(dir, "sets", "*", "fit-*.bin"))
		return f
	}
	oldFits := map[string][]byte{}
	for _, f := range fits() {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		oldFits[f] = data
	}
	if len(oldFits) != 1 {
		t.Fatalf("saved fits after the first index: %v, want one", fits())
	}
	write(changed)
	cli(dir, "index")
	// The kill: the new statistics never reached the disk, the old ones
	// were not yet deleted.
	for _, f := range fits() {
		os.Remove(f)
	}
	for f, data := range oldFits {
		os.WriteFile(f, data, 0o644)
	}

	got, warnings := ranking(dir)
	if got != want {
		t.Errorf("ranking after the kill differs from a clean build:\n got %.600s\nwant %.600s", got, want)
	}
	if n := strings.Count(warnings, "statistics"); n != 1 {
		t.Errorf("stderr after the kill has %d warnings about the statistics, want 1:\n%s", n, warnings)
	}
	if _, stderr := cli(dir, "index"); strings.Contains(stderr, "statistics") {
		t.Errorf("the statistics were not saved when fitted again: the next index warns again:\n%s", stderr)
	}
	if again, _ := ranking(dir); again != want {
		t.Error("ranking differs from a clean build once the statistics were fitted again")
	}
}
