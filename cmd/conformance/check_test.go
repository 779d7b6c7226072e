package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeResult writes a scenario's checks.json as the suite saves it.
func writeResult(t *testing.T, dir, scenario, checks string) {
	t.Helper()
	d := filepath.Join(dir, "server-"+scenario+"-2026-12-06T06-30-18-105Z")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "checks.json"), []byte(checks), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeEntries(t *testing.T, text string) []entry {
	t.Helper()
	f := filepath.Join(t.TempDir(), "entries.txt")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	es, err := readEntries(f)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

const (
	pass = `[{"id":"a","status":"SUCCESS"},{"id":"wire-schema-valid","status":"SUCCESS"},{"id":"req","status":"INFO"}]`
	fail = `[{"id":"a","status":"FAILURE","errorMessage":"No image content found"}]`
	warn = `[{"id":"a","status":"SUCCESS"},{"id":"priming","status":"WARNING"}]`
)

// stdout is what a --requirements run prints at its end.
const stdout = `Running requirements 2025-11-25 (3 scenarios) against http://127.0.0.1:1/mcp

=== SUMMARY ===
✓ ping: 2 passed, 0 failed
✗ tools-call-image: 1 passed, 1 failed
✓ server-sse-polling: 1 passed, 0 failed

Total: 4 passed, 1 failed

Not scored for 2025-11-25: 1 scenario(s) run, 0 failing. These do not affect conformance.
  ✓ server-sse-polling (pending)
`

// fixtureRun builds a suite's result from checks.json folders, as the
// harness reads them.
func fixtureRun(t *testing.T, direct, through map[string]string) suiteResult {
	t.Helper()
	dd, td := t.TempDir(), t.TempDir()
	for s, c := range direct {
		writeResult(t, dd, s, c)
	}
	for s, c := range through {
		writeResult(t, td, s, c)
	}
	d, err := readResults(dd)
	if err != nil {
		t.Fatal(err)
	}
	th, err := readResults(td)
	if err != nil {
		t.Fatal(err)
	}
	order, notScored := parseStdout(stdout)
	return merge(suite20251125, order, notScored, d, th)
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name            string
		direct, through map[string]string
		expected, lost  string
		wantProblems    []string // a substring of each problem, in order
	}{{
		name:    "all pass both ways",
		direct:  map[string]string{"ping": pass, "tools-call-image": pass, "server-sse-polling": pass},
		through: map[string]string{"ping": pass, "tools-call-image": pass, "server-sse-polling": pass},
	}, {
		name:         "a loss not listed fails the run",
		direct:       map[string]string{"ping": pass, "tools-call-image": pass, "server-sse-polling": pass},
		through:      map[string]string{"ping": pass, "tools-call-image": fail, "server-sse-polling": pass},
		wantProblems: []string{"2025-11-25 tools-call-image passes directly (passed) but not through toolscout (failed [a]: No image content found): a loss not in"},
	}, {
		name:    "a listed loss passes",
		direct:  map[string]string{"ping": pass, "tools-call-image": pass, "server-sse-polling": pass},
		through: map[string]string{"ping": pass, "tools-call-image": fail, "server-sse-polling": pass},
		lost:    "2025-11-25 tools-call-image content is rewritten\n",
	}, {
		name:         "a listed loss that passes now fails the run: the list only shrinks",
		direct:       map[string]string{"ping": pass, "tools-call-image": pass, "server-sse-polling": pass},
		through:      map[string]string{"ping": pass, "tools-call-image": pass, "server-sse-polling": pass},
		lost:         "2025-11-25 tools-call-image content is rewritten\n",
		wantProblems: []string{"2025-11-25 tools-call-image passes through toolscout now: remove it"},
	}, {
		name:         "a warning through toolscout that is not there directly is a loss",
		direct:       map[string]string{"ping": pass, "tools-call-image": pass, "server-sse-polling": pass},
		through:      map[string]string{"ping": pass, "tools-call-image": pass, "server-sse-polling": warn},
		wantProblems: []string{"2025-11-25 server-sse-polling passes directly (passed) but not through toolscout (warned [priming])"},
	}, {
		name:         "a failure directly must be an expected failure",
		direct:       map[string]string{"ping": fail, "tools-call-image": pass, "server-sse-polling": pass},
		through:      map[string]string{"ping": fail, "tools-call-image": pass, "server-sse-polling": pass},
		wantProblems: []string{"2025-11-25 ping fails directly against the fixture (failed [a]: No image content found) and is not in"},
	}, {
		name:     "an expected failure that fails both ways passes",
		direct:   map[string]string{"ping": fail, "tools-call-image": pass, "server-sse-polling": pass},
		through:  map[string]string{"ping": fail, "tools-call-image": pass, "server-sse-polling": pass},
		expected: "2025-11-25 ping the fixture has no such tool\n",
	}, {
		name:         "an expected failure that passes directly is stale",
		direct:       map[string]string{"ping": pass, "tools-call-image": pass, "server-sse-polling": pass},
		through:      map[string]string{"ping": pass, "tools-call-image": pass, "server-sse-polling": pass},
		expected:     "2025-11-25 ping the fixture has no such tool\n",
		wantProblems: []string{"2025-11-25 ping passes directly now: remove it from expected failures"},
	}, {
		name:         "a scenario without a result through toolscout is a loss",
		direct:       map[string]string{"ping": pass, "tools-call-image": pass, "server-sse-polling": pass},
		through:      map[string]string{"ping": pass, "server-sse-polling": pass},
		wantProblems: []string{"2025-11-25 tools-call-image passes directly (passed) but not through toolscout (no result)"},
	}, {
		name:         "an entry for a scenario that did not run is stale",
		direct:       map[string]string{"ping": pass, "tools-call-image": pass, "server-sse-polling": pass},
		through:      map[string]string{"ping": pass, "tools-call-image": pass, "server-sse-polling": pass},
		lost:         "2025-11-25 tools-call-audio gone from the suite\n",
		wantProblems: []string{"2025-11-25 tools-call-audio: covers nothing"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := fixtureRun(t, tc.direct, tc.through)
			if got := r.scenarios[2]; got.name != "server-sse-polling" || got.notScored != "pending" {
				t.Fatalf("scenario 3 = %q (not scored %q), want server-sse-polling (pending)", got.name, got.notScored)
			}
			got := check([]suiteResult{r}, writeEntries(t, tc.expected), writeEntries(t, tc.lost))
			if len(got) != len(tc.wantProblems) {
				t.Fatalf("check() = %d problems %q, want %d %q", len(got), got, len(tc.wantProblems), tc.wantProblems)
			}
			for i, w := range tc.wantProblems {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

func TestCheckBuiltin(t *testing.T) {
	dir := t.TempDir()
	writeResult(t, dir, "ping", pass)
	writeResult(t, dir, "server-stateless", `[{"id":"needs-fixture","status":"FAILURE"},{"id":"defect","status":"FAILURE"},{"id":"should","status":"WARNING"}]`)
	through, err := readResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := merge(suiteBuiltin, []string{"ping", "server-stateless", "caching"}, nil, nil, through)
	expected := writeEntries(t, "builtin server-stateless:needs-fixture the fixture's tool\nbuiltin server-stateless:should the fixture's tool\n")
	lost := writeEntries(t, "builtin server-stateless:defect a toolscout defect\nbuiltin ping:x was fixed\n")
	got := check([]suiteResult{r}, expected, lost)
	want := []string{
		"builtin caching saved no result",
		"builtin ping:x: covers nothing",
	}
	if len(got) != len(want) {
		t.Fatalf("check() = %q, want %q", got, want)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("problem %d = %q, want it to contain %q", i, got[i], want[i])
		}
	}
	// Without the defect's entry, it is reported.
	got = check([]suiteResult{r}, expected, nil)
	if len(got) != 2 || !strings.Contains(got[0], "check defect fails against toolscout on the built-in catalog") {
		t.Errorf("check() without lost.txt = %q, want the defect reported", got)
	}
}

// TestCheckClientAuth: the client auth scenarios' results are read from
// the folders the suite names them by (auth/<scenario>-<time>), and each
// failing check of toolscout's client must be in lost.txt.
func TestCheckClientAuth(t *testing.T) {
	dir := t.TempDir()
	for name, checks := range map[string]string{
		"metadata-default-2026-12-06T09-19-39-012Z": pass,
		"scope-step-up-2026-12-06T09-20-01-100Z":    `[{"id":"scope-step-up-initial","status":"FAILURE","errorMessage":"no authorization request"}]`,
		"basic-cimd-2026-12-06T09-20-03-001Z":       `[{"id":"cimd-client-id-used","status":"WARNING"}]`,
		"not-a-result":                              pass,
	} {
		d := filepath.Join(dir, "auth", name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "checks.json"), []byte(checks), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	through, err := readClientAuthResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(through) != 3 || !through["metadata-default"].passed() || through["scope-step-up"].passed() || through["basic-cimd"].grade() != gradeWarn {
		t.Fatalf("readClientAuthResults = %+v, want metadata-default passed, scope-step-up failed, basic-cimd warned", through)
	}
	r := merge(suiteClientAuth, []string{"metadata-default", "scope-step-up", "basic-cimd"}, nil, nil, through)
	lost := writeEntries(t, "client-auth scope-step-up no step-up\nclient-auth basic-cimd:cimd-client-id-used no metadata document\n")
	if got := check([]suiteResult{r}, nil, lost); len(got) != 0 {
		t.Errorf("check() = %q, want no problem", got)
	}
	got := check([]suiteResult{r}, nil, lost[:1])
	if len(got) != 1 || !strings.Contains(got[0], "client-auth basic-cimd: check cimd-client-id-used fails with toolscout's upstream OAuth client") {
		t.Errorf("check() without basic-cimd's entry = %q, want it reported", got)
	}
}

func TestReadEntries(t *testing.T) {
	cases := []struct{ name, text, wantErr string }{
		{"no why", "2025-11-25 ping\n", `want "SUITE SCENARIO[:CHECK] why it fails"`},
		{"unknown suite", "2024-01-01 ping why\n", `unknown suite "2024-01-01"`},
		{"bad scenario", "builtin Ping! why\n", `"Ping!" is not a scenario name`},
		{"duplicate", "builtin ping why\n# note\nbuiltin ping again\n", "builtin ping is listed on line 1 already"},
		{"empty check", "builtin ping: why\n", `"ping:" is not a scenario name`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "e.txt")
			if err := os.WriteFile(f, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := readEntries(f)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("readEntries(%q) = %v, want an error containing %q", tc.text, err, tc.wantErr)
			}
		})
	}
	es := writeEntries(t, "# comment\n\n2026-07-28 tools-call-with-progress  progress is not relayed yet\nbuiltin server-stateless:sep-2575-x needs the fixture\n")
	if len(es) != 2 || es[0].why != "progress is not relayed yet" || es[1].check != "sep-2575-x" || es[1].line != 4 {
		t.Errorf("readEntries = %+v", es)
	}
}

func TestSuiteCommand(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := suiteCommand(dir); err == nil || !strings.Contains(err.Error(), "the conformance suite is not installed in "+dir) {
		t.Errorf("suiteCommand(empty folder) = %v, want it said to run npm ci", err)
	}
	// The suite without the pinned Node, and a PATH whose node is 20.
	cli := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist")
	bin := filepath.Join(dir, "bin")
	for _, d := range []string{cli, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(cli, "index.js"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "node"), []byte("#!/bin/sh\necho v20.20.2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	_, _, err := suiteCommand(dir)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(bin, "node")+" is Node 20") || !strings.Contains(err.Error(), "no Node 22 or newer") {
		t.Errorf("suiteCommand(Node 20 only) = %v, want it said", err)
	}
	if err := os.WriteFile(filepath.Join(bin, "node"), []byte("#!/bin/sh\necho v22.23.3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if node, _, err := suiteCommand(dir); err != nil || node != filepath.Join(bin, "node") {
		t.Errorf("suiteCommand(Node 22 on PATH) = %q, %v; want the one on PATH", node, err)
	}
}
