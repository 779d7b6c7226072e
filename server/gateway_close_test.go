package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/gateway"
)

// TestGatewayCloseCancelsCalls: closing the gateway (a server exiting
// after its drain) cancels a tool call still running upstream, with an
// error saying so, instead of waiting for it: the upstream session
// cannot close while a call is in flight, and the call here would run
// for a minute.
func TestGatewayCloseCancelsCalls(t *testing.T) {
	t.Parallel()
	env := startGateway(t, []gateway.UpstreamConfig{{Domain: "everything", Command: npmBin(t, "mcp-server-everything")}}, Exposure{Mode: ExposeMeta})
	waitFor(t, "tools", func() bool { return env.hasTool("everything__trigger-long-running-operation") })
	params := &mcp.CallToolParams{Name: ExecuteTool, Arguments: map[string]any{
		"tool_name": "everything__trigger-long-running-operation", "arguments": map[string]any{"duration": 60, "steps": 60}}}
	params.SetProgressToken("close-test")
	answer := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := env.cs.CallTool(context.Background(), params)
		if err != nil {
			res = errorResult("client error: %v", err)
		}
		answer <- res
	}()
	select {
	case <-env.progress: // the call runs upstream
	case <-time.After(30 * time.Second):
		t.Fatal("no progress from the long call within 30 s")
	}
	closed := make(chan struct{})
	go func() {
		env.gw.Close()
		close(closed)
	}()
	select {
	case res := <-answer:
		if !res.IsError || !strings.Contains(text(res), "shutting down") {
			t.Errorf("call in flight when the gateway closed = %s, want an error saying toolscout is shutting down", text(res))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call in flight still runs 30 s after the gateway closed")
	}
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("gateway.Gateway.Close still waits 30 s after its call was cancelled")
	}
}
