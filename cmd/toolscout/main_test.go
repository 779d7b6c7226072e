package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, &stdout, &stderr)
	code := exitCode(err, &stderr)
	return stdout.String(), stderr.String(), code
}

func TestHelpOnEveryCommand(t *testing.T) {
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, c.name, "--help")
			if code != 0 || !strings.Contains(stderr, "Usage: toolscout "+c.name) || !strings.Contains(stderr, "  --data-dir") {
				t.Errorf("%s --help: exit %d, stderr %q", c.name, code, stderr)
			}
		})
	}
	_, stderr, code := runCLI(t, "--help")
	if code != 0 || !strings.Contains(stderr, "Commands:") {
		t.Errorf("--help: exit %d, %q", code, stderr)
	}
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{nil, "no command given"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"search", "--data-dir", dir}, "search needs a QUERY"},
		{[]string{"search", "--data-dir", dir, "--mode", "vector", "x"}, "keyword, semantic or hybrid"},
		{[]string{"search", "--data-dir", dir, "--limit", "0", "x"}, "--limit 0"},
		{[]string{"search", "--data-dir", dir, "--embedder", "gpt", "x"}, `--embedder "gpt"`},
		{[]string{"search", "--nope", "x"}, "toolscout: unknown flag --nope (toolscout search --help lists the flags)\n"},
		{[]string{"serve", "--drain-timeout", "abc"}, `toolscout: --drain-timeout "abc": not a duration: use a number with a unit, e.g. 30s, 2m or 1h` + "\n"},
		{[]string{"search", "--limit", "x", "q"}, `toolscout: --limit "x": not a whole number` + "\n"},
		{[]string{"tokens", "--config", "/nonexistent/servers.json", "--budget", "0"}, "--budget 0: give a number of tokens"},
		{[]string{"search", "--limit", `a"b`, "q"}, `toolscout: --limit "a\"b": not a whole number` + "\n"},
		{[]string{"search", "q", "--limit"}, "toolscout: --limit needs a value (toolscout search --help lists the flags)\n"},
		{[]string{"eval", "--format", "pdf"}, `--format "pdf"`},
		{[]string{"eval", "--k", "1,x"}, "--k"},
		{[]string{"index", "extra"}, "takes no arguments"},
		{[]string{"serve", "--expose", "everything"}, "--expose"},
		{[]string{"serve", "--expose", "auto:lots"}, `--expose "auto:lots": auto:TOKENS takes a whole number of tokens`},
		{[]string{"serve", "--data-dir", dir, "--expose", "core"}, "needs tools to pin"},
		{[]string{"serve", "--data-dir", dir, "--http", "127.0.0.1:0", "--drain-timeout", "-1s"}, "--drain-timeout -1s"},
		{[]string{"serve", "--data-dir", dir, "--read-only", "--reload-interval", "1ns"}, "--reload-interval 1ns: want 0 (never) or at least 10ms"},
		{[]string{"serve", "--data-dir", dir, "--tool-names", "bare"}, `--tool-names "bare": use qualified (every tool as domain__tool, the default) or server`},
		{[]string{"search", "--data-dir", dir, "--log-format", "xml", "x"}, `--log-format "xml": use text or json`},
	}
	for _, tc := range tests {
		_, stderr, code := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("toolscout %v: exit %d, stderr %q; want exit 2 mentioning %q", tc.args, code, stderr, tc.want)
		}
		// A flag error (a want ending in a line break) is one line: the
		// error, not the command's whole usage before it.
		if strings.HasSuffix(tc.want, "\n") && stderr != tc.want {
			t.Errorf("toolscout %v: stderr %q, want the error alone on one line", tc.args, stderr)
		}
	}
}

func TestSearchCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stdout, stderr, code := runCLI(t, "index", "--data-dir", dir, "--embedder", "builtin")
	if code != 0 || !strings.Contains(stdout, "302 added") {
		t.Fatalf("index: exit %d, %s %s", code, stdout, stderr)
	}
	stdout, _, _ = runCLI(t, "index", "--data-dir", dir, "--embedder", "builtin")
	if !strings.Contains(stdout, "0 added, 0 changed, 0 removed, 302 unchanged") {
		t.Errorf("second index run re-indexed: %s", stdout)
	}
	stdout, stderr, code = runCLI(t, "search", "--data-dir", dir, "--embedder", "builtin", "--json", "--explain", "--limit", "3", "restart the web deployment")
	if code != 0 {
		t.Fatalf("search: exit %d: %s", code, stderr)
	}
	var out struct {
		Mode     string `json:"search_mode"`
		Embedder string `json:"embedder"`
		Results  []struct {
			Name, Domain, Group, Summary string
			Score                        float64
			Confidence                   *float64
			Explanation                  map[string]any
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("search --json output %q: %v", stdout, err)
	}
	for i, r := range out.Results {
		if r.Confidence == nil || *r.Confidence <= 0 || i > 0 && *r.Confidence > *out.Results[i-1].Confidence {
			t.Errorf("search --json result %d (%s): confidence %v, want one, at most the one before", i+1, r.Name, r.Confidence)
		}
	}
	if out.Mode != "hybrid" || out.Embedder != "builtin/wordvec-v2" || len(out.Results) != 3 {
		t.Fatalf("search --json = %+v", out)
	}
	r := out.Results[0]
	if r.Name != "kubernetes__rollout_restart" || r.Domain != "kubernetes" || r.Group != "workloads" || r.Score <= 0 || r.Explanation == nil {
		t.Errorf("first result = %+v", r)
	}
	stdout, _, code = runCLI(t, "search", "--data-dir", dir, "--embedder", "builtin", "--mode", "keyword", "--domain", "github", "pull request")
	if code != 0 || !strings.Contains(stdout, "github__") || strings.Contains(stdout, "gitlab__") {
		t.Errorf("search --domain github: %s", stdout)
	}
}

func TestCatalogErrorsReachTheUser(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "cat.json")
	os.WriteFile(bad, []byte(`{"domains":[{"name":"a","tools":[{"name":"x","inputSchema":{"type":"string"}}]}]}`), 0o644)
	_, stderr, code := runCLI(t, "search", "--data-dir", filepath.Join(dir, "data"), "--catalog", bad, "x")
	if code != 1 || !strings.Contains(stderr, "cat.json: domains[0].tools[0].inputSchema") {
		t.Errorf("bad catalog: exit %d, %q", code, stderr)
	}
}

// TestEvalCommandJSON: eval --format json reports each built-in dataset
// and its splits, with a run per mode asked for, in that order, each
// with its metrics. The eval is the one TestEvalConfidenceModels reads.
func TestEvalCommandJSON(t *testing.T) {
	t.Parallel()
	out, _ := evalBuiltin(t)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Datasets []struct {
			Name string
			Runs []struct {
				Mode    string
				Metrics map[string]float64
			}
		}
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range rep.Datasets {
		names = append(names, d.Name)
	}
	if got := strings.Join(names, " "); got != "builtin builtin/test builtin/dev builtin-long builtin-long/dev builtin-long/test" {
		t.Errorf("report datasets = %q", got)
	}
	for _, d := range rep.Datasets {
		var modes []string
		for _, r := range d.Runs {
			modes = append(modes, r.Mode)
			if r.Metrics["ndcg@10"] <= 0 {
				t.Errorf("%s %s: ndcg@10 = %v, want above 0", d.Name, r.Mode, r.Metrics["ndcg@10"])
			}
		}
		if got := strings.Join(modes, ","); got != "keyword,semantic,hybrid" {
			t.Errorf("%s runs = %s, want keyword,semantic,hybrid", d.Name, got)
		}
	}
}

func TestGatewayCommands(t *testing.T) {
	t.Parallel()
	root, _ := filepath.Abs("../..")
	memory := filepath.Join(root, "node_modules", ".bin", "mcp-server-memory")
	if _, err := os.Stat(memory); err != nil {
		needNode(t, "npm packages are missing: run `npm ci` (make test does)")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	os.WriteFile(cfg, []byte(`{"mcpServers": {
	  "memory": {"command": "`+memory+`", "env": {"MEMORY_FILE_PATH": "`+filepath.Join(dir, "m.jsonl")+`"}},
	  "broken": {"command": "/nonexistent/server"},
	  "later": {"command": "x", "disabled": true}}}`), 0o644)

	stdout, stderr, code := runCLI(t, "index", "--config", cfg, "--data-dir", filepath.Join(dir, "data"), "--embedder", "builtin")
	if code != 0 || !strings.Contains(stdout, "upstream memory: 9 tools") || !strings.Contains(stdout, "upstream broken: unavailable") ||
		!strings.Contains(stdout, "indexed 9 tools in 1 domain into") {
		t.Errorf("index --config: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, _, code = runCLI(t, "search", "--config", cfg, "--data-dir", filepath.Join(dir, "data"), "--embedder", "builtin", "--json", "--limit", "3", "add facts to an entity")
	if code != 0 || !strings.Contains(stdout, `"name": "memory__add_observations"`) {
		t.Errorf("search --config: exit %d\n%s", code, stdout)
	}
	stdout, _, code = runCLI(t, "doctor", "--config", cfg, "--data-dir", filepath.Join(dir, "data"), "--embedder", "builtin")
	if code != 1 || !strings.Contains(stdout, "ok    upstream   memory: 9 tools") || !strings.Contains(stdout, "FAIL  upstream   broken") ||
		!strings.Contains(stdout, "1 disabled") {
		t.Errorf("doctor --config: exit %d\n%s", code, stdout)
	}
	stdout, _, code = runCLI(t, "tokens", "--config", cfg, "--data-dir", filepath.Join(dir, "data"), "--embedder", "builtin", "--json")
	var rep struct {
		Eager int            `json:"eager_tools_list"`
		Meta  int            `json:"meta_tools_list"`
		Extra map[string]int `json:"extra"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 0 {
		t.Fatalf("tokens --json: exit %d, %v\n%s", code, err, stdout)
	}
	if rep.Extra["tools_list_eager"] <= rep.Eager || rep.Extra["tools_list_meta"] != rep.Meta || rep.Extra["tools_list_dynamic"] <= rep.Meta ||
		rep.Extra["tools_list_eager_condensed"] <= rep.Meta || rep.Extra["tools_list_eager_condensed"] > rep.Extra["tools_list_eager"] {
		t.Errorf("exposure costs = %+v", rep)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"mcpServers": {"x": {"url": "${NOT_SET_ANYWHERE}"}}}`), 0o644)
	_, stderr, code = runCLI(t, "index", "--config", bad, "--data-dir", filepath.Join(dir, "data2"))
	if code != 1 || !strings.Contains(stderr, "bad.json: mcpServers.x.url: ${NOT_SET_ANYWHERE} is not set") {
		t.Errorf("bad config: exit %d, %q", code, stderr)
	}
}

// TestLintExitStatus: lint exits 0 on a clean catalog, and on one whose
// only finding is a note (a parameter without a description), unless
// --strict; 1, naming the problems, when a tool has one; --json carries
// the same report, the costliest --top tools and every flagged one.
func TestLintExitStatus(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := runCLI(t, "lint", "--data-dir", dir)
	if code != 0 || !strings.Contains(stdout, "302 tools") || !strings.Contains(stdout, "no tool flagged") {
		t.Errorf("lint of the built-in catalog: exit %d\n%s%s", code, stdout, stderr)
	}
	noted := filepath.Join(dir, "noted.json")
	os.WriteFile(noted, []byte(`{"domains":[{"name":"d","description":"D","tools":[
 {"name":"t","description":"Do it.","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}}]}]}`), 0o644)
	stdout, stderr, code = runCLI(t, "lint", "--catalog", noted, "--data-dir", dir)
	if code != 0 || !strings.Contains(stdout, "notes:\n  d__t: 1 parameter without a description: x") {
		t.Errorf("lint of a catalog with a note: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, "lint", "--catalog", noted, "--data-dir", dir, "--strict")
	if code != 1 || !strings.Contains(stdout, "problems:\n  d__t: 1 parameter without a description: x") || !strings.Contains(stderr, "1 tool flagged") {
		t.Errorf("lint --strict: exit %d\n%s%s", code, stdout, stderr)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"domains":[{"name":"d","description":"D","tools":[
 {"name":"t","inputSchema":{"type":"object"}},
 {"name":"u","description":"Do it well.","inputSchema":{"type":"object"}},
 {"name":"v","description":"Do it fast.","inputSchema":{"type":"object","properties":{"y":{"type":"string"}}}}]}]}`), 0o644)
	stdout, stderr, code = runCLI(t, "lint", "--catalog", bad, "--data-dir", dir)
	if code != 1 || !strings.Contains(stdout, "d__t: no description") || !strings.Contains(stderr, "1 tool flagged") {
		t.Errorf("lint of a flagged catalog: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, _, code = runCLI(t, "lint", "--catalog", bad, "--data-dir", dir, "--json", "--top", "1")
	var rep struct {
		Flagged int
		Tools   []struct{ Name string }
		Total   int `json:"total_tools"`
		Listed  []struct {
			Name     string
			Problems []string
			Notes    []string
		} `json:"flagged_tools"`
		Noted []struct {
			Name     string
			Problems []string
			Notes    []string
		} `json:"noted_tools"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 1 || rep.Flagged != 1 || len(rep.Tools) != 1 || rep.Total != 3 || len(rep.Listed) != rep.Flagged || rep.Listed[0].Name != "d__t" || len(rep.Noted) != 1 || rep.Noted[0].Name != "d__v" || len(rep.Noted[0].Notes) != 1 {
		t.Errorf("lint --json --top 1: exit %d, %+v, %v", code, rep, err)
	}
	if _, _, code = runCLI(t, "lint", "--max-schema", "0"); code != 2 {
		t.Errorf("lint --max-schema 0: exit %d, want 2 (usage)", code)
	}
}

// `toolscout search` treats tool states as discover_tools does: a disabled
// tool is left out unless --include-disabled, then marked; a deprecated
// one is marked.
func TestSearchToolStates(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "catalog.json")
	os.WriteFile(cat, []byte(`{"domains":[{"name":"github","description":"GitHub repositories","tools":[
  {"name":"delete_repo","description":"Delete a repository for good.","inputSchema":{"type":"object"},"enabled":false},
  {"name":"archive_repo","description":"Archive a repository (old API).","inputSchema":{"type":"object"},"deprecated":"use github__set_repo_state"},
  {"name":"list_repos","description":"List repositories.","inputSchema":{"type":"object"}}]}]}`), 0o644)
	common := []string{"search", "--catalog", cat, "--data-dir", filepath.Join(dir, "data"), "--embedder", "builtin"}
	stdout, stderr, code := runCLI(t, append(common, "delete a repository")...)
	if code != 0 {
		t.Fatalf("search: exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, "delete_repo") || !strings.Contains(stdout, "github__archive_repo (deprecated)") {
		t.Errorf("search without --include-disabled:\n%s\nwant delete_repo left out and archive_repo marked deprecated", stdout)
	}
	stdout, _, _ = runCLI(t, append(common, "--include-disabled", "delete a repository")...)
	if !strings.Contains(stdout, "github__delete_repo (disabled)") {
		t.Errorf("search --include-disabled:\n%s\nwant delete_repo marked disabled", stdout)
	}
	stdout, _, _ = runCLI(t, append(common, "--include-disabled", "--json", "delete a repository")...)
	var out struct {
		Results []searchResultJSON `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	marks := map[string]string{}
	for _, r := range out.Results {
		marks[r.Name] = fmt.Sprint(r.Disabled, r.Deprecated)
	}
	if marks["github__delete_repo"] != "true" || marks["github__archive_repo"] != "falseuse github__set_repo_state" {
		t.Errorf("search --json marks = %v", marks)
	}
}

// TestServeChecksTheEnvironmentFirst: a bad TOOLSCOUT_EXPOSE or
// TOOLSCOUT_FALLBACK is told before the data dir is opened (or created)
// and any upstream server started.
func TestServeChecksTheEnvironmentFirst(t *testing.T) {
	for _, tc := range []struct{ env, value, want string }{
		{"TOOLSCOUT_EXPOSE", "everything", "TOOLSCOUT_EXPOSE="},
		{"TOOLSCOUT_FALLBACK", "lazy", `TOOLSCOUT_FALLBACK="lazy": use eager`},
	} {
		t.Run(tc.env, func(t *testing.T) {
			t.Setenv(tc.env, tc.value)
			dir := filepath.Join(t.TempDir(), "data")
			_, stderr, code := runCLI(t, "serve", "--data-dir", dir, "--embedder", "builtin")
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("%s=%s: exit %d, stderr %q; want exit 2 mentioning %q", tc.env, tc.value, code, stderr, tc.want)
			}
			if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s=%s: the data dir was opened before the error (stat: %v)", tc.env, tc.value, err)
			}
		})
	}
}
