package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolscout/toolscout/eval"
	"github.com/toolscout/toolscout/search"
)

// TestEvalExports: --run-file writes the qrels and a TREC run per run,
// named PREFIX.<dataset>[.<run>], and --per-query a JSON line per run and
// query; both are checked for their folder before the run.
func TestEvalExports(t *testing.T) {
	dir := t.TempDir()
	ds := tinyDataset(t, dir)
	prefix, perQuery := filepath.Join(dir, "exp"), filepath.Join(dir, "q.jsonl")
	_, stderr, code := runCLI(t, "eval", "--data-dir", filepath.Join(dir, "data"), "--embedder", "builtin", "--dataset", ds,
		"--modes", "keyword,hybrid", "--format", "json", "--out", filepath.Join(dir, "r.json"), "--run-file", prefix, "--per-query", perQuery)
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, stderr)
	}
	for name, lines := range map[string]int{"exp.on_call.qrels": 2, "exp.on_call.keyword.run": 2, "exp.on_call.hybrid.run": 4, "q.jsonl": 4} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("eval --run-file --per-query: %v", err)
			continue
		}
		if got := strings.Count(string(data), "\n"); got != lines {
			t.Errorf("%s: %d lines, want %d:\n%s", name, got, lines, data)
		}
		if !strings.Contains(stderr, "wrote "+filepath.Join(dir, name)) {
			t.Errorf("stderr does not say it wrote %s: %s", name, stderr)
		}
	}
	if data, _ := os.ReadFile(prefix + ".on_call.qrels"); !strings.HasPrefix(string(data), "q1 0 pagerduty/list_oncalls 2\n") {
		t.Errorf("qrels = %q", data)
	}

	for _, args := range [][]string{
		{"--run-file", filepath.Join(dir, "missing", "exp")},
		{"--per-query", filepath.Join(dir, "missing", "q.jsonl")},
		{"--per-query", dir + "/"},
		{"--confidence-models", filepath.Join(dir, "m.json")},
		{"--confidence-models", filepath.Join(dir, "m.json"), "--confidence-fit", "--modes", "keyword,hybrid"},
		{"--confidence-models", filepath.Join(dir, "m.json"), "--confidence-fit", "--modes", "keyword,semantic,hybrid", "--embedder", "ollama"},
	} {
		_, stderr, code := runCLI(t, append([]string{"eval", "--dataset", ds}, args...)...)
		if code != 2 || !strings.Contains(stderr, args[0]) {
			t.Errorf("eval %v: exit %d, %q (want a usage error before the run)", args, code, stderr)
		}
	}
}

// builtinEval is the report and the confidence models of one eval of the
// built-in datasets in the modes keyword, semantic and hybrid with
// --confidence-fit, run by the first test that asks for it and shared by
// TestEvalCommandJSON and TestEvalConfidenceModels: the two tests check
// different parts of one run's output. The run is the built binary's,
// not in-process: in-process under -race it cost 13.7 CPU seconds, the
// binary about 2 (docs/benchmarks/2026-12-06-test-cpu-2.md); what these
// tests check is the command's output, and eval's and search's
// concurrency are tested under -race in their packages.
var builtinEval struct {
	once   sync.Once
	dir    string // removed by TestMain
	stderr string
	code   int
}

// evalBuiltin runs that eval once and returns the paths of its JSON
// report and of its models file.
func evalBuiltin(t *testing.T) (report, models string) {
	t.Helper()
	bin := buildBinary(t) // before the once: a failed build fails every caller
	builtinEval.once.Do(func() {
		dir, err := os.MkdirTemp("", "toolscout-eval-test-")
		if err != nil {
			builtinEval.stderr, builtinEval.code = err.Error(), -1
			return
		}
		builtinEval.dir = dir
		cmd := exec.Command(bin, "eval", "--data-dir", filepath.Join(dir, "data"), "--embedder", "builtin",
			"--modes", "keyword,semantic,hybrid", "--confidence-fit", "--confidence-models", filepath.Join(dir, "models.json"),
			"--format", "json", "--out", filepath.Join(dir, "r.json"))
		out, err := cmd.CombinedOutput()
		builtinEval.stderr, builtinEval.code = string(out), cmd.ProcessState.ExitCode()
		if err != nil && builtinEval.code == 0 {
			builtinEval.code = -1
			builtinEval.stderr = err.Error() + "\n" + string(out)
		}
	})
	if builtinEval.code != 0 {
		t.Fatalf("eval: exit %d: %s", builtinEval.code, builtinEval.stderr)
	}
	return filepath.Join(builtinEval.dir, "r.json"), filepath.Join(builtinEval.dir, "models.json")
}

// TestEvalConfidenceModels: --confidence-fit --confidence-models writes
// models in the shipped file's form, each with a threshold.
func TestEvalConfidenceModels(t *testing.T) {
	t.Parallel()
	_, path := evalBuiltin(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ms search.ConfidenceModels
	if err := json.Unmarshal(data, &ms); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ms.Datasets, " ") != "builtin builtin-long" || ms.MaxFlagged != eval.MaxFlagged || len(ms.Models) != 3 {
		t.Errorf("models = %s", data)
	}
	for mode, m := range ms.Models {
		if m.Threshold <= 0 || m.Threshold >= 1 || m.Bias == 0 || m.Result.Bias == 0 || m.Result.Rank >= 0 {
			t.Errorf("%s model %+v: want a fitted model with a threshold, and a result model that a lower rank lowers", mode, m)
		}
	}
}

// tinyDataset writes a dataset of two tools and two queries in dir, in a
// folder whose name has a space, and returns its path: for tests of what
// eval writes, not of how well it ranks.
func tinyDataset(t *testing.T, dir string) string {
	t.Helper()
	ds := filepath.Join(dir, "on call")
	os.MkdirAll(ds, 0o755)
	os.WriteFile(filepath.Join(ds, "catalog.json"), []byte(`{"domains":[{"name":"pagerduty","description":"On-call","tools":[
	 {"name":"list_oncalls","description":"List who is on call.","inputSchema":{"type":"object"}},
	 {"name":"create_incident","description":"Trigger an incident.","inputSchema":{"type":"object"}}]}]}`), 0o644)
	os.WriteFile(filepath.Join(ds, "queries.jsonl"), []byte(`{"id":"q1","query":"who is on call","relevant":["pagerduty/list_oncalls"],"grades":{"pagerduty/list_oncalls":2}}
{"id":"q2","query":"trigger an incident","relevant":["pagerduty/create_incident"]}
`), 0o644)
	return ds
}
