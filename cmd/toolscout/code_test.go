package main

import (
	"flag"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/toolscout/toolscout/server/codemode"
)

// TestCodeConfig: toolscout.code sets code mode's limits, each key in
// its unit; a key out of its bounds, unknown or of the wrong type is an
// error naming it.
func TestCodeConfig(t *testing.T) {
	env := func(string) (string, bool) { return "", false }
	tests := []struct {
		name, code string
		want       *codeConfig
		wantErr    string
	}{
		{name: "all", code: `{"timeout": 30, "cpu": 2.5, "memory_mb": 128, "output_kb": 64, "tool_calls": 10, "result_mb": 4, "concurrent": 3}`,
			want: &codeConfig{Limits: codemode.Limits{Wall: 30 * time.Second, CPU: 2500 * time.Millisecond, Memory: 128 << 20, Output: 64 << 10, ToolCalls: 10, ResultBytes: 4 << 20}, Concurrent: 3}},
		{name: "some", code: `{"memory_mb": 32}`, want: &codeConfig{Limits: codemode.Limits{Memory: 32 << 20}}},
		{name: "too little memory", code: `{"memory_mb": 2}`, wantErr: "toolscout.code.memory_mb: 2: must be from 8 to 4096 MiB"},
		{name: "a day", code: `{"timeout": 86400}`, wantErr: "toolscout.code.timeout: 86400: must be from 0.1 to 1800 seconds"},
		{name: "misspelt key", code: `{"memory_mib": 32}`, wantErr: `toolscout.code.memory_mib: unknown key (did you mean "memory_mb"?)`},
		{name: "unknown key", code: `{"network": true}`, wantErr: "toolscout.code.network: unknown key: use timeout, cpu"},
		{name: "not a number", code: `{"tool_calls": "ten"}`, wantErr: "toolscout.code: each value must be a number"},
		{name: "not an object", code: `30`, wantErr: "toolscout.code: must be an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gc, err := parseConfig("c.json", []byte(`{"mcpServers": {}, "toolscout": {"code": `+tt.code+`}}`), env)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseConfig(code %s) = %v, want an error with %q", tt.code, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if gc.Code == nil || *gc.Code != *tt.want {
				t.Errorf("parseConfig(code %s) = %+v, want %+v", tt.code, gc.Code, tt.want)
			}
		})
	}
}

// TestCodeFlags: a flag given wins over the config's key; one not
// given leaves it; a flag out of its bounds is a usage error.
func TestCodeFlags(t *testing.T) {
	parse := func(args ...string) (codeConfig, error) {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var cf codeFlags
		cf.register(fs)
		if err := fs.Parse(args); err != nil {
			return codeConfig{}, err
		}
		gc := &gatewayConfig{Code: &codeConfig{Limits: codemode.Limits{Memory: 32 << 20, ToolCalls: 5}}}
		return cf.resolve(fs, gc)
	}
	got, err := parse("--code-tool-calls", "7", "--code-timeout", "5s")
	if err != nil {
		t.Fatal(err)
	}
	if got.Limits.ToolCalls != 7 || got.Limits.Wall != 5*time.Second || got.Limits.Memory != 32<<20 || got.Limits.CPU != 0 {
		t.Errorf("flags over the config = %+v, want tool calls 7, wall 5s, memory 32 MiB from the config, CPU unset", got)
	}
	if _, err := parse("--code-memory", "1"); err == nil || !strings.Contains(err.Error(), "--code-memory 1: must be from 8 to 4096 MiB") {
		t.Errorf("--code-memory 1 = %v, want a usage error naming it", err)
	}
	if _, err := parse("--code-cpu", "20m"); err == nil || !strings.Contains(err.Error(), "--code-cpu 1200: must be from 0.1 to 600 seconds") {
		t.Errorf("--code-cpu 20m = %v, want a usage error naming it", err)
	}
}

// TestCodeFlagsOutsideCodeMode: --code-* flags given to a serve that is
// not in code mode are said to be ignored, not silently dropped.
func TestCodeFlagsOutsideCodeMode(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	cmd := exec.Command(bin, "serve", "--code-memory", "32", "--code-tool-calls", "5", "--embedder", "builtin", "--data-dir", t.TempDir())
	cmd.Env = append(os.Environ(), "OLLAMA_HOST=127.0.0.1:9")
	cmd.Stdin = strings.NewReader("") // stdio closes at once: serve ends
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "code mode's flags are ignored") || !strings.Contains(string(out), "--code-memory --code-tool-calls") {
		t.Errorf("serve --code-memory without code mode logged:\n%s", out)
	}
}
