package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAuditConfig: toolscout.audit is a path beside the config file
// (or absolute, or - for stderr); toolscout.audit_arguments a boolean.
func TestAuditConfig(t *testing.T) {
	for _, c := range []struct {
		name, toolscout string
		audit           string
		args            *bool
	}{
		{"relative", `{"audit": "audit.jsonl"}`, filepath.Join("/etc/toolscout", "audit.jsonl"), nil},
		{"absolute", `{"audit": "/var/log/toolscout.jsonl", "audit_arguments": true}`, "/var/log/toolscout.jsonl", new(true)},
		{"stderr", `{"audit": "-", "audit_arguments": false}`, "-", new(false)},
		{"unset", `{}`, "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			gc, err := parseConfig("/etc/toolscout/servers.json", []byte(`{"mcpServers": {}, "toolscout": `+c.toolscout+`}`), env(nil))
			if err != nil {
				t.Fatal(err)
			}
			if gc.Audit != c.audit || fmt.Sprint(deref(gc.AuditArguments)) != fmt.Sprint(deref(c.args)) {
				t.Errorf("audit, audit_arguments = %q, %v; want %q, %v", gc.Audit, deref(gc.AuditArguments), c.audit, deref(c.args))
			}
		})
	}
	for _, c := range []struct{ in, path, reason string }{
		{`{"audit_arguments": "yes"}`, "toolscout.audit_arguments", "expected"},
		{`{"audit": true}`, "toolscout.audit", "expected"},
		{`{"audit_argument": true}`, "toolscout.audit_argument", `did you mean "audit_arguments"?`},
	} {
		_, err := parseConfig("c.json", []byte(`{"mcpServers": {}, "toolscout": `+c.in+`}`), env(nil))
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(ce.Path, c.path) || !strings.Contains(ce.Reason, c.reason) {
			t.Errorf("parseConfig(%s) = %v, want %s: ...%s", c.in, err, c.path, c.reason)
		}
	}
}

// deref shows a *bool.
func deref(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

// TestAuditFlags: each flag given wins over the config's key; arguments
// need a trail.
func TestAuditFlags(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		name  string
		flags []string
		gc    *gatewayConfig
		dest  string
		args  bool
		err   string
	}{
		{"off by default", nil, nil, "", false, ""},
		{"flags", []string{"--audit", "a.jsonl", "--audit-arguments"}, nil, "a.jsonl", true, ""},
		{"config", nil, &gatewayConfig{Audit: "/c.jsonl", AuditArguments: &yes}, "/c.jsonl", true, ""},
		{"flag over config", []string{"--audit", "-", "--audit-arguments=false"}, &gatewayConfig{Audit: "/c.jsonl", AuditArguments: &yes}, "-", false, ""},
		{"flag off over config", []string{"--audit="}, &gatewayConfig{Audit: "/c.jsonl", AuditArguments: &no}, "", false, ""},
		{"arguments without a trail", []string{"--audit-arguments"}, nil, "", false, "--audit-arguments needs an audit trail"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var f auditFlags
			fs := newFlagSet("serve", "serve", io.Discard)
			f.register(fs)
			if _, err := parseFlags(fs, c.flags); err != nil {
				t.Fatal(err)
			}
			dest, args, err := f.resolve(fs, c.gc)
			if dest != c.dest || args != c.args || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Errorf("resolve(%v, %+v) = %q, %v, %v; want %q, %v, %q", c.flags, c.gc, dest, args, err, c.dest, c.args, c.err)
			}
		})
	}
}

// readLines returns the JSON lines of path, failing on a torn one.
func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for i, l := range strings.SplitAfter(string(data), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if !strings.HasSuffix(l, "\n") || json.Unmarshal([]byte(l), &m) != nil {
			t.Fatalf("%s line %d is torn: %.200q", path, i+1, l)
		}
		out = append(out, m)
	}
	return out
}

// TestAuditFileRotation: while lines are written at once, a rotation
// that moves the file away and reopens it (SIGHUP) loses and tears no
// line: each lands whole in the old file or the new one. After a
// copytruncate rotation, lines go on at the file's new end.
func TestAuditFileRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	af, err := newAuditFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer af.Close()
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the trail's mode = %v (%v), want 0600", st.Mode().Perm(), err)
	}
	var logBuf bytes.Buffer
	hup := make(chan os.Signal)
	ctx, cancel := context.WithCancel(context.Background())
	reopened := make(chan struct{})
	go func() {
		defer close(reopened)
		af.reopenOn(ctx, hup, slog.New(slog.NewTextHandler(&logBuf, nil)))
	}()
	const writers, each = 8, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				line := fmt.Sprintf(`{"w":%d,"i":%d,"pad":%q}`+"\n", w, i, strings.Repeat("p", 500))
				if _, err := af.Write([]byte(line)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	time.Sleep(time.Millisecond)
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	hup <- syscall.SIGHUP
	wg.Wait()
	cancel()
	<-reopened
	old, cur := readLines(t, path+".1"), readLines(t, path)
	seen := map[string]bool{}
	for _, l := range append(old, cur...) {
		seen[fmt.Sprint(l["w"], "/", l["i"])] = true
	}
	if len(seen) != writers*each || len(old)+len(cur) != writers*each {
		t.Errorf("%d lines before the rotation, %d after, %d distinct; want %d in all, each once", len(old), len(cur), len(seen), writers*each)
	}
	if !strings.Contains(logBuf.String(), "trail reopened") {
		t.Errorf("log = %q, want the reopening said", logBuf.String())
	}

	// copytruncate: the file is copied, then truncated under the writer.
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	af.Write([]byte(`{"after":"truncate"}` + "\n"))
	if data, _ := os.ReadFile(path); string(data) != `{"after":"truncate"}`+"\n" {
		t.Errorf("after a truncation the file holds %q, want the new line alone (no hole before it)", data)
	}
}

// TestServeAudit: serve --audit FILE over HTTP with a real upstream
// server writes one line per call with the caller's session and no
// arguments; SIGHUP after the file was moved away starts a new one.
func TestServeAudit(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	cfg := everythingConfig(t, false)
	dir := t.TempDir()
	trail := filepath.Join(dir, "audit.jsonl")
	s := startServeHTTP(t, bin, nil, "serve", "--http", "127.0.0.1:0", "--config", cfg, "--embedder", "builtin",
		"--data-dir", filepath.Join(dir, "data"), "--audit", trail)
	s.waitReady(t)
	cs := connectMCP(t, s, nil, nil)
	run := func(message string) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "execute_tool",
			Arguments: map[string]any{"tool_name": "everything__echo", "arguments": map[string]any{"message": message}}})
		if err != nil || res.IsError {
			t.Fatalf("execute_tool everything__echo: %v %+v", err, res)
		}
	}
	run("secret-one")
	if err := os.Rename(trail, trail+".1"); err != nil {
		t.Fatal(err)
	}
	s.cmd.Process.Signal(syscall.SIGHUP)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.logText(), "trail reopened") {
		if time.Now().After(deadline) {
			t.Fatalf("no reopening after SIGHUP; log:\n%s", s.logText())
		}
		time.Sleep(20 * time.Millisecond)
	}
	run("secret-two")
	before, after := readLines(t, trail+".1"), readLines(t, trail)
	if len(before) != 1 || len(after) != 1 {
		t.Fatalf("%d lines before SIGHUP, %d after; want one each", len(before), len(after))
	}
	for _, l := range append(before, after...) {
		if l["caller"] != "session:"+cs.ID() || l["tool"] != "everything__echo" || l["upstream"] != "everything" || l["outcome"] != "ok" ||
			l["via"] != "execute_tool" || l["arguments"] != nil {
			t.Errorf("line %v, want everything__echo run ok by session:%s, no arguments", l, cs.ID())
		}
	}
	for _, f := range []string{trail, trail + ".1"} {
		if data, _ := os.ReadFile(f); bytes.Contains(data, []byte("secret")) {
			t.Errorf("%s holds an argument without --audit-arguments: %s", f, data)
		}
	}
}
