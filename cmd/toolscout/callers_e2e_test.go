package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server"
	"github.com/toolscout/toolscout/server/callers"
)

// e2eCaller is one caller of the end-to-end test: its credential, its
// lists as the config says them, and a tool it runs.
type e2eCaller struct {
	name, token string
	allow, deny []string
	run         string
	args        map[string]any
}

// callersSetup writes, in dir, the config of the three reference
// servers with four callers (ops and files by token files, ops with two
// for rotation; bot by a JWT signed with a key of the JWKS file; admin
// sees everything, to know what exists) and returns the callers.
func callersSetup(t *testing.T, dir string) (string, []e2eCaller) {
	t.Helper()
	nodeClient(t)
	root, _ := filepath.Abs("../..")
	bin := func(name string) string { return filepath.Join(root, "node_modules", ".bin", name) }
	files := filepath.Join(dir, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(files, "note.txt"), []byte("hello"), 0o644)
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("ops.token", "ops-old-token-0123456789abcdef")
	write("ops-new.token", "ops-new-token-0123456789abcdef")
	write("files.token", "files-token-0123456789abcdef")
	write("admin.token", "admin-token-0123456789abcdef")

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	write("jwks.json", string(jwks))
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	botJWT, err := jwt.Signed(sig).Claims(map[string]any{"iss": "https://id.example", "aud": "toolscout", "sub": "bot-1",
		"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()}).Serialize()
	if err != nil {
		t.Fatal(err)
	}

	cs := []e2eCaller{
		{name: "ops", token: "ops-new-token-0123456789abcdef", allow: []string{"memory", "filesystem__read_*"}, run: "memory__read_graph", args: map[string]any{}},
		{name: "files", token: "files-token-0123456789abcdef", allow: []string{"filesystem"}, deny: []string{"filesystem__write_*", "filesystem__edit_*", "filesystem__move_*", "filesystem__create_*"},
			run: "filesystem__list_allowed_directories", args: map[string]any{}},
		{name: "bot", token: botJWT, allow: []string{"everything"}, deny: []string{"everything__trigger-*", "everything__get-env"}, run: "everything__echo", args: map[string]any{"message": "hi"}},
	}
	cfg := map[string]any{
		"mcpServers": map[string]any{
			"memory":     map[string]any{"command": bin("mcp-server-memory"), "env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}},
			"filesystem": map[string]any{"command": bin("mcp-server-filesystem"), "args": []string{files}},
			"everything": map[string]any{"command": bin("mcp-server-everything")},
		},
		"toolscout": map[string]any{
			"callers": map[string]any{
				"ops":   map[string]any{"token_files": []string{"ops.token", "ops-new.token"}, "allow": cs[0].allow},
				"files": map[string]any{"token_files": []string{"files.token"}, "allow": cs[1].allow, "deny": cs[1].deny},
				"bot":   map[string]any{"jwt_claims": map[string]string{"sub": "bot-1"}, "allow": cs[2].allow, "deny": cs[2].deny},
				"admin": map[string]any{"token_files": []string{"admin.token"}, "allow": []string{"*"}},
			},
			"jwt": map[string]any{"jwks_file": "jwks.json", "issuer": "https://id.example", "audience": "toolscout"},
		},
	}
	js, _ := json.MarshalIndent(cfg, "", "  ")
	write("servers.json", string(js))
	return filepath.Join(dir, "servers.json"), cs
}

// connectAs connects a go-sdk client with token at protocol ("": the
// go-sdk's newest, the stateless 2026-07-28).
func connectAs(t *testing.T, s *httpServe, token, protocol string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "callers-test", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: s.base + "/mcp", HTTPClient: &http.Client{Transport: bearer{token}}, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("connect at %q: %v", protocol, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// recorder calls tools and keeps every answer's JSON, to look for
// hidden names in all of them at the end.
type recorder struct {
	t    *testing.T
	cs   *mcp.ClientSession
	seen strings.Builder
}

func (r *recorder) call(name string, args map[string]any) (*mcp.CallToolResult, string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		r.seen.WriteString(err.Error() + "\n")
		return nil, err.Error()
	}
	b, _ := json.Marshal(res)
	r.seen.Write(append(b, '\n'))
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return res, strings.Join(parts, "\n")
}

// allTools returns every tool the gateway has, by domain (what admin,
// who may see everything, browses), once every server has listed them.
func allTools(t *testing.T, s *httpServe, adminToken string) map[string][]string {
	t.Helper()
	r := &recorder{t: t, cs: connectAs(t, s, adminToken, "")}
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, txt := r.call(server.DiscoverTools, map[string]any{})
		var toc server.Contents
		json.Unmarshal([]byte(txt), &toc)
		ready := len(toc.Domains) == 3
		for _, d := range toc.Domains {
			ready = ready && d.ToolCount > 0 && d.Status == ""
		}
		if ready {
			out := map[string][]string{}
			for _, d := range toc.Domains {
				_, txt := r.call(server.DiscoverTools, map[string]any{"domain": d.Name, "limit": 100})
				var l server.DomainListing
				json.Unmarshal([]byte(txt), &l)
				for _, e := range l.Tools {
					out[d.Name] = append(out[d.Name], e.Name)
				}
			}
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("the three servers' tools are not all in after 60 s: %s\n%s", txt, s.logText())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestCallersEndToEnd serves the three reference servers over HTTP to
// three callers (two by token files, one by a JWT checked against a JWKS
// file), in meta and in eager mode, over both protocol generations: each
// caller's tools/list, browsing, searches, schemas, executions, direct
// calls and misspelt names show only its tools, and no answer, nor
// /metrics scraped with its token, names a tool it may not see.
func TestCallersEndToEnd(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	for _, mode := range []server.Mode{server.ExposeMeta, server.ExposeEager} {
		t.Run(string(mode), func(t *testing.T) {
			dir := t.TempDir()
			cfg, cs := callersSetup(t, dir)
			s := startServeHTTP(t, bin, []string{"OLLAMA_HOST=127.0.0.1:9"}, "serve", "--http", "127.0.0.1:0", "--config", cfg,
				"--embedder", "builtin", "--data-dir", filepath.Join(dir, "data"), "--expose", string(mode))
			s.waitReady(t)
			if code, _ := get(t, s.base+"/metrics"); code != http.StatusUnauthorized {
				t.Errorf("/metrics without a token: %d, want 401", code)
			}
			all := allTools(t, s, "admin-token-0123456789abcdef")
			for _, c := range cs {
				pol, err := callers.NewPolicy(c.allow, c.deny)
				if err != nil {
					t.Fatal(err)
				}
				var visible, hidden []string
				visibleBy := map[string][]string{}
				for d, names := range all {
					for _, n := range names {
						if pol.Visible(d, strings.TrimPrefix(n, d+"__")) {
							visible = append(visible, n)
							visibleBy[d] = append(visibleBy[d], n)
						} else {
							hidden = append(hidden, n)
						}
					}
				}
				slices.Sort(visible)
				if len(visible) < 5 || len(hidden) == 0 {
					t.Fatalf("%s: %d visible, %d hidden: the test needs both", c.name, len(visible), len(hidden))
				}
				for _, protocol := range []string{"", "2025-11-25"} {
					t.Run(c.name+"/"+protocol, func(t *testing.T) {
						checkCaller(t, s, mode, c, visible, visibleBy, hidden, protocol)
					})
				}
				_, scrape := get(t, s.base+"/metrics", "Authorization", "Bearer "+c.token)
				for _, h := range hidden {
					if strings.Contains(scrape, h) {
						t.Errorf("%s's /metrics names hidden %s", c.name, h)
					}
				}
				for d := range all {
					if len(visibleBy[d]) == 0 && strings.Contains(scrape, `server="`+d+`"`) {
						t.Errorf("%s's /metrics names server %s, all of whose tools it may not see", c.name, d)
					}
				}
				if got, want := metricLine(scrape, "toolscout_index_tools"), fmt.Sprintf("toolscout_index_tools %d", len(visible)); got != want {
					t.Errorf("%s's /metrics: %q, want %q", c.name, got, want)
				}
			}
		})
	}
}

func checkCaller(t *testing.T, s *httpServe, mode server.Mode, c e2eCaller, visible []string, visibleBy map[string][]string, hidden []string, protocol string) {
	r := &recorder{t: t, cs: connectAs(t, s, c.token, protocol)}
	ctx := context.Background()
	r.seen.WriteString(r.cs.InitializeResult().Instructions + "\n")

	// tools/list: the meta-tools, and in eager mode exactly its tools.
	res, err := r.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	r.seen.Write(b)
	var listed []string
	for _, tl := range res.Tools {
		if tl.Name != server.DiscoverTools && tl.Name != server.GetToolSchema && tl.Name != server.ExecuteTool {
			listed = append(listed, tl.Name)
		}
	}
	slices.Sort(listed)
	want := visible
	if mode == server.ExposeMeta {
		want = nil
	}
	if !slices.Equal(listed, want) {
		t.Errorf("tools/list = %v, want %v", listed, want)
	}
	if res.CacheScope != "private" {
		t.Errorf("tools/list cacheScope %q, want private", res.CacheScope)
	}

	// Browsing: its domains, its tools in each.
	_, txt := r.call(server.DiscoverTools, map[string]any{})
	var toc server.Contents
	json.Unmarshal([]byte(txt), &toc)
	var doms []string
	for _, d := range toc.Domains {
		doms = append(doms, d.Name)
	}
	var wantDoms []string
	for d := range visibleBy {
		wantDoms = append(wantDoms, d)
	}
	slices.Sort(wantDoms)
	if !slices.Equal(doms, wantDoms) || toc.TotalTools != len(visible) {
		t.Errorf("discover_tools = %s, want domains %v and %d tools", txt, wantDoms, len(visible))
	}
	for d, names := range visibleBy {
		_, txt := r.call(server.DiscoverTools, map[string]any{"domain": d, "limit": 100})
		var l server.DomainListing
		json.Unmarshal([]byte(txt), &l)
		var got []string
		for _, e := range l.Tools {
			got = append(got, e.Name)
		}
		slices.Sort(got)
		slices.Sort(names)
		if !slices.Equal(got, names) {
			t.Errorf("discover_tools domain %s = %v, want %v", d, got, names)
		}
	}
	for _, d := range []string{"memory", "filesystem", "everything"} {
		if len(visibleBy[d]) == 0 {
			if res, txt := r.call(server.DiscoverTools, map[string]any{"domain": d}); res == nil || !res.IsError {
				t.Errorf("discover_tools domain %s (hidden) = %s, want an unknown domain", d, txt)
			}
		}
	}

	// Searches: k results, all its own.
	for _, q := range []string{"write text to a file on disk", "read a file", "create entities in the knowledge graph", "add two numbers", "run a long operation", "print environment variables"} {
		_, txt := r.call(server.DiscoverTools, map[string]any{"query": q, "limit": 5})
		var a server.SearchAnswer
		json.Unmarshal([]byte(txt), &a)
		if len(a.Results) != 5 {
			t.Errorf("search %q: %d results, want 5: %s", q, len(a.Results), txt)
		}
		for _, e := range a.Results {
			if !slices.Contains(visible, e.Name) {
				t.Errorf("search %q found %s, which %s may not see", q, e.Name, c.name)
			}
		}
	}

	// Schemas: every visible tool, related tools its own; hidden ones
	// and misspellings are unknown, suggesting its tools only.
	for i := 0; i < len(visible); i += server.MaxBatch {
		batch := visible[i:min(i+server.MaxBatch, len(visible))]
		_, txt := r.call(server.GetToolSchema, map[string]any{"tool_names": batch})
		var a server.SchemaAnswer
		json.Unmarshal([]byte(txt), &a)
		if len(a.Tools) != len(batch) || len(a.Errors) > 0 {
			t.Errorf("get_tool_schema %v: %d tools, errors %v", batch, len(a.Tools), a.Errors)
		}
		for _, ts := range a.Tools {
			for _, rt := range ts.RelatedTools {
				if !slices.Contains(visible, rt.Name) {
					t.Errorf("%s's related tools name %s", ts.Name, rt.Name)
				}
			}
		}
	}
	// Probes name a hidden tool, and their answers echo that name: each
	// is checked for every other hidden name once the asked one is
	// taken out.
	probe := func(asked, name string, args map[string]any) (*mcp.CallToolResult, string) {
		t.Helper()
		p := &recorder{t: t, cs: r.cs}
		res, txt := p.call(name, args)
		rest := strings.ReplaceAll(p.seen.String(), asked, "")
		for _, o := range hidden {
			if strings.Contains(rest, o) {
				t.Errorf("the answer to %s %v names hidden %s: %s", name, args, o, p.seen.String())
			}
		}
		return res, txt
	}
	for _, h := range hidden {
		if res, txt := probe(h, server.GetToolSchema, map[string]any{"tool_name": h}); res == nil || !res.IsError || !strings.Contains(txt, "unknown tool") {
			t.Errorf("get_tool_schema %s (hidden) = %s, want unknown tool", h, txt)
		}
		probe(h[:len(h)-1], server.GetToolSchema, map[string]any{"tool_name": h[:len(h)-1]})
		if res, txt := probe(h, server.ExecuteTool, map[string]any{"tool_name": h, "arguments": map[string]any{}}); res == nil || !res.IsError || !strings.Contains(txt, "unknown tool") {
			t.Errorf("execute_tool %s (hidden) = %s, want unknown tool", h, txt)
		}
	}
	v := visible[len(visible)/2]
	if _, txt := r.call(server.GetToolSchema, map[string]any{"tool_name": v[:len(v)-1]}); !strings.Contains(txt, "did you mean") || !strings.Contains(txt, v) {
		t.Errorf("get_tool_schema %s (misspelt) = %s, want a suggestion of %s", v[:len(v)-1], txt, v)
	}

	// Runs: its tool through execute_tool, and by name in eager mode.
	if res, txt := r.call(server.ExecuteTool, map[string]any{"tool_name": c.run, "arguments": c.args}); res == nil || res.IsError {
		t.Errorf("execute_tool %s = %s", c.run, txt)
	}
	if mode == server.ExposeEager {
		if res, txt := r.call(c.run, c.args); res == nil || res.IsError {
			t.Errorf("%s by name = %s", c.run, txt)
		}
	}
	// A hidden tool called by name is answered as a tool that does not
	// exist.
	h := hidden[0]
	_, gotH := probe(h, h, map[string]any{})
	_, gotNone := r.call("memory__no_such_tool", map[string]any{})
	if strings.ReplaceAll(gotH, h, "X") != strings.ReplaceAll(gotNone, "memory__no_such_tool", "X") {
		t.Errorf("calling hidden %s = %q; calling a tool that does not exist = %q", h, gotH, gotNone)
	}

	seen := r.seen.String()
	for _, h := range hidden {
		if strings.Contains(seen, h) {
			t.Errorf("an answer names hidden %s", h)
		}
	}
}
