package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The fixtures in testdata/connect are each client's own format as its
// documentation shows it (docs/connect.md cites the pages):
// claude_desktop_config.json, claude.json (Claude Code's ~/.claude.json),
// project.mcp.json (a Claude Code project's .mcp.json), cursor_mcp.json
// and vscode_mcp.json (JSONC: comments, trailing commas, inputs, 20
// servers).

var secretRE = regexp.MustCompile(`[A-Za-z0-9_]*SECRET[A-Za-z0-9_]*`)

// fixtureSecrets returns the secret values a fixture holds (a Claude
// Code project's .mcp.json, checked into git, holds ${VAR}s instead).
func fixtureSecrets(t *testing.T, data []byte) []string {
	t.Helper()
	return secretRE.FindAllString(string(data), -1)
}

// connectCLI runs toolscout with args and returns stdout+stderr.
func connectCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), args, &out, &out)
	return out.String(), err
}

// snapshot returns every file under dir: path → content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			files[p] = string(data)
		}
		return nil
	})
	return files
}

// serversOf returns the servers (name → canonical JSON) of a file's key.
func serversOf(t *testing.T, file, key string) (map[string]string, []string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ct, err := readJSONC(file, data)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := findMember(ct.plain, key)
	if !ok {
		t.Fatalf("%s has no %q", file, key)
	}
	out := map[string]string{}
	var order []string
	for _, s := range objectMembers(ct.plain, m.with) {
		out[s.name] = canonicalJSON(ct.plain[s.with.start:s.with.end])
		order = append(order, s.name)
	}
	return out, order
}

// otherKeys returns the file's top-level members but key, canonical.
func otherKeys(t *testing.T, data []byte, key string) map[string]string {
	t.Helper()
	ct := blankJSONC(data)
	out := map[string]string{}
	for _, m := range objectMembers(ct.plain, topObject(ct.plain)) {
		if m.name != key {
			out[m.name] = canonicalJSON(ct.plain[m.with.start:m.with.end])
		}
	}
	return out
}

func TestConnectClients(t *testing.T) {
	for _, c := range []struct {
		name, fixture string
		args          []string
		// at is where the fixture goes, relative to the home folder
		// (a project's files: relative to home/proj).
		at       string
		key      string
		typed    bool
		servers  []string
		disabled []string
		notes    []string
	}{
		{"claude-desktop", "claude_desktop_config.json", []string{"claude-desktop"}, ".config/Claude/claude_desktop_config.json", "mcpServers", false,
			[]string{"filesystem", "github", "weather"}, nil, nil},
		{"claude-code user", "claude.json", []string{"claude-code"}, ".claude.json", "mcpServers", true,
			[]string{"airtable", "notion", "secure-api", "asana"}, nil, nil},
		{"claude-code project", "project.mcp.json", []string{"claude-code", "--project", "HOME/proj"}, "proj/.mcp.json", "mcpServers", true,
			[]string{"shared-server", "api-server", "playwright"}, nil, nil},
		{"cursor", "cursor_mcp.json", []string{"cursor"}, ".cursor/mcp.json", "mcpServers", false,
			[]string{"playwright", "context7", "linear", "server-name"}, []string{"server-name"}, nil},
		{"cursor project", "cursor_mcp.json", []string{"cursor", "--project", "HOME/proj"}, "proj/.cursor/mcp.json", "mcpServers", false,
			[]string{"playwright", "context7", "linear", "server-name"}, []string{"server-name"}, nil},
		{"vscode user", "vscode_mcp.json", []string{"vscode"}, ".config/Code/User/mcp.json", "servers", true,
			twentyServers(), nil, []string{"${input:perplexity-key}", "${workspaceFolder}", `"envFile"`, "comments inside \"servers\""}},
		{"vscode project", "vscode_mcp.json", []string{"vscode", "--project", "HOME/proj"}, "proj/.vscode/mcp.json", "servers", true,
			twentyServers(), nil, nil},
		{"config-file, VS Code's format", "vscode_mcp.json", []string{"--config-file", "HOME/elsewhere/mcp.json"}, "elsewhere/mcp.json", "servers", true,
			twentyServers(), nil, nil},
		{"config-file, mcpServers", "claude_desktop_config.json", []string{"--config-file", "HOME/elsewhere/windsurf.json"}, "elsewhere/windsurf.json", "mcpServers", false,
			[]string{"filesystem", "github", "weather"}, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("XDG_CONFIG_HOME", "")
			fixture, err := os.ReadFile(filepath.Join("testdata", "connect", c.fixture))
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(home, c.at)
			os.MkdirAll(filepath.Dir(file), 0o755)
			if err := os.WriteFile(file, fixture, 0o644); err != nil {
				t.Fatal(err)
			}
			to := filepath.Join(home, ".config", "toolscout", "servers.json")
			args := []string{"connect"}
			for _, a := range c.args {
				args = append(args, strings.ReplaceAll(a, "HOME", home))
			}
			before, _ := serversOf(t, file, c.key)
			out, err := connectCLI(t, args...)
			if err != nil {
				t.Fatalf("connect %v: %v\n%s", c.args, err, out)
			}
			for _, s := range fixtureSecrets(t, fixture) {
				if strings.Contains(out, s) {
					t.Errorf("connect printed the secret %q:\n%s", s, out)
				}
			}
			for _, n := range c.notes {
				if !strings.Contains(out, n) {
					t.Errorf("connect says nothing of %s:\n%s", n, out)
				}
			}

			// toolscout's config: every server, as defined, disabled ones
			// still disabled, and toolscout can read it.
			got, order := serversOf(t, to, "mcpServers")
			if !slices.Equal(order, c.servers) {
				t.Errorf("toolscout's config has servers %v, want %v", order, c.servers)
			}
			for name, def := range before {
				want := strings.ReplaceAll(def, "${env:LINEAR_TOKEN}", "${LINEAR_TOKEN}")
				if got[name] != want {
					t.Errorf("server %s = %s, want %s", name, got[name], want)
				}
			}
			data, _ := os.ReadFile(to)
			gc, err := parseConfig(to, data, func(string) (string, bool) { return "https://set.invalid", true })
			if err != nil {
				t.Fatalf("toolscout cannot read its config: %v\n%s", err, data)
			}
			if !slices.Equal(gc.Disabled, c.disabled) {
				t.Errorf("disabled %v, want %v", gc.Disabled, c.disabled)
			}
			if fi, _ := os.Stat(to); fi.Mode().Perm() != 0o600 {
				t.Errorf("toolscout's new config has mode %v, want 0600 (it holds secrets)", fi.Mode().Perm())
			}

			// The client's file: toolscout alone, the rest as it was.
			after, _ := os.ReadFile(file)
			clientServers, names := serversOf(t, file, c.key)
			if !slices.Equal(names, []string{"toolscout"}) {
				t.Fatalf("the client's servers are %v, want toolscout alone", names)
			}
			var entry struct {
				Type    string   `json:"type"`
				Command string   `json:"command"`
				Args    []string `json:"args"`
			}
			json.Unmarshal([]byte(clientServers["toolscout"]), &entry)
			self, _ := os.Executable()
			self, _ = filepath.EvalSymlinks(self)
			wantType := map[bool]string{true: "stdio"}[c.typed]
			if entry.Command != self || !slices.Equal(entry.Args, []string{"serve", "--config", to}) || entry.Type != wantType {
				t.Errorf("toolscout's entry = %+v, want type %q, %s serve --config %s", entry, wantType, self, to)
			}
			if o, a := otherKeys(t, fixture, c.key), otherKeys(t, after, c.key); !mapsEqual(o, a) {
				t.Errorf("the client's other keys changed:\n%v\nwant\n%v", a, o)
			}
			if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o644 {
				t.Errorf("the client's file has mode %v, want its 0644", fi.Mode().Perm())
			}

			// Connecting again changes nothing: toolscout is skipped.
			if out, err := connectCLI(t, args...); err != nil || !strings.Contains(out, "imported 0 servers") {
				t.Errorf("second connect: %v\n%s", err, out)
			}
			if again, _ := os.ReadFile(file); !bytes.Equal(again, after) {
				t.Errorf("a second connect changed the client's file")
			}

			// Undo twice: back to the fixture, byte for byte, no config.
			for range 2 {
				if out, err := connectCLI(t, "connect", "--undo"); err != nil {
					t.Fatalf("undo: %v\n%s", err, out)
				}
			}
			if restored, _ := os.ReadFile(file); !bytes.Equal(restored, fixture) {
				t.Errorf("undo left\n%s\nwant\n%s", restored, fixture)
			}
			if _, err := os.Stat(to); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("undo left toolscout's config it created: %v", err)
			}
			if out, err := connectCLI(t, "connect", "--undo"); err == nil || !strings.Contains(err.Error(), "nothing to undo") {
				t.Errorf("a third undo: %v\n%s", err, out)
			}
		})
	}
}

func twentyServers() []string {
	var s []string
	for i := 1; i <= 20; i++ {
		s = append(s, "server-"+string(rune('0'+i/10))+string(rune('0'+i%10)))
	}
	return s
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// connectSetup writes the VS Code fixture and a toolscout config of its
// own, returning the home folder, both paths and both contents.
func connectSetup(t *testing.T, toolscoutConfig string) (home, file, to string, fixture []byte) {
	t.Helper()
	home = t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	fixture, err := os.ReadFile(filepath.Join("testdata", "connect", "vscode_mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(home, "proj", ".vscode", "mcp.json")
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, fixture, 0o644)
	to = filepath.Join(home, "ts", "servers.json")
	if toolscoutConfig != "" {
		os.MkdirAll(filepath.Dir(to), 0o700)
		os.WriteFile(to, []byte(toolscoutConfig), 0o600)
	}
	return home, file, to, fixture
}

const ownConfig = `{
  "toolscout": {"expose": "meta", "pin": "off"},
  "mcpServers": {
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {"MEMORY_TOKEN": "ownSECRETmemory"}}
  }
}
`

// TestConnectMerge: servers toolscout's config has are kept; a name it
// has with another definition is refused (naming it) unless --replace;
// one it has as defined is no conflict.
func TestConnectMerge(t *testing.T) {
	conflicting := strings.Replace(ownConfig, `"memory"`, `"server-03": {"command": "other"}, "memory"`, 1)
	same := strings.Replace(ownConfig, `"memory"`, `"server-02": {"type": "stdio", "command": "npx", "args": ["-y", "@example/mcp-2", "--port", "3002"], "env": {"EXAMPLE_TOKEN": "vsSECRETenv0002", "LOG_LEVEL": "debug"}, "cwd": "/work/project"}, "memory"`, 1)
	for _, c := range []struct {
		name, config string
		replace      bool
		wantErr      string
		wantOut      string
		server03     string
	}{
		{"new names", ownConfig, false, "", "imported 20 servers", `"@example/mcp-3"`},
		{"conflict", conflicting, false, `has server "server-03" with another definition`, "", `"other"`},
		{"conflict replaced", conflicting, true, "", "replaced (--replace): server-03", `"@example/mcp-3"`},
		{"same definition", same, false, "", "already in toolscout's config as defined: server-02", `"@example/mcp-3"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			home, file, to, _ := connectSetup(t, c.config)
			args := []string{"connect", "vscode", "--project", filepath.Join(home, "proj"), "--to", to}
			if c.replace {
				args = append(args, "--replace")
			}
			before := snapshot(t, home)
			out, err := connectCLI(t, args...)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("connect = %v, want an error saying %s", err, c.wantErr)
				}
				if after := snapshot(t, home); !mapsEqual(before, after) {
					t.Errorf("a refused connect changed files")
				}
				return
			}
			if err != nil || !strings.Contains(out, c.wantOut) {
				t.Fatalf("connect: %v, want %q in\n%s", err, c.wantOut, out)
			}
			got, order := serversOf(t, to, "mcpServers")
			if len(order) != 21 || got["memory"] == "" || !strings.Contains(got["server-03"], c.server03) {
				t.Errorf("toolscout's config has %v; server-03 %s", order, got["server-03"])
			}
			data, _ := os.ReadFile(to)
			if !bytes.HasPrefix(data, []byte(ownConfig[:strings.Index(ownConfig, `"memory"`)])) {
				t.Errorf("the start of toolscout's config changed:\n%s", data)
			}
			gc, err := parseConfig(to, data, func(string) (string, bool) { return "x", true })
			if err != nil || gc.Expose != "meta" || gc.Pin != "off" {
				t.Errorf("toolscout's config after connect: %+v, %v", gc, err)
			}
			_ = file
		})
	}
}

// TestConnectDryRun: a dry run prints both diffs with env and header
// values masked, and changes nothing.
func TestConnectDryRun(t *testing.T) {
	home, file, to, fixture := connectSetup(t, ownConfig)
	before := snapshot(t, home)
	out, err := connectCLI(t, "connect", "vscode", "--project", filepath.Join(home, "proj"), "--to", to, "--dry-run")
	if err != nil {
		t.Fatal(err)
	}
	if after := snapshot(t, home); !mapsEqual(before, after) {
		t.Errorf("a dry run changed files")
	}
	for _, want := range []string{"--- " + to, "+++ " + file, `+    "server-20": {`, `-    "server-01": { // local server 1`, `"Authorization": "***"`, "would import 20 servers", "comments inside \"servers\" are not carried over"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run says nothing like %q:\n%s", want, out)
		}
	}
	secrets := append(fixtureSecrets(t, fixture), "ownSECRETmemory")
	if len(secrets) != 20 {
		t.Fatalf("%d secrets, want the fixture's 19 and toolscout's config's one", len(secrets))
	}
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("the dry run printed the secret %q", s)
		}
	}
}

// TestConnectUndo: undo restores both files byte for byte with their
// modes, even one edited since (kept in a backup of its own), and only
// the client whose connect was last.
func TestConnectUndo(t *testing.T) {
	home, file, to, fixture := connectSetup(t, ownConfig)
	os.Chmod(file, 0o600)
	project := filepath.Join(home, "proj")
	if out, err := connectCLI(t, "connect", "vscode", "--project", project, "--to", to); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	backups, _ := filepath.Glob(file + backupSuffix + "*")
	if len(backups) != 1 {
		t.Fatalf("backups %v, want one", backups)
	}
	if fi, _ := os.Stat(backups[0]); fi.Mode().Perm() != 0o600 {
		t.Errorf("the backup of a 0600 file has mode %v", fi.Mode().Perm())
	}
	edited := []byte("{\"servers\": {}}\n")
	os.WriteFile(file, edited, 0o600)
	if out, err := connectCLI(t, "connect", "cursor", "--undo", "--to", to); err == nil || !strings.Contains(err.Error(), "the last connect was vscode's") {
		t.Errorf("undo of another client: %v\n%s", err, out)
	}
	out, err := connectCLI(t, "connect", "vscode", "--undo", "--to", to)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"restored " + file, "restored " + to, "changed since connect"} {
		if !strings.Contains(out, want) {
			t.Errorf("undo says nothing like %q:\n%s", want, out)
		}
	}
	for path, want := range map[string][]byte{file: fixture, to: []byte(ownConfig)} {
		got, _ := os.ReadFile(path)
		if !bytes.Equal(got, want) {
			t.Errorf("undo left %s as\n%s\nwant\n%s", path, got, want)
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v after undo, want 0600", path, fi.Mode().Perm())
		}
	}
	kept, _ := filepath.Glob(file + backupSuffix + "*")
	var found bool
	for _, k := range kept {
		data, _ := os.ReadFile(k)
		found = found || bytes.Equal(data, edited)
	}
	if !found {
		t.Errorf("the edit made after connect is in no backup: %v", kept)
	}
}

// TestConnectFailure: when the client's file cannot be written, both
// files are as they were and no backup or state is left.
func TestConnectFailure(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, file string, o *connectOptions)
	}{
		{"client's folder read-only", func(t *testing.T, file string, o *connectOptions) {
			if os.Geteuid() == 0 {
				t.Skip("root writes into a read-only folder")
			}
			os.Chmod(filepath.Dir(file), 0o555)
			t.Cleanup(func() { os.Chmod(filepath.Dir(file), 0o755) })
		}},
		{"client's write fails", func(t *testing.T, file string, o *connectOptions) {
			o.write = func(path string, data []byte) error {
				if path == file {
					return errors.New("disk full")
				}
				return writeKeepingMode(path, data)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			home, file, to, _ := connectSetup(t, ownConfig)
			o := connectOptions{client: mustClient(t, "vscode"), file: file, to: to, self: "/usr/local/bin/toolscout", now: time.Now(), write: writeKeepingMode}
			c.setup(t, file, &o)
			before := snapshot(t, home)
			err := connect(context.Background(), o, &bytes.Buffer{})
			if err == nil {
				t.Fatal("connect succeeded")
			}
			if after := snapshot(t, home); !mapsEqual(before, after) {
				var changed []string
				for p := range after {
					if before[p] != after[p] {
						changed = append(changed, p)
					}
				}
				t.Errorf("after %v files changed: %v", err, changed)
			}
		})
	}
}

func mustClient(t *testing.T, name string) mcpClient {
	c, ok := findClient(name)
	if !ok {
		t.Fatalf("no client %s", name)
	}
	return c
}

func TestConnectErrors(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	bad := filepath.Join(home, "bad.json")
	os.WriteFile(bad, []byte("{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n    \"b\": {}\n  }\n}\n"), 0o644)
	notMCP := filepath.Join(home, "settings.json")
	os.WriteFile(notMCP, []byte(`{"editor.fontSize": 14}`), 0o644)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown client", []string{"windsurf"}, `unknown client "windsurf": use claude-desktop, claude-code, cursor or vscode, or --config-file PATH`},
		{"no client", nil, "connect which client?"},
		{"missing file", []string{"cursor"}, "no Cursor's config: looked for " + filepath.Join(home, ".cursor", "mcp.json")},
		{"not JSON", []string{"--config-file", bad}, bad + ": not JSON: line 4"},
		{"not an MCP config", []string{"--config-file", notMCP}, `no "mcpServers"`},
		{"no project file", []string{"claude-desktop", "--project", home}, "claude-desktop has no project file"},
		{"two configs", []string{"cursor", "--config", "a.json", "--to", "b.json"}, "--config and --to name two files"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := connectCLI(t, append([]string{"connect"}, c.args...)...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("connect %v = %v, want an error saying %s\n%s", c.args, err, c.want, out)
			}
		})
	}
}

func TestConnectClientFiles(t *testing.T) {
	env := map[string]string{"APPDATA": `C:\Users\alex\AppData\Roaming`, "XDG_CONFIG_HOME": "/xdg"}
	for _, c := range []struct {
		client, goos, home string
		getenv             bool
		want               string
	}{
		{"claude-desktop", "darwin", "/Users/alex", false, "/Users/alex/Library/Application Support/Claude/claude_desktop_config.json"},
		{"claude-desktop", "windows", "/c/alex", true, filepath.Join(`C:\Users\alex\AppData\Roaming`, "Claude", "claude_desktop_config.json")},
		{"claude-desktop", "linux", "/home/alex", false, "/home/alex/.config/Claude/claude_desktop_config.json"},
		{"claude-desktop", "linux", "/home/alex", true, "/xdg/Claude/claude_desktop_config.json"},
		{"claude-code", "darwin", "/Users/alex", false, "/Users/alex/.claude.json"},
		{"cursor", "windows", "/c/alex", true, "/c/alex/.cursor/mcp.json"},
		{"vscode", "darwin", "/Users/alex", false, "/Users/alex/Library/Application Support/Code/User/mcp.json"},
		{"vscode", "linux", "/home/alex", false, "/home/alex/.config/Code/User/mcp.json"},
	} {
		t.Run(c.client+"/"+c.goos, func(t *testing.T) {
			h := hostEnv{home: c.home, goos: c.goos, getenv: func(k string) string {
				if c.getenv {
					return env[k]
				}
				return ""
			}}
			if got := mustClient(t, c.client).userFile(h); got != c.want {
				t.Errorf("userFile(%s on %s) = %s, want %s", c.client, c.goos, got, c.want)
			}
		})
	}
}

func TestConnectBlankJSONC(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"a": "//not", /* c */ "b": [1, 2,], } // end`, `{"a": "//not",         "b": [1, 2 ]  }       `},
		{"{\n /* two\nlines */ \"a\": \"x\\\"/*\",\n}", "{\n       \n         \"a\": \"x\\\"/*\" \n}"},
	} {
		if got := string(blankJSONC([]byte(c.in)).plain); got != c.want {
			t.Errorf("blankJSONC(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
