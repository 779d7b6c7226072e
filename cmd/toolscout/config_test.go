package main

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestParseConfig(t *testing.T) {
	data := `{"mcpServers": {
	  "GitHub Server": {"command": "npx", "args": ["-y", "@x/github"], "env": {"TOKEN": "${GH_TOKEN}"}, "cwd": "/tmp",
	                    "description": "GitHub", "groups": {"create_issue": "issues"}, "timeout": 2.5, "connect_timeout": 90,
	                    "disabled_tools": ["delete_repo"], "deprecated_tools": {"open_issue": "use create_issue"}},
	  "remote": {"url": "https://example.test/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
	  "old": {"url": "http://localhost:9/sse", "type": "sse"},
	  "off": {"command": "x", "disabled": true}
	}, "toolscout": {"expose": "core", "pinned": ["github-server__*"], "model": " mxbai-embed-large ", "connect_timeout": 120, "startup_wait": 5.5, "condense": true}}`
	gc, err := parseConfig("c.json", []byte(data), env(map[string]string{"GH_TOKEN": "ghp_1", "TOKEN": "t0k"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(gc.Upstreams) != 3 || gc.Expose != "core" || gc.Model != "mxbai-embed-large" || len(gc.Pinned) != 1 || len(gc.Disabled) != 1 || gc.Disabled[0] != "off" ||
		gc.ConnectTimeout != 2*time.Minute || gc.StartupWait != 5500*time.Millisecond || gc.Condense == nil || !*gc.Condense {
		t.Fatalf("config = %+v", gc)
	}
	gh := gc.Upstreams[0]
	if gh.Domain != "github-server" || gh.Command != "npx" || gh.Env["TOKEN"] != "ghp_1" || gh.Cwd != "/tmp" ||
		gh.Groups["create_issue"] != "issues" || gh.Timeout != 2500*time.Millisecond || gh.ConnectTimeout != 90*time.Second || gh.Description != "GitHub" ||
		strings.Join(gh.DisabledTools, ",") != "delete_repo" || gh.DeprecatedTools["open_issue"] != "use create_issue" {
		t.Errorf("github entry = %+v", gh)
	}
	if r := gc.Upstreams[2]; r.Domain != "remote" || r.Headers["Authorization"] != "Bearer t0k" || r.Transport != "" {
		t.Errorf("remote entry = %+v", r)
	}
	if o := gc.Upstreams[1]; o.Domain != "old" || o.Transport != "sse" {
		t.Errorf("old entry = %+v", o)
	}
}

// Keys of other clients are kept out of the way, not refused.
func TestParseConfigIgnoresOtherClientsKeys(t *testing.T) {
	data := `{"globalShortcut": "Ctrl+Space", "mcpServers": {"a": {"command": "x", "alwaysAllow": ["t"], "autoApprove": []}}}`
	if _, err := parseConfig("c.json", []byte(data), env(nil)); err != nil {
		t.Errorf("a config with other clients' keys: %v", err)
	}
}

func TestParseConfigSkipsToolscoutAndExpandsArgs(t *testing.T) {
	data := `{"mcpServers": {
	  "toolscout": {"command": "/opt/bin/toolscout", "args": ["serve"]},
	  "fs": {"command": "${NODE_BIN}/mcp-server-filesystem", "args": ["${HOME_DIR}/notes"]}}}`
	gc, err := parseConfig("c.json", []byte(data), env(map[string]string{"NODE_BIN": "/n", "HOME_DIR": "/home/ana"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(gc.Upstreams) != 1 || len(gc.Skipped) != 1 || gc.Skipped[0] != "toolscout" {
		t.Fatalf("config = %+v, want fs kept and toolscout skipped", gc)
	}
	if fs := gc.Upstreams[0]; fs.Command != "/n/mcp-server-filesystem" || fs.Args[0] != "/home/ana/notes" {
		t.Errorf("fs = %+v, want ${VAR}s expanded in command and args", fs)
	}
}

// TestParseConfigVarDefaults: ${VAR:-default}, as Claude Code's .mcp.json
// writes it, is VAR's value, or the default when VAR is unset or empty.
func TestParseConfigVarDefaults(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"set", map[string]string{"API_BASE_URL": "https://mine.test"}, "https://mine.test/mcp"},
		{"unset", map[string]string{}, "https://api.example.com/mcp"},
		{"empty", map[string]string{"API_BASE_URL": ""}, "https://api.example.com/mcp"},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := `{"mcpServers": {"api": {"type": "sse", "url": "${API_BASE_URL:-https://api.example.com}/mcp"}}}`
			gc, err := parseConfig("c.json", []byte(data), env(c.env))
			if err != nil {
				t.Fatal(err)
			}
			if got := gc.Upstreams[0].URL; got != c.want {
				t.Errorf("url = %q, want %q", got, c.want)
			}
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct{ name, in, path, reason string }{
		{"invalid json", "{\"mcpServers\": {\n\"a\": }", "", "line 2"},
		{"no mcpServers", `{"servers": {}}`, "mcpServers", "missing"},
		{"neither", `{"mcpServers": {"a": {}}}`, "mcpServers.a", `needs "command"`},
		{"both", `{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}`, "mcpServers.a", "both"},
		{"bad type", `{"mcpServers": {"a": {"command": "x", "type": "ws"}}}`, "mcpServers.a.type", "stdio, http or sse"},
		{"bad url", `{"mcpServers": {"a": {"url": "ftp://h"}}}`, "mcpServers.a.url", "not an http(s) URL"},
		{"unset var", `{"mcpServers": {"a": {"url": "http://h", "headers": {"X": "${NOPE}"}}}}`, "mcpServers.a.headers.X", "${NOPE} is not set"},
		{"unset var in env", `{"mcpServers": {"a": {"command": "x", "env": {"K": "${NOPE}"}}}}`, "mcpServers.a.env.K", "${NOPE}"},
		{"negative timeout", `{"mcpServers": {"a": {"command": "x", "timeout": -1}}}`, "mcpServers.a.timeout", "from 0 (the default)"},
		{"negative connect timeout", `{"mcpServers": {"a": {"command": "x", "connect_timeout": -5}}}`, "mcpServers.a.connect_timeout", "from 0 (the default)"},
		{"connect timeout of years", `{"mcpServers": {"a": {"command": "x", "connect_timeout": 1e12}}}`, "mcpServers.a.connect_timeout", "to 86400"},
		{"misspelt connect timeout", `{"mcpServers": {"a": {"command": "x", "connectTimeout": 30}}}`, "mcpServers.a.connectTimeout", `did you mean "connect_timeout"?`},
		{"connect timeout as text", `{"mcpServers": {"a": {"command": "x", "connect_timeout": "90s"}}}`, "mcpServers.a.connect_timeout", "expected a number, found JSON string"},
		{"long deprecation", `{"mcpServers": {"a": {"command": "x", "deprecated_tools": {"t": "` + strings.Repeat("x", 400) + `"}}}}`, "mcpServers.a.deprecated_tools.t", "400 bytes: say in at most 300"},
		{"negative startup wait", `{"mcpServers": {}, "toolscout": {"startup_wait": -1}}`, "toolscout.startup_wait", "from 0 (the default)"},
		{"startup wait as text", `{"mcpServers": {}, "toolscout": {"startup_wait": "30s"}}`, "toolscout.startup_wait", "expected a number, found JSON string"},
		{"wrong field type", `{"mcpServers": {"a": {"command": "x", "args": "y"}}}`, "mcpServers.a.args", "expected"},
		{"name clash", `{"mcpServers": {"My Server": {"command": "x"}, "my-server": {"command": "y"}}}`, "mcpServers.my-server", "both become domain"},
		{"bad pin", `{"mcpServers": {}, "toolscout": {"pin": "no"}}`, "toolscout.pin", `"no": use on (hold a tool whose definition changed upstream until toolscout approve) or off`},
		{"bad tool names", `{"mcpServers": {}, "toolscout": {"tool_names": "bare"}}`, "toolscout.tool_names", `"bare": use qualified (every tool as domain__tool, the default) or server`},
		{"tool names not text", `{"mcpServers": {}, "toolscout": {"tool_names": true}}`, "toolscout.tool_names", "expected a string, found JSON bool"},
		{"bad expose", `{"mcpServers": {}, "toolscout": {"expose": "all"}}`, "toolscout.expose", "meta, eager, core, dynamic, auto[:TOKENS], compact or code"},
		{"auto budget of zero", `{"mcpServers": {}, "toolscout": {"expose": "auto:0"}}`, "toolscout.expose", "from 1 to 1000000, e.g. auto:10000"},
		{"budget of another mode", `{"mcpServers": {}, "toolscout": {"expose": "eager:500"}}`, "toolscout.expose", "only auto takes a token budget"},
		{"disabled tools not a list", `{"mcpServers": {"a": {"command": "x", "disabled_tools": "t"}}}`, "mcpServers.a.disabled_tools", "expected"},
		{"misspelt disabled tools", `{"mcpServers": {"a": {"command": "x", "disabled_tool": ["t"]}}}`, "mcpServers.a.disabled_tool", `did you mean "disabled_tools"?`},
		{"misspelt key", `{"mcpServers": {"a": {"comand": "x"}}}`, "mcpServers.a.comand", `did you mean "command"?`},
		{"misspelt toolscout key", `{"mcpServers": {}, "toolscout": {"exposee": "meta"}}`, "toolscout.exposee", `did you mean "expose"?`},
		{"unknown toolscout key", `{"mcpServers": {}, "toolscout": {"colour": "red"}}`, "toolscout.colour", "use expose, pinned, model, quarantine"},
		{"misspelt mcpServers", `{"mcpServer": {"a": {"command": "x"}}}`, "mcpServer", `did you mean "mcpServers"?`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig("c.json", []byte(tc.in), env(nil))
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("parseConfig(%s) = %v, want a ConfigError", tc.in, err)
			}
			if ce.File != "c.json" || ce.Path != tc.path || !strings.Contains(ce.Reason, tc.reason) {
				t.Errorf("error = %q (path %q), want path %q and a reason containing %q", err, ce.Path, tc.path, tc.reason)
			}
		})
	}
}

func TestParseExpose(t *testing.T) {
	for _, tc := range []struct {
		in     string
		mode   string
		budget int
		err    string
	}{
		{"meta", "meta", 0, ""},
		{"auto", "auto", 0, ""},
		{"auto:5000", "auto", 5000, ""},
		{"compact", "compact", 0, ""},
		{"auto:", "", 0, "whole number of tokens"},
		{"auto:-3", "", 0, "whole number of tokens"},
		{"auto:2000000", "", 0, "from 1 to 1000000"},
		{"Auto", "", 0, "use meta, eager"},
	} {
		exp, err := parseExpose(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("parseExpose(%q) = %+v, %v; want an error containing %q", tc.in, exp, err, tc.err)
		case tc.err == "" && (err != nil || string(exp.Mode) != tc.mode || exp.Budget != tc.budget):
			t.Errorf("parseExpose(%q) = %+v, %v; want %s with budget %d", tc.in, exp, err, tc.mode, tc.budget)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"mcpServers": {"a": {"command": "x", "args": ["-y"], "env": {"A": "${B}"}}}}`))
	f.Add([]byte(`{"mcpServers": {"b": {"url": "https://h/mcp", "headers": {"H": "v"}, "type": "http"}}, "toolscout": {"expose": "eager"}}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"mcpServers": {}, "toolscout": {"callers": {"a": {"jwt_claims": {"sub": "x"}, "allow": ["*"]}}, "oauth": {"issuer": "https://id.example/r", "resource": "https://ts.example/mcp", "scopes": ["tools.read", "tools.run"], "read_scopes": [], "jwks_url": "https://id.example/jwks", "leeway": 5, "introspection": {"endpoint": "https://id.example/i", "client_id": "ts", "client_secret_file": "s"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		gc, err := parseConfig("fuzz.json", data, env(map[string]string{"B": "b"}))
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not a ConfigError: %v", err, err)
			}
			return
		}
		seen := map[string]bool{}
		for _, u := range gc.Upstreams {
			if (u.Command == "") == (u.URL == "") || seen[u.Domain] || u.Domain == "" || len(u.Domain) > 32 {
				t.Fatalf("bad upstream %+v", u)
			}
			seen[u.Domain] = true
		}
	})
}
