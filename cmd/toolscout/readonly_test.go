package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/internal/treestate"
)

// TestServeReadOnly: two `serve --read-only` processes serve one data
// dir that `toolscout index` built, at once: both open its keyword index
// on disk (neither rebuilds one in memory), both answer discover_tools,
// and the data dir is left exactly as it was.
func TestServeReadOnly(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	dir := t.TempDir()
	if out, err := exec.Command(bin, "index", "--data-dir", dir, "--embedder", "builtin").CombinedOutput(); err != nil {
		t.Fatalf("index: %v\n%s", err, out)
	}
	before, err := treestate.Of(dir)
	if err != nil {
		t.Fatal(err)
	}
	var servers []*httpServe
	for range 2 {
		s := startServeHTTP(t, bin, nil, "serve", "--read-only", "--http", "127.0.0.1:0", "--embedder", "builtin", "--data-dir", dir)
		s.waitReady(t)
		servers = append(servers, s)
	}
	for i, s := range servers {
		cs := connectMCP(t, s, nil, nil)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "discover_tools", Arguments: map[string]any{"query": "restart the web deployment", "limit": 3}})
		if err != nil || res.IsError {
			t.Fatalf("server %d: discover_tools: %v %+v", i, err, res)
		}
		if sc, _ := res.StructuredContent.(map[string]any); sc == nil || len(sc["results"].([]any)) == 0 {
			t.Errorf("server %d: discover_tools found nothing: %+v", i, res.StructuredContent)
		}
		cs.Close()
	}
	// Starting and answering, the replicas wrote nothing.
	mid, err := treestate.Of(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range treestate.Diff(before, mid) {
		t.Errorf("serve --read-only changed the data dir while serving: %s", d)
	}
	// Indexing while replicas read the data dir fails, saying why, and
	// leaves the indexes alone (it once fell back to a keyword index in
	// memory and said "indexed ... into DIR", the one on disk stale); only
	// the set's bookkeeping (sources.json: when it was last used) moves.
	idx, err := exec.Command(bin, "index", "--data-dir", dir, "--embedder", "builtin").CombinedOutput()
	if err == nil || !strings.Contains(string(idx), "in use by another toolscout process") {
		t.Errorf("index while read-only servers run: %v\n%s", err, idx)
	}
	post, err := treestate.Of(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range treestate.Diff(mid, post) {
		if !strings.Contains(d, "sources.json") && !strings.Contains(d, "sets/") {
			t.Errorf("index refused, but changed the data dir: %s", d)
		}
		if strings.Contains(d, "keyword.bleve") || strings.Contains(d, "vectors") || strings.Contains(d, "catalog.") {
			t.Errorf("index refused, but changed an index file: %s", d)
		}
	}
	// Stopping, the replicas write nothing either.
	for i, s := range servers {
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			t.Fatalf("server %d still runs 30 s after SIGTERM:\n%s", i, s.dump())
		}
		if log := s.logText(); s.err != nil || strings.Contains(log, "in memory") {
			t.Errorf("server %d: exit %v, log:\n%s", i, s.err, log)
		}
	}
	after, err := treestate.Of(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range treestate.Diff(post, after) {
		t.Errorf("serve --read-only changed the data dir as it stopped: %s", d)
	}
}

// TestServeReadOnlyRefuses: without an index to serve, serve --read-only
// exits at once saying which command builds it, creating nothing; with
// --config it is a usage error.
func TestServeReadOnlyRefuses(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "data")
	_, stderr, code := runCLI(t, "serve", "--read-only", "--data-dir", missing, "--embedder", "builtin")
	if code != 1 || !strings.Contains(stderr, "toolscout index --data-dir "+missing) {
		t.Errorf("serve --read-only on an empty data dir: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("serve --read-only created %s", missing)
	}
	cfg := filepath.Join(t.TempDir(), "servers.json")
	os.WriteFile(cfg, []byte(`{"mcpServers": {}}`), 0o644)
	if _, stderr, code := runCLI(t, "serve", "--read-only", "--config", cfg, "--data-dir", missing); code != 2 || !strings.Contains(stderr, "--read-only serves catalogs") {
		t.Errorf("serve --read-only --config: exit %d, %q", code, stderr)
	}
}

// swappedAnswers is how many answers of the new build
// TestReadOnlySwapsInANewerBuild's load gets before it stops: about
// what it got in the 200 ms it used to sleep, on a quiet machine.
const swappedAnswers = 200

// TestReadOnlySwapsInANewerBuild: a read-only server over a data dir that
// is a symbolic link picks up the build the link is switched to, under
// load, without a restart: no request fails, no answer mixes the two
// builds, and every answer after the swap is the new build's.
func TestReadOnlySwapsInANewerBuild(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	root := t.TempDir()
	catalog := filepath.Join(root, "catalog.json")
	writeBuild := func(gen string) string {
		t.Helper()
		names := []string{"alpha", "bravo", "charlie", "delta"}
		if gen == "second" {
			names = append(names, "echo")
		}
		writeReportsCatalog(t, catalog, gen, names...)
		dir := filepath.Join(root, gen)
		indexBuild(t, bin, catalog, dir)
		return dir
	}
	current := filepath.Join(root, "current")
	if err := os.Symlink(writeBuild("first"), current); err != nil {
		t.Fatal(err)
	}
	s := startServeHTTP(t, bin, nil, "serve", "--read-only", "--http", "127.0.0.1:0", "--embedder", "builtin",
		"--catalog", catalog, "--data-dir", current, "--reload-interval", "50ms")
	s.waitReady(t)
	cs := connectMCP(t, s, nil, nil)
	defer cs.Close()
	// The answer's build: every summary says which.
	build := func() (string, error) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "discover_tools", Arguments: map[string]any{"query": "export the report", "limit": 10}})
		if err != nil || res.IsError {
			return "", fmt.Errorf("discover_tools: %v %+v", err, res)
		}
		var ans struct {
			Results []struct{ Summary string } `json:"results"`
		}
		data, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(data, &ans)
		seen := map[string]bool{}
		for _, r := range ans.Results {
			for _, gen := range []string{"first", "second"} {
				if strings.Contains(r.Summary, gen+" build") {
					seen[gen] = true
				}
			}
		}
		if len(seen) != 1 || len(ans.Results) < 4 {
			return "", fmt.Errorf("an answer of %d results from builds %v: %s", len(ans.Results), seen, data)
		}
		for gen := range seen {
			return gen, nil
		}
		return "", nil
	}
	if gen, err := build(); err != nil || gen != "first" {
		t.Fatalf("before the switch: %q, %v", gen, err)
	}
	// Load on the server while the second build is made and the link
	// switched in one rename.
	stop := make(chan struct{})
	var answers []string
	var failures []error
	var fromSecond atomic.Int32 // the load's answers from the second build
	loadDone := make(chan struct{})
	go func() {
		defer close(loadDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			gen, err := build()
			if err != nil {
				failures = append(failures, err)
			} else {
				answers = append(answers, gen)
				if gen == "second" {
					fromSecond.Add(1)
				}
			}
		}
	}()
	second := writeBuild("second")
	next := filepath.Join(root, "next")
	if err := os.Symlink(second, next); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, current); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if gen, err := build(); err == nil && gen == "second" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second build was not served 20 s after the switch:\n%s", s.logText())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The load goes on until it has had answers of the second build: were
	// the first one still answering, it would answer among them.
	for fromSecond.Load() < swappedAnswers {
		if time.Now().After(deadline) {
			t.Fatalf("%d answers of the second build under load 20 s after the switch, want %d", fromSecond.Load(), swappedAnswers)
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	<-loadDone
	for _, err := range failures {
		t.Error(err)
	}
	// Once the second build answered, the first never did again.
	swapped := false
	for _, gen := range answers {
		if gen == "second" {
			swapped = true
		} else if swapped {
			t.Errorf("the first build answered after the second: %v", answers)
			break
		}
	}
	if !swapped {
		t.Errorf("no answer from the second build under load (%d answers):\n%s", len(answers), s.logText())
	}
	// Logged once the swap is done, so after the first answers from the
	// second build may have been made.
	waitLog(t, s, "swapped in a newer build")
}

// TestReadOnlyServesTheBuildItResolved: a read-only server resolves its
// data dir's link once, before it opens the store; a link switched while
// it loads does not change what it opens (the build watcher sees the
// switch and swaps it in), so the watcher's "serving" is the truth.
func TestReadOnlyServesTheBuildItResolved(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	catalog := filepath.Join(root, "catalog.json")
	os.WriteFile(catalog, []byte(`{"domains":[{"name":"reports","description":"Reports","tools":[{"name":"alpha_report","description":"Export the alpha report.","inputSchema":{"type":"object"}}]}]}`), 0o644)
	for _, gen := range []string{"first", "second"} {
		if _, stderr, code := runCLI(t, "index", "--catalog", catalog, "--data-dir", filepath.Join(root, gen), "--embedder", "builtin"); code != 0 {
			t.Fatalf("index %s: %s", gen, stderr)
		}
	}
	link := filepath.Join(root, "current")
	if err := os.Symlink(filepath.Join(root, "first"), link); err != nil {
		t.Fatal(err)
	}
	first, _ := filepath.EvalSymlinks(filepath.Join(root, "first"))
	g := &globalFlags{dataDir: link, readOnly: true, catalogs: []string{catalog}}
	run := running{build: first}
	// The link moves on after the server resolved it.
	os.Remove(link)
	if err := os.Symlink(filepath.Join(root, "second"), link); err != nil {
		t.Fatal(err)
	}
	st, err := g.openStore(g.setRoot(run.build), store.Options{Set: g.set(), ReadOnly: true})
	if err != nil {
		t.Fatalf("open the store as a read-only server does: %v", err)
	}
	defer st.Close()
	if dir := st.Dir(); !strings.HasPrefix(dir, first+string(filepath.Separator)) {
		t.Errorf("the store opened %q; want a set of the build resolved first, %s", dir, first)
	}
}

// writeReportsCatalog writes to path a catalog of one domain, reports,
// with a tool NAME_report for each name whose description says which
// build (gen) it is of: an answer tells the build it came from.
func writeReportsCatalog(t *testing.T, path, gen string, names ...string) {
	t.Helper()
	var tools []string
	for _, name := range names {
		tools = append(tools, fmt.Sprintf(`{"name":"%s_report","description":"Export the %s report of the %s build.","inputSchema":{"type":"object"}}`, name, name, gen))
	}
	if err := os.WriteFile(path, []byte(`{"domains":[{"name":"reports","description":"Reports","tools":[`+strings.Join(tools, ",")+`]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
}

// indexBuild builds catalog's index into dir with bin.
func indexBuild(t *testing.T, bin, catalog, dir string) {
	t.Helper()
	if out, err := exec.Command(bin, "index", "--catalog", catalog, "--data-dir", dir, "--embedder", "builtin").CombinedOutput(); err != nil {
		t.Fatalf("index %s: %v\n%s", dir, err, out)
	}
}
