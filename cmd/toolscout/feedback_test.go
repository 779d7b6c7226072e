package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/internal/treestate"
)

const feedbackCatalog = `{"domains":[
 {"name":"github","description":"GitHub repositories and issues","tools":[
  {"name":"create_issue","description":"Open a new issue in a repository.","inputSchema":{"type":"object"}},
  {"name":"list_issues","description":"List the issues of a repository.","inputSchema":{"type":"object"}}]},
 {"name":"slack","description":"Slack chat","tools":[
  {"name":"post_message","description":"Send a message to a channel so the team reads it.","inputSchema":{"type":"object"}}]},
 {"name":"weather","description":"Weather","tools":[
  {"name":"get_forecast","description":"Get the weather forecast for a city.","inputSchema":{"type":"object"}}]}]}`

// TestFeedbackReplicaPath: what read-only replicas write out (JSON lines,
// gathered with the log records around them) is folded into the next
// build by index --feedback; feedback lists it; the replicas of that
// build rank with it and never write the data dir; feedback --forget
// clears it. A malformed file is refused, naming file and line, before
// anything is indexed.
func TestFeedbackReplicaPath(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	tmp := t.TempDir()
	data, cat := filepath.Join(tmp, "data"), filepath.Join(tmp, "catalog.json")
	os.WriteFile(cat, []byte(feedbackCatalog), 0o644)
	base := []string{"--data-dir", data, "--catalog", cat, "--embedder", "builtin"}
	cli := func(args ...string) (string, error) {
		out, err := exec.Command(bin, append(args, base...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := cli("index"); err != nil {
		t.Fatalf("index: %v\n%s", err, out)
	}

	// As a collector gathers a replica's stderr: its events (written by
	// the encoder the replica's --feedback-out uses) among log records.
	const request, pushed = "tell the team the build broke", "github__create_issue"
	var gathered strings.Builder
	gathered.WriteString(`time=2026-03-01T12:00:00Z level=INFO msg="serving over Streamable HTTP"` + "\n")
	for i := range 3 {
		line, err := store.EncodeFeedbackLine(store.FeedbackEvent{Request: request, Tool: pushed, Caller: fmt.Sprintf("user:%d", i), Time: time.Now().Add(-time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		gathered.Write(line)
		gathered.WriteString(`{"time":"2026-03-01T12:00:01Z","level":"INFO","msg":"index loaded"}` + "\n")
	}
	events := filepath.Join(tmp, "replica-1.log")
	os.WriteFile(events, []byte(gathered.String()), 0o644)

	bad := filepath.Join(tmp, "bad.jsonl")
	os.WriteFile(bad, []byte("level=INFO msg=x\n"+`{"toolscout_feedback":1,"request":"x","tool":"not a tool","time":"2026-03-01T12:00:00Z"}`+"\n"), 0o644)
	before, _ := treestate.Of(data)
	if out, err := cli("index", "--feedback", events, "--feedback", bad); err == nil || !strings.Contains(out, "bad.jsonl:2:") {
		t.Errorf("index --feedback with a malformed file: %v\n%s\nwant an error naming bad.jsonl:2", err, out)
	}
	if after, _ := treestate.Of(data); len(treestate.Diff(before, after)) != 0 {
		t.Errorf("a refused index --feedback changed the data dir: %v", treestate.Diff(before, after))
	}

	out, err := cli("index", "--feedback", events)
	if err != nil || !strings.Contains(out, "3 events from 1 file folded in") {
		t.Fatalf("index --feedback: %v\n%s", err, out)
	}
	if out, err := cli("index", "--feedback", events); err != nil || !strings.Contains(out, "0 events from 1 file folded in (3 already there") {
		t.Errorf("index --feedback again: %v\n%s\nwant nothing added twice", err, out)
	}
	out, err = cli("feedback", "--json")
	var learned struct {
		Events int           `json:"events"`
		Tools  []learnedTool `json:"tools"`
	}
	if err != nil || json.Unmarshal([]byte(out), &learned) != nil || learned.Events != 3 || len(learned.Tools) != 1 ||
		learned.Tools[0].Tool != pushed || learned.Tools[0].Callers != 3 || learned.Tools[0].Requests[0] != request {
		t.Fatalf("feedback --json: %v\n%s", err, out)
	}

	// Two replicas of the build, one ranking with what was learned.
	// The log's requests are ranked in the background once a serve has
	// loaded it: a replica's searches count them once that is done, so
	// the one with feedback is asked until its ranking moves (10 s at
	// most).
	built, _ := treestate.Of(data)
	rankOf := func(done func(int) bool, extra ...string) int {
		s := startServeHTTP(t, bin, nil, append(append([]string{"serve", "--read-only", "--http", "127.0.0.1:0"}, base...), extra...)...)
		s.waitReady(t)
		cs := connectMCP(t, s, nil, nil)
		defer func() {
			cs.Close()
			s.cmd.Process.Signal(syscall.SIGTERM)
			<-s.done
		}()
		rank := 99
		for begin := time.Now(); time.Since(begin) < 10*time.Second; time.Sleep(100 * time.Millisecond) {
			rank = discoverRank(t, cs, request, pushed)
			if done(rank) {
				break
			}
		}
		return rank
	}
	without := rankOf(func(int) bool { return true }, "--feedback", "off")
	with := rankOf(func(r int) bool { return r < without }, "--feedback-out", filepath.Join(tmp, "replica-2.log"))
	if without == 1 || with >= without {
		t.Errorf("%s ranks %d for %q with what replicas learned, %d without: want it higher with, and not first without", pushed, with, request, without)
	}
	if after, _ := treestate.Of(data); len(treestate.Diff(built, after)) != 0 {
		t.Errorf("read-only replicas changed the data dir: %v", treestate.Diff(built, after))
	}

	if out, err := cli("feedback", "--forget"); err != nil {
		t.Fatalf("feedback --forget: %v\n%s", err, out)
	}
	if out, _ := cli("feedback"); !strings.Contains(out, "nothing learned yet") {
		t.Errorf("feedback after --forget: %s", out)
	}
}

// TestFeedbackSwitches: --feedback and toolscout.feedback take on or
// off, and say so otherwise; --feedback-out is for read-only replicas.
func TestFeedbackSwitches(t *testing.T) {
	if _, err := parseConfig("servers.json", []byte(`{"mcpServers": {}, "toolscout": {"feedback": "yes"}}`), func(string) (string, bool) { return "", false }); err == nil || !strings.Contains(err.Error(), "toolscout.feedback") {
		t.Errorf("toolscout.feedback \"yes\": %v, want an error naming the key", err)
	}
	gc, err := parseConfig("servers.json", []byte(`{"mcpServers": {}, "toolscout": {"feedback": "off"}}`), func(string) (string, bool) { return "", false })
	if err != nil || gc.Feedback != "off" {
		t.Errorf("toolscout.feedback \"off\": %+v, %v", gc, err)
	}
	data := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--feedback", "maybe"}, `--feedback "maybe": use on or off`},
		{[]string{"serve", "--feedback-out", "events.jsonl"}, "--feedback-out is for --read-only replicas"},
	} {
		if _, stderr, code := runCLI(t, append(tc.args, "--data-dir", data)...); code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestFeedbackForgetReachesServe: `toolscout feedback --forget` beside a
// running serve takes what was learned out of its ranking within
// seconds, without a restart (issue 52, item 4: the forgotten tool kept
// ranking 2nd instead of 24th until the serve restarted).
func TestFeedbackForgetReachesServe(t *testing.T) {
	bin := buildBinary(t)
	tmp := t.TempDir()
	data, cat := filepath.Join(tmp, "data"), filepath.Join(tmp, "catalog.json")
	os.WriteFile(cat, []byte(feedbackCatalog), 0o644)
	base := []string{"--data-dir", data, "--catalog", cat, "--embedder", "builtin"}
	cli := func(args ...string) (string, error) {
		out, err := exec.Command(bin, append(args, base...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := cli("index"); err != nil {
		t.Fatalf("index: %v\n%s", err, out)
	}
	const request, pushed = "tell the team the build broke", "github__create_issue"
	var lines strings.Builder
	for i := range 3 {
		line, _ := store.EncodeFeedbackLine(store.FeedbackEvent{Request: request, Tool: pushed, Caller: fmt.Sprintf("user:%d", i), Time: time.Now().Add(-time.Hour)})
		lines.Write(line)
	}
	events := filepath.Join(tmp, "events.jsonl")
	os.WriteFile(events, []byte(lines.String()), 0o644)
	if out, err := cli("index", "--feedback", events); err != nil {
		t.Fatalf("index --feedback: %v\n%s", err, out)
	}

	s := startServeHTTP(t, bin, nil, append([]string{"serve", "--http", "127.0.0.1:0"}, base...)...)
	s.waitReady(t)
	cs := connectMCP(t, s, nil, nil)
	rank := func() int { return discoverRank(t, cs, request, pushed) }
	// The log's requests are ranked in the background once the serve
	// has loaded it: searches count them once that is done.
	for begin := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		r := rank()
		if r == 1 {
			break
		}
		if time.Since(begin) > 10*time.Second {
			t.Fatalf("%s ranks %d for %q with three callers' runs 10 s after the serve was ready, want 1\n%s", pushed, r, request, s.logText())
		}
	}
	if out, err := cli("feedback", "--forget"); err != nil {
		t.Fatalf("feedback --forget: %v\n%s", err, out)
	}
	start := time.Now()
	for rank() == 1 {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("%s still ranks first 10 s after feedback --forget: the running serve kept what was forgotten\n%s", pushed, s.logText())
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The serve logs the change once its ranking uses it, so just after
	// the search that saw it: wait for the line.
	waitLog(t, s, "learned feedback changed by another process; ranking with it")
}

// discoverRank is tool's rank (from 1) in discover_tools' answer to
// request, 99 when it is not there.
func discoverRank(t *testing.T, cs *mcp.ClientSession, request, tool string) int {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "discover_tools", Arguments: map[string]any{"query": request}})
	if err != nil || res.IsError {
		t.Fatalf("discover_tools: %v %+v", err, res)
	}
	var ans struct {
		Results []struct{ Name string } `json:"results"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &ans)
	for i, r := range ans.Results {
		if r.Name == tool {
			return i + 1
		}
	}
	return 99
}
