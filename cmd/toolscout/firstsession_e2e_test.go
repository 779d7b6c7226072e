package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tiktoken-go/tokenizer"

	"github.com/toolscout/toolscout/server"
)

// TestFirstSessionInstructions: with a fresh data dir and the npm
// reference servers behind serve, the first session's instructions say
// what each server is for (the config's description for memory, the
// server's own title or its tools for the others, with tools to call;
// one that cannot start is named without tools);
// doctor prints the same text and tokens --config counts it; and every
// result of that session's first search has a confidence (issue 46
// items 3 and 4).
func TestFirstSessionInstructions(t *testing.T) {
	t.Parallel()
	nodeClient(t)
	root, _ := filepath.Abs("../..")
	bin := buildBinary(t)
	bins := filepath.Join(root, "node_modules", ".bin")
	dir := t.TempDir()
	files := filepath.Join(dir, "files")
	if err := os.Mkdir(files, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "servers.json")
	conf, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"memory": map[string]any{"command": filepath.Join(bins, "mcp-server-memory"), "env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "m.jsonl")},
			"description": "Long-term memory: remember facts about people and projects, and recall them."},
		"everything": map[string]any{"command": filepath.Join(bins, "mcp-server-everything")},
		"filesystem": map[string]any{"command": filepath.Join(bins, "mcp-server-filesystem"), "args": []string{files}},
		// A server that cannot start is named as one without tools.
		"broken": map[string]any{"command": filepath.Join(dir, "no-such-server"), "description": "A server that is not there."},
	}})
	if err := os.WriteFile(cfg, conf, 0o644); err != nil {
		t.Fatal(err)
	}
	// serve, doctor and tokens each start the servers: they run side by
	// side, as processes (the environment is theirs, so the test runs in
	// parallel with others; toolscout not built with -race, as the
	// commands' concurrency is raced in their packages).
	env := append(os.Environ(), "OLLAMA_HOST=127.0.0.1:9")
	type ran struct {
		stdout, stderr string
		code           int
	}
	var running sync.WaitGroup
	t.Cleanup(running.Wait) // before the temp dir's removal
	runBin := func(args ...string) <-chan ran {
		c := make(chan ran, 1)
		running.Add(1)
		go func() {
			defer running.Done()
			var stdout, stderr strings.Builder
			cmd := exec.Command(bin, args...)
			cmd.Env, cmd.Stdout, cmd.Stderr = env, &stdout, &stderr
			err := cmd.Run()
			code := cmd.ProcessState.ExitCode()
			if err != nil && code == 0 {
				code = -1
				stderr.WriteString(err.Error())
			}
			c <- ran{stdout.String(), stderr.String(), code}
		}()
		return c
	}
	doctor := runBin("doctor", "--config", cfg, "--embedder", "builtin", "--data-dir", filepath.Join(dir, "doctor"))
	tokens := runBin("tokens", "--json", "--config", cfg, "--embedder", "builtin", "--data-dir", filepath.Join(dir, "tokens"))
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	// initialize waits for the servers up to 5 s by default: enough for
	// node to start them on a quiet machine, not under the load of a
	// busy CI (they were "not listed yet" at load average 30 to 40).
	// What each server is for is what this test checks, so it waits
	// until all have listed or failed (the broken one fails at once).
	cmd := exec.Command(bin, "serve", "--config", cfg, "--embedder", "builtin", "--data-dir", filepath.Join(dir, "data"), "--initialize-wait", "100s")
	cmd.Env = env
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "first-session", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	got := cs.InitializeResult().Instructions

	// Each server on its line, with its tools counted and what it is for.
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`\n- memory \(9 tools\): Long-term memory: remember facts about people and projects, and recall them; tools such as \w+`),
		regexp.MustCompile(`\n- everything \(\d+ tools\): Everything Reference Server; tools such as [\w-]+`),
		regexp.MustCompile(`\n- filesystem \(\d+ tools\): [^\n]*tools on files and directories such as \w+`),
		regexp.MustCompile(`\n- broken \(tools not listed yet\): A server that is not there\n`),
	} {
		if !want.MatchString(got) {
			t.Errorf("first session's instructions:\n%s\nwant a line matching %s", got, want)
		}
	}
	if strings.Contains(got, "none yet") || strings.Count(got, "not listed yet") != 1 {
		t.Errorf("first session's instructions say that tools are missing:\n%s", got)
	}

	// doctor previews exactly that text (and fails the broken server).
	d := <-doctor
	stdout, stderr, code := d.stdout, d.stderr, d.code
	if code == 0 || !strings.Contains(stdout, "FAIL  upstream   broken") {
		t.Fatalf("doctor: exit %d, want the broken server failed\n%s\n%s", code, stdout, stderr)
	}
	if shown := doctorInstructions(stdout); shown != got {
		t.Errorf("doctor shows the instructions\n%s\nclients get\n%s", shown, got)
	}

	// tokens --config counts what initialize returns.
	tk := <-tokens
	stdout, stderr, code = tk.stdout, tk.stderr, tk.code
	if code != 0 {
		t.Fatalf("tokens: exit %d\n%s", code, stderr)
	}
	var rep server.TokenReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("tokens --json: %v\n%s", err, stdout)
	}
	enc, _ := tokenizer.Get(tokenizer.O200kBase)
	if n, _ := enc.Count(got); rep.Instructions != n {
		t.Errorf("tokens --config counts %d tokens of instructions, initialize returns %d", rep.Instructions, n)
	}

	// Every result of a search has a confidence, none above the one
	// before it.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: server.DiscoverTools, Arguments: map[string]any{"query": "remember that Alice works at Acme", "limit": 5}})
	if err != nil || res.IsError {
		t.Fatalf("discover_tools: %v %+v", err, res)
	}
	var ans server.SearchAnswer
	if err := json.Unmarshal([]byte(contentText(res)), &ans); err != nil || len(ans.Results) != 5 {
		t.Fatalf("discover_tools: %v: %s", err, contentText(res))
	}
	for i, r := range ans.Results {
		if r.Confidence == nil || *r.Confidence < 0 || *r.Confidence > 1 || i > 0 && *r.Confidence > *ans.Results[i-1].Confidence {
			t.Errorf("result %d (%s): confidence %v, want one in [0, 1], at most the one before: %s", i+1, r.Name, r.Confidence, contentText(res))
		}
	}
}

// doctorInstructions returns the instructions doctor's exposure check
// prints, each line indented under it.
func doctorInstructions(out string) string {
	var lines []string
	in := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "ok    exposure"):
			in = true
		case in && strings.HasPrefix(l, instructionsIndent):
			lines = append(lines, strings.TrimPrefix(l, instructionsIndent))
		case in:
			return strings.Join(lines, "\n")
		}
	}
	return strings.Join(lines, "\n")
}
