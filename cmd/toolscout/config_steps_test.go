package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolscout/toolscout/server/gateway"
)

// The steps of parseConfig, each on its own: every bad input is a
// ConfigError naming the file, the place and what to write instead.

// wantConfigError checks that err is the ConfigError of c.json at path
// with exactly reason.
func wantConfigError(t *testing.T, call string, err error, path, reason string) {
	t.Helper()
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("%s = %v, want a ConfigError", call, err)
	}
	if ce.File != "c.json" || ce.Path != path || ce.Reason != reason {
		t.Errorf("%s = %q (file %q, path %q), want path %q and reason %q", call, err, ce.File, ce.Path, path, reason)
	}
}

const configShape = `{"mcpServers": {"name": {"command": ...} or {"url": ...}}}`

func TestDecodeConfigFile(t *testing.T) {
	tests := []struct{ name, in, path, reason string }{
		{"syntax error on line 3", "{\n\"mcpServers\": {},\n\"toolscout\": [}", "", "invalid JSON on line 3: invalid character '}' looking for beginning of value"},
		{"an array", `[1, 2]`, "", "found JSON array, not an object: a config is " + configShape},
		{"a number", `42`, "", "found JSON number, not an object: a config is " + configShape},
		{"servers not an object", `{"mcpServers": ["a"]}`, "mcpServers", "expected an object, found JSON array"},
		{"toolscout section a string", `{"mcpServers": {}, "toolscout": "on"}`, "toolscout", "expected an object, found JSON string"},
		{"no mcpServers", `{"toolscout": {}}`, "mcpServers", "missing: a config is " + configShape},
		{"null mcpServers", `{"mcpServers": null}`, "mcpServers", "missing: a config is " + configShape},
		{"misspelt top key", `{"mcpservers": {}}`, "mcpservers", `unknown key (did you mean "mcpServers"?)`},
		{"unknown toolscout key", `{"mcpServers": {}, "toolscout": {"zzzzzz": 1}}`, "toolscout.zzzzzz", "unknown key: use " + strings.Join(toolscoutKeys, ", ")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeConfigFile("c.json", []byte(tc.in))
			wantConfigError(t, "decodeConfigFile("+tc.in+")", err, tc.path, tc.reason)
		})
	}
	top, err := decodeConfigFile("c.json", []byte(`{"mcpServers": {"a": {"command": "x"}}, "toolscout": {"pin": "off"}, "globalShortcut": "x"}`))
	if err != nil || len(top.MCPServers) != 1 || top.Toolscout == nil || top.Toolscout.Pin != "off" {
		t.Errorf("decodeConfigFile(a good file) = %+v, %v", top, err)
	}
}

func TestCheckToolscoutChoices(t *testing.T) {
	tests := []struct {
		name   string
		ts     toolscoutSection
		path   string
		reason string
	}{
		{"feedback", toolscoutSection{Feedback: "yes"}, "toolscout.feedback", `"yes": use on (learn from what agents run) or off`},
		{"pin", toolscoutSection{Pin: "On"}, "toolscout.pin", `"On": use on (hold a tool whose definition changed upstream until toolscout approve) or off (serve tools as listed)`},
		{"fallback", toolscoutSection{Fallback: "meta"}, "toolscout.fallback", `"meta": use eager (list every tool directly when the meta layer cannot serve) or none`},
		{"tool names", toolscoutSection{ToolNames: "bare"}, "toolscout.tool_names", `"bare": use qualified (every tool as domain__tool, the default) or server (each under its server's own name, domain__tool only where two servers have the same name)`},
		{"feedback before pin", toolscoutSection{Feedback: "x", Pin: "y"}, "toolscout.feedback", `"x": use on (learn from what agents run) or off`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantConfigError(t, "checkToolscoutChoices", checkToolscoutChoices("c.json", &tc.ts), tc.path, tc.reason)
		})
	}
	for _, ts := range []toolscoutSection{{}, {Feedback: "on", Pin: "off", Fallback: "eager", ToolNames: "server"}, {Feedback: "off", Pin: "on", Fallback: "none", ToolNames: "qualified"}} {
		if err := checkToolscoutChoices("c.json", &ts); err != nil {
			t.Errorf("checkToolscoutChoices(%+v) = %v, want nil", ts, err)
		}
	}
}

func TestParseToolscoutSection(t *testing.T) {
	tests := []struct {
		name   string
		ts     toolscoutSection
		path   string
		reason string
	}{
		{"expose", toolscoutSection{Expose: "all"}, "toolscout.expose", `"all": use meta, eager, core, dynamic, auto[:TOKENS], compact or code`},
		{"connect timeout", toolscoutSection{ConnectTimeout: -1}, "toolscout.connect_timeout", "-1: must be a number of seconds from 0 (the default) to 86400"},
		{"startup wait", toolscoutSection{StartupWait: 1e9}, "toolscout.startup_wait", "1e+09: must be a number of seconds from 0 (the default) to 86400"},
		{"initialize wait", toolscoutSection{InitializeWait: -0.5}, "toolscout.initialize_wait", "-0.5: must be a number of seconds from 0 (the default) to 86400"},
		{"instructions", toolscoutSection{Instructions: strings.Repeat("é", 2001)}, "toolscout.instructions", "2001 characters: at most 2000 (every client reads them before its first request: keep them to what the model must know)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantConfigError(t, "parseToolscoutSection", parseToolscoutSection("c.json", &tc.ts, &gatewayConfig{}), tc.path, tc.reason)
		})
	}
	var gc gatewayConfig
	ts := toolscoutSection{Model: " m ", Audit: "audit.log", Instructions: " hi ", StartupWait: 1.5, Feedback: "off"}
	if err := parseToolscoutSection(filepath.Join("etc", "c.json"), &ts, &gc); err != nil {
		t.Fatal(err)
	}
	if gc.Model != "m" || gc.Audit != filepath.Join("etc", "audit.log") || gc.Instructions != "hi" || gc.StartupWait != 1500*time.Millisecond || gc.Feedback != "off" {
		t.Errorf("parseToolscoutSection(%+v) = %+v", ts, gc)
	}
}

func TestServerTransport(t *testing.T) {
	tests := []struct {
		name   string
		e      serverEntry
		want   string
		path   string // "" for no error
		reason string
	}{
		{"stdio", serverEntry{Command: "x"}, "", "", ""},
		{"typed stdio", serverEntry{Command: "x", Type: "stdio"}, "", "", ""},
		{"http", serverEntry{URL: "https://h", Type: "http"}, "http", "", ""},
		{"streamable http", serverEntry{URL: "https://h", Type: "streamableHttp"}, "http", "", ""},
		{"sse", serverEntry{URL: "https://h", Type: "sse"}, "sse", "", ""},
		{"url untyped", serverEntry{URL: "https://h"}, "", "", ""},
		{"both", serverEntry{Command: "x", URL: "https://h"}, "", "mcpServers.a", `has both "command" and "url": a server is either started (command) or reached (url)`},
		{"neither", serverEntry{Type: "http"}, "", "mcpServers.a", `needs "command" (a stdio server) or "url" (a remote server)`},
		{"stdio without command", serverEntry{URL: "https://h", Type: "stdio"}, "", "mcpServers.a.type", `"stdio" needs "command"`},
		{"unknown type", serverEntry{URL: "https://h", Type: "ws"}, "", "mcpServers.a.type", `"ws": use stdio, http or sse`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := serverTransport("c.json", "mcpServers.a", tc.e)
			if tc.path != "" {
				wantConfigError(t, "serverTransport", err, tc.path, tc.reason)
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("serverTransport(%+v) = %q, %v, want %q", tc.e, got, err, tc.want)
			}
		})
	}
}

func TestExpander(t *testing.T) {
	x := &expander{file: "c.json", path: "mcpServers.a", getenv: env(map[string]string{"SET": "v", "EMPTY": ""})}
	for _, tc := range []struct{ in, want string }{
		{"${SET}/x", "v/x"},
		{"${EMPTY}", ""},
		{"${EMPTY:-d}", "d"},
		{"${UNSET:-d}", "d"},
		{"$SET {SET} ${1X}", "$SET {SET} ${1X}"},
	} {
		if got := x.expand("url", tc.in); got != tc.want || x.err != nil {
			t.Errorf("expand(%q) = %q, %v, want %q", tc.in, got, x.err, tc.want)
		}
	}
	if got := x.expand("args[2]", "${UNSET} ${SET}"); got != " v" {
		t.Errorf("expand with an unset var = %q, want %q", got, " v")
	}
	wantConfigError(t, "expand(${UNSET})", x.err, "mcpServers.a.args[2]", "${UNSET} is not set in the environment")
	// The first error is the one said; later values stay as written and
	// later steps do not run.
	if got := x.expand("env.K", "${OTHER}"); got != "${OTHER}" {
		t.Errorf("expand after an error = %q, want it as written", got)
	}
	ran := false
	x.then(func() error { ran = true; return nil })
	if ran {
		t.Error("then ran a step after an error")
	}
	wantConfigError(t, "the first error", x.err, "mcpServers.a.args[2]", "${UNSET} is not set in the environment")
	if m := x.expandMap("headers", nil); m != nil {
		t.Errorf("expandMap(nil) = %v, want nil", m)
	}
}

func TestUpstreamConfig(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name   string
		e      serverEntry
		path   string
		reason string
	}{
		{"long deprecation", serverEntry{Command: "x", DeprecatedTools: map[string]string{"b": "ok", "a": strings.Repeat("x", 301)}}, "mcpServers.a.deprecated_tools.a", "301 bytes: say in at most 300 what to use instead"},
		{"timeout", serverEntry{Command: "x", Timeout: -2}, "mcpServers.a.timeout", "-2: must be a number of seconds from 0 (the default) to 86400"},
		{"connect timeout", serverEntry{Command: "x", ConnectTimeout: 1e6}, "mcpServers.a.connect_timeout", "1e+06: must be a number of seconds from 0 (the default) to 86400"},
		{"url not http", serverEntry{URL: "file:///etc/passwd"}, "mcpServers.a.url", `"file:///etc/passwd" is not an http(s) URL`},
		{"url var unset", serverEntry{URL: "https://${HOST}/mcp"}, "mcpServers.a.url", "${HOST} is not set in the environment"},
		// An unset variable of the URL is said before a missing header file.
		{"url var before header file", serverEntry{URL: "https://${HOST}/mcp", HeaderFiles: map[string]string{"X-Key": filepath.Join(dir, "none")}}, "mcpServers.a.url", "${HOST} is not set in the environment"},
		{"env var unset", serverEntry{Command: "x", Env: map[string]string{"K": "${HOST}"}}, "mcpServers.a.env.K", "${HOST} is not set in the environment"},
		{"arg var unset", serverEntry{Command: "x", Args: []string{"-v", "${HOST}"}}, "mcpServers.a.args[1]", "${HOST} is not set in the environment"},
		{"command empty once expanded", serverEntry{Command: "${EMPTY}"}, "mcpServers.a.command", `"${EMPTY}" is empty once ${VAR}s are expanded`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := upstreamConfig("c.json", "mcpServers.a", "a", tc.e, env(map[string]string{"EMPTY": " "}), &gatewayConfig{})
			wantConfigError(t, "upstreamConfig", err, tc.path, tc.reason)
		})
	}
	e := serverEntry{URL: "https://${HOST}/mcp", Type: "sse", Headers: map[string]string{"A": "${TOK:-none}"}, Timeout: 2}
	uc, err := upstreamConfig("c.json", "mcpServers.a", "a", e, env(map[string]string{"HOST": "h.example"}), &gatewayConfig{})
	want := gateway.UpstreamConfig{Domain: "a", URL: "https://h.example/mcp", Transport: "sse", Headers: map[string]string{"A": "none"}, Timeout: 2 * time.Second}
	if err != nil || uc.Domain != want.Domain || uc.URL != want.URL || uc.Transport != want.Transport || uc.Headers["A"] != "none" || uc.Timeout != want.Timeout || uc.Env != nil {
		t.Errorf("upstreamConfig(%+v) = %+v, %v, want %+v", e, uc, err, want)
	}
}

func TestParseServer(t *testing.T) {
	gc := &gatewayConfig{}
	domains := map[string]string{}
	for _, key := range []string{"My Server", "off", "self"} {
		raw := map[string]string{
			"My Server": `{"command": "x", "env": {"T": "secret-value-1"}}`,
			"off":       `{"command": "y", "disabled": true}`,
			"self":      `{"command": "/opt/bin/toolscout", "args": ["serve"]}`,
		}[key]
		if err := parseServer("c.json", key, []byte(raw), env(nil), domains, gc); err != nil {
			t.Fatalf("parseServer(%s) = %v", key, err)
		}
	}
	if len(gc.Upstreams) != 1 || gc.Upstreams[0].Domain != "my-server" || strings.Join(gc.Disabled, ",") != "off" || strings.Join(gc.Skipped, ",") != "self" {
		t.Errorf("after three servers: upstreams %+v, disabled %v, skipped %v", gc.Upstreams, gc.Disabled, gc.Skipped)
	}
	tests := []struct{ name, key, raw, path, reason string }{
		{"name clash", "my-server", `{"command": "z"}`, "mcpServers.my-server", `server names "My Server" and "my-server" both become domain "my-server": rename one`},
		{"wrong type", "b", `{"command": 7}`, "mcpServers.b.command", "expected a string, found JSON number"},
		{"misspelt key", "b", `{"urll": "https://h"}`, "mcpServers.b.urll", `unknown key (did you mean "url"?)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantConfigError(t, "parseServer("+tc.raw+")", parseServer("c.json", tc.key, []byte(tc.raw), env(nil), domains, gc), tc.path, tc.reason)
		})
	}
}
