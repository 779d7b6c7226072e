package main

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/toolscout/toolscout/server/gateway"
)

// TestUpstreamAdvice: a stdio server that exits at start is told how to
// pass it the variables it no longer inherits.
func TestUpstreamAdvice(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		stdio bool
		want  string
	}{
		{"not found", fmt.Errorf("start: %w", exec.ErrNotFound), true, "was not found: install it"},
		{"exits before initialize", fmt.Errorf("calling %q: %w", "initialize", io.EOF), true, `"env": {"API_KEY": "${API_KEY}"}`},
		{"exits while written to", fmt.Errorf("calling %q: %w", "initialize", &os.PathError{Op: "write", Path: "|1", Err: syscall.EPIPE}), true, `"env": {"API_KEY": "${API_KEY}"}`},
		{"remote closes", fmt.Errorf("calling %q: %w", "initialize", io.EOF), false, "check the command or URL of x"},
		{"other", errors.New("boom"), true, "check the command or URL of x"},
		{"HTTP server too slow", fmt.Errorf("calling %q: %w", "initialize", &url.Error{Op: "Post", URL: "http://x/mcp", Err: timeoutError{}}), false, `raise its "connect_timeout"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := upstreamAdvice(gateway.UpstreamStatus{Domain: "x", State: "down", Err: tc.err}, tc.stdio)
			if !strings.Contains(got, tc.want) {
				t.Errorf("upstreamAdvice(%v, stdio %v) = %q, want it to contain %q", tc.err, tc.stdio, got, tc.want)
			}
		})
	}
}

// timeoutError is a net.Error that timed out, as net/http returns when a
// server accepts a request but does not answer in time.
type timeoutError struct{}

func (timeoutError) Error() string   { return "Client.Timeout exceeded while awaiting headers" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// TestConfigSummary: doctor counts every server of the config files,
// the disabled ones and those skipped as toolscout itself among them.
func TestConfigSummary(t *testing.T) {
	five := `{"mcpServers": {"a": {"command": "x"}, "b": {"command": "x"}, "c": {"command": "x"}, "d": {"url": "https://example.test/mcp"}, "off": {"command": "x", "disabled": true}}}`
	withSelf := `{"mcpServers": {"a": {"command": "x"}, "toolscout": {"command": "/opt/bin/toolscout", "args": ["serve"]}}}`
	for _, tc := range []struct {
		name, config, want string
	}{
		{"one of five disabled", five, "5 servers (1 disabled)"},
		{"toolscout itself skipped", withSelf, "2 servers; skipped toolscout: it is toolscout itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gc, err := parseConfig("c.json", []byte(tc.config), env(nil))
			if err != nil {
				t.Fatal(err)
			}
			if got := configSummary(gc); got != tc.want {
				t.Errorf("configSummary = %q, want %q", got, tc.want)
			}
		})
	}
}
