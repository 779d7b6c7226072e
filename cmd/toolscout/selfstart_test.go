package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolscout/toolscout/server/gateway"
)

// TestSelfStartThroughWrappers: a config that names toolscout itself
// through a wrapper (sh -c, /usr/bin/env and a script), which the command
// string does not give away, starts one extra toolscout, which refuses to
// start upstream servers under toolscout, instead of a chain of them.
func TestSelfStartThroughWrappers(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds toolscout and starts it under itself")
	}
	for _, sh := range []string{"sh", "/usr/bin/env"} {
		if _, err := exec.LookPath(sh); err != nil {
			t.Skip(sh, "is missing:", err)
		}
	}
	bin := buildBinary(t)
	for _, tc := range []struct {
		name    string
		command func(log, config, data string) (string, []string)
		parent  []string // the parent's command and the line it must print
		want    string
	}{
		{"sh -c", func(log, config, data string) (string, []string) {
			return "sh", []string{"-c", "echo started >> '" + log + "'; exec '" + bin + "' serve --embedder builtin --config '" + config + "' --data-dir '" + data + "'"}
		}, []string{"index"}, "upstream self: unavailable"},
		{"/usr/bin/env and a script", func(log, config, data string) (string, []string) {
			script := filepath.Join(filepath.Dir(log), "toolscout-wrapper")
			os.WriteFile(script, []byte("#!/bin/sh\necho started >> '"+log+"'\nexec '"+bin+"' \"$@\"\n"), 0o755)
			return "/usr/bin/env", []string{script, "serve", "--embedder", "builtin", "--config", config, "--data-dir", data}
		}, []string{"doctor"}, "FAIL  upstream   self: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			log, config, data := filepath.Join(tmp, "starts"), filepath.Join(tmp, "servers.json"), filepath.Join(tmp, "data")
			command, args := tc.command(log, config, data)
			writeConfig(t, config, command, args)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, append(tc.parent, "--embedder", "builtin", "--config", config, "--data-dir", data)...)
			cmd.Env = slicesWithout(os.Environ(), gateway.DepthEnv)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			// Every process of the run holds alive's write end: the
			// toolscout gets it as fd 3, and each process passes it on to
			// what it starts (nothing closes a descriptor it does not
			// know). The read end's EOF says that all of them have exited,
			// so that no chain can grow after the count below.
			alive, held, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer alive.Close()
			cmd.ExtraFiles = []*os.File{held}
			cmd.Run()
			held.Close()
			gone := make(chan struct{})
			go func() {
				io.Copy(io.Discard, alive)
				close(gone)
			}()
			select {
			case <-gone:
			case <-ctx.Done():
				t.Fatalf("a process that toolscout %s started through %s still runs\n%s", tc.parent[0], tc.name, out.String())
			}
			starts, _ := os.ReadFile(log)
			if n := bytes.Count(starts, []byte("\n")); n != 1 {
				t.Errorf("toolscout %s with a config naming itself through %s started %d toolscouts, want 1\n%s", tc.parent[0], tc.name, n, out.String())
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("toolscout %s does not say %q:\n%s", tc.parent[0], tc.want, out.String())
			}
			// Why: the upstream is a toolscout, in its own words, not
			// the protocol's bare EOF (issue 34, defect 7).
			if !strings.Contains(out.String(), "the server is a toolscout") || !strings.Contains(out.String(), gateway.DepthEnv+"=1") {
				t.Errorf("toolscout %s does not say the upstream is a toolscout, with its reason:\n%s", tc.parent[0], out.String())
			}
		})
	}
}

// TestNestedToolscout: under a toolscout (gateway.DepthEnv set), a
// toolscout with stdio upstream servers refuses to start, with a message
// naming the variable and the servers; one that serves a catalog, or only
// remote servers, still runs.
func TestNestedToolscout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		depth   string
		command string // "" for a remote server
		refused bool
	}{
		{"top level", "", "true", false},
		{"under toolscout, stdio", "1", "true", true},
		{"deeper, stdio", "2", "true", true},
		{"under toolscout, remote only", "1", "", false},
		{"not a number", "x", "true", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := gateway.UpstreamConfig{Domain: "s", Command: tc.command}
			if tc.command == "" {
				u.URL = "http://127.0.0.1:1/mcp"
			}
			environ := []string{"PATH=/bin"}
			if tc.depth != "" {
				environ = append(environ, gateway.DepthEnv+"="+tc.depth)
			}
			err := checkDepth(&gatewayConfig{Upstreams: []gateway.UpstreamConfig{u}}, environ)
			var ne *nestedError
			if got := errors.As(err, &ne); got != tc.refused {
				t.Errorf("checkDepth(%s=%q, command %q) = %v, want refused %v", gateway.DepthEnv, tc.depth, tc.command, err, tc.refused)
			}
		})
	}
	t.Setenv(gateway.DepthEnv, "1")
	config := filepath.Join(t.TempDir(), "servers.json")
	writeConfig(t, config, "true", nil)
	_, stderr, code := runCLI(t, "index", "--data-dir", t.TempDir(), "--embedder", "builtin", "--config", config)
	if code == 0 || !strings.Contains(stderr, gateway.DepthEnv+"=1") || !strings.Contains(stderr, "(here: self)") {
		t.Errorf("index --config with a stdio server under toolscout: exit %d, stderr %q; want an error naming %s and the server", code, stderr, gateway.DepthEnv)
	}
	if _, stderr, code := runCLI(t, "search", "--data-dir", t.TempDir(), "--embedder", "builtin", "--mode", "keyword", "restart the deployment"); code != 0 {
		t.Errorf("search of the built-in catalog under toolscout: exit %d\n%s", code, stderr)
	}
}

// writeConfig writes an mcpServers config of one stdio server, "self".
func writeConfig(t *testing.T, path, command string, args []string) {
	t.Helper()
	doc, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"self": map[string]any{"command": command, "args": args}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
}

// slicesWithout returns environ without the variable name.
func slicesWithout(environ []string, name string) []string {
	var out []string
	for _, kv := range environ {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
