package main

import (
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
// of a cold index of 5,000 tools, 20 times: every time, the next search
// answers, healing whatever the kill left half-written.
func TestKillDuringIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a process 20 times")
	}
	bin := buildBinary(t)
	catalog := writeSynthCatalog(t, 5000)
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
