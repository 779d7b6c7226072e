package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/internal/ollamafake"
)

// fakeOllamaHost starts a fake Ollama v0.17.4 holding the given models
// (name → capabilities; embedding models embed in 64 dims) and returns
// it with the environment that points OLLAMA_HOST at it. The tests run
// the built binary with that environment (runBinary), not t.Setenv and
// in-process under -race: they run in parallel, and the commands'
// concurrency is raced in their packages.
func fakeOllamaHost(t *testing.T, installed map[string][]string) (*ollamafake.Server, []string) {
	t.Helper()
	f := &ollamafake.Server{Models: map[string]int{}, Installed: installed, Vector: ollamafake.BagOfWords}
	for name, caps := range installed {
		for _, c := range caps {
			if c == "embedding" {
				f.Models[name] = 64
				f.Models[strings.TrimSuffix(name, ":latest")] = 64
			}
		}
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, []string{"OLLAMA_HOST=" + srv.URL}
}

// ollamaDown is the environment of a machine where Ollama does not run.
var ollamaDown = []string{"OLLAMA_HOST=127.0.0.1:9"}

func TestAutoUsesTheInstalledEmbeddingModel(t *testing.T) {
	t.Parallel()
	f, env := fakeOllamaHost(t, map[string][]string{
		"tiny-embed:latest": {"embedding"},
		"llama3.2:latest":   {"completion", "tools"},
	})
	dir := t.TempDir()
	stdout, stderr, code := runBinary(t, env, "search", "--data-dir", dir, "--json", "--limit", "3", "send an email to the team")
	if code != 0 {
		t.Fatalf("search: exit %d\n%s", code, stderr)
	}
	var out struct {
		Embedder string `json:"embedder"`
		Results  []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if out.Embedder != "ollama/tiny-embed" || len(out.Results) != 3 {
		t.Errorf("search with no flags ranked with %q (%d results), want ollama/tiny-embed", out.Embedder, len(out.Results))
	}
	if strings.Contains(stderr, "built-in embedder") {
		t.Errorf("search fell back although an embedding model is installed:\n%s", stderr)
	}
	// An unknown model gets no prompt prefixes.
	for _, r := range f.Requests() {
		if r.Model != "tiny-embed" || strings.HasPrefix(r.Input[0], "search_") {
			t.Errorf("embed request %q %q: want model tiny-embed without prompts", r.Model, r.Input[0])
			break
		}
	}
	stdout, _, code = runBinary(t, env, "doctor", "--data-dir", dir)
	if code != 0 || !strings.Contains(stdout, "embedding models: tiny-embed") || !strings.Contains(stdout, "ok    model      ollama/tiny-embed") ||
		!strings.Contains(stdout, "64 dimensions") {
		t.Errorf("doctor: exit %d\n%s", code, stdout)
	}
}

// progressLines matches the lines a progress prints off a terminal.
var progressLines = regexp.MustCompile(`(?m)^[^\n:]+: [0-9]+/[0-9]+\n`)

func TestAutoFallsBackWithAReason(t *testing.T) {
	t.Parallel()
	_, env := fakeOllamaHost(t, map[string][]string{"llama3.2:latest": {"completion", "tools"}})
	dir := t.TempDir()
	stdout, stderr, code := runBinary(t, env, "search", "--data-dir", dir, "--json", "--limit", "1", "send an email")
	if code != 0 || !strings.Contains(stdout, `"embedder": "builtin/`) {
		t.Fatalf("search: exit %d\n%s%s", code, stdout, stderr)
	}
	// Progress lines ("embedding builtin/...: 32/302") come when the
	// embedding takes over two seconds, as on a loaded machine: they are
	// not what this is about.
	if rest := progressLines.ReplaceAllString(stderr, ""); rest != "" {
		t.Errorf("search that fell back to the built-in embedder printed:\n%s\nwant nothing at the default log level", stderr)
	}
	_, stderr, _ = runBinary(t, env, "search", "--data-dir", dir, "--log-level", "info", "--limit", "1", "send an email")
	if n := strings.Count(stderr, "answers but has no embedding model"); n != 1 || !strings.Contains(stderr, "ollama pull nomic-embed-text") || strings.Contains(stderr, "WARN") {
		t.Errorf("stderr at --log-level info says why %d times, want once, at info, with what to pull:\n%s", n, stderr)
	}
	stdout, _, code = runBinary(t, env, "doctor", "--data-dir", dir)
	if code != 0 || !strings.Contains(stdout, "note  model      no embedding model installed") || !strings.Contains(stdout, "run `ollama pull nomic-embed-text`") {
		t.Errorf("doctor: exit %d, want 0 with a note saying what to pull\n%s", code, stdout)
	}
	// --embedder ollama makes the same a failure.
	stdout, _, code = runBinary(t, env, "doctor", "--data-dir", dir, "--embedder", "ollama")
	if code != 1 || !strings.Contains(stdout, "FAIL  model") {
		t.Errorf("doctor --embedder ollama: exit %d, want 1\n%s", code, stdout)
	}
}

func TestDoctorOllamaDownIsANoteInAuto(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stdout, _, code := runBinary(t, ollamaDown, "doctor", "--data-dir", dir)
	if code != 0 || !strings.Contains(stdout, "note  ollama") || !strings.Contains(stdout, "ollama serve") {
		t.Errorf("doctor with Ollama down: exit %d, want 0 with a note\n%s", code, stdout)
	}
	// Without Ollama the built-in embedder is the normal case: search,
	// eval and serve say so at info level, not as a warning.
	for _, args := range [][]string{
		{"search", "--data-dir", dir, "--limit", "1", "send an email"},
		{"search", "--data-dir", dir, "--mode", "keyword", "--limit", "1", "send an email"},
		// A dataset of two queries: what is checked is what eval says
		// on its way, not how it ranks (the built-in datasets' 641
		// queries under -race: about 2 CPU s).
		{"eval", "--data-dir", dir, "--dataset", tinyDataset(t, t.TempDir()), "--modes", "keyword", "--k", "1"},
	} {
		if _, stderr, code := runBinary(t, ollamaDown, args...); code != 0 || strings.Contains(stderr, "Ollama") {
			t.Errorf("%v with Ollama down: exit %d, stderr %q; want nothing said", args, code, stderr)
		}
	}
	_, stderr, _ := runBinary(t, ollamaDown, "search", "--data-dir", dir, "--log-level", "info", "--limit", "1", "send an email")
	if n := strings.Count(stderr, "Ollama not reachable at http://127.0.0.1:9"); n != 1 || !strings.Contains(stderr, "level=INFO") {
		t.Errorf("search --log-level info with Ollama down: stderr %q, want the reason once, at info", stderr)
	}
}

func TestEvalComparesInstalledModels(t *testing.T) {
	t.Parallel()
	_, env := fakeOllamaHost(t, map[string][]string{
		"tiny-embed:latest":       {"embedding"},
		"nomic-embed-text:latest": {"embedding"},
		"llama3.2:latest":         {"completion"},
	})
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	// A dataset of two queries: the test is of which runs eval makes (the
	// built-in datasets' 641 queries took 30 s of the package's time).
	_, stderr, code := runBinary(t, env, "eval", "--data-dir", dir, "--dataset", tinyDataset(t, dir), "--models", "all-installed", "--format", "json", "--out", out)
	if code != 0 {
		t.Fatalf("eval --models all-installed: exit %d\n%s", code, stderr)
	}
	// Ollama's indexes are kept between runs, in the data dir's eval/.
	if caches, _ := filepath.Glob(filepath.Join(dir, "eval", "eval-*-ollama-*")); len(caches) != 2 {
		t.Errorf("eval kept %q in the data dir, want one folder of indexes per Ollama model under eval/", caches)
	}
	rep := readReport(t, out)
	var got []string
	for _, r := range rep.Datasets[0].Runs {
		got = append(got, r.Label+"="+r.Embedder)
	}
	want := "keyword=none semantic builtin=builtin/wordvec-v2 hybrid builtin=builtin/wordvec-v2 " +
		"semantic nomic-embed-text=ollama/nomic-embed-text hybrid nomic-embed-text=ollama/nomic-embed-text " +
		"semantic tiny-embed=ollama/tiny-embed hybrid tiny-embed=ollama/tiny-embed"
	if strings.Join(got, " ") != want {
		t.Errorf("runs = %q\nwant %q", strings.Join(got, " "), want)
	}
	if _, stderr, code := runCLI(t, "eval", "--data-dir", dir, "--models", "x", "--grid", "g.json"); code != 2 || !strings.Contains(stderr, "--models and --grid") {
		t.Errorf("--models with --grid: exit %d, %q", code, stderr)
	}
}

type evalReport struct {
	Datasets []struct {
		Name string
		Runs []struct {
			Label    string
			Mode     string
			Embedder string
		}
	}
}

func readReport(t *testing.T, path string) evalReport {
	t.Helper()
	var rep evalReport
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}
