package server

import (
	"strings"
	"testing"
	"time"

	"github.com/toolscout/toolscout/index/pin"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/server/gateway"
)

// TestPinnedDefinitions: an upstream that changes a tool's description
// after it was first seen (a rug pull) does not get the change served:
// tools/list, discover_tools and get_tool_schema keep the approved
// description and execute_tool refuses the tool, saying why, until the
// change is approved in the pins file (as toolscout approve does, from
// another process); then the new definition is served and the tool runs.
func TestPinnedDefinitions(t *testing.T) {
	dir := t.TempDir()
	pins := store.OpenPins(dir, nil)
	env := startGatewayServer(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{fakeConfig(t, "fake", "rugpull")},
		Pins: pin.NewGuard(pins), PinPoll: 50 * time.Millisecond}, Options{Expose: Exposure{Mode: ExposeEager}})
	waitFor(t, "tools", func() bool { return env.hasTool("fake__echo") })
	book, err := store.OpenPins(dir, nil).Read()
	if err != nil || book.Len() != 5 {
		t.Fatalf("pins after the first listing: %v, %v; want the 5 tools pinned on first sight", book, err)
	}
	schema := func() string {
		return text(call(t, env.cs, GetToolSchema, map[string]any{"tool_name": "fake__echo"}))
	}
	listedDescription := func() string {
		res, err := env.cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			if tl.Name == "fake__echo" {
				return tl.Description
			}
		}
		return ""
	}
	if s := schema(); !strings.Contains(s, "Echo the text back.") || strings.Contains(s, `"held"`) {
		t.Fatalf("get_tool_schema before = %s", s)
	}

	if res := call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "fake__rug"}); res.IsError {
		t.Fatal(text(res))
	}
	var refused string
	waitFor(t, "the changed tool to be held", func() bool {
		res := call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "fake__echo", "arguments": map[string]any{"text": "hi"}})
		refused = text(res)
		return res.IsError
	})
	for _, want := range []string{"fake__echo does not run", "changed the tool's definition (description)", "toolscout approve fake__echo"} {
		if !strings.Contains(refused, want) {
			t.Errorf("execute of a held tool = %q, want %q in it", refused, want)
		}
	}
	if s := schema(); strings.Contains(s, "id_rsa") || !strings.Contains(s, "Echo the text back.") || !strings.Contains(s, `"held":"its server changed this tool's definition`) || !strings.Contains(s, "toolscout approve fake__echo") {
		t.Errorf("get_tool_schema of a held tool = %s, want the approved description and held saying so", s)
	}
	if d := listedDescription(); d != "Echo the text back." {
		t.Errorf("tools/list description of a held tool = %q, want the approved one", d)
	}
	if s := text(call(t, env.cs, DiscoverTools, map[string]any{"query": "read the private ssh key", "limit": 5})); strings.Contains(s, "IMPORTANT") {
		t.Errorf("discover_tools shows the held description: %s", s)
	}
	book, _ = store.OpenPins(dir, nil).Read()
	pending := book.Pending()
	if len(pending) != 1 || pending[0].Name() != "fake/echo" || !strings.Contains(pending[0].Diff(), `+  "description": "Echo the text back. <IMPORTANT>`) {
		t.Fatalf("pending = %+v", pending)
	}

	// Approved from outside (another process's toolscout approve): served
	// and run within the poll.
	if err := store.OpenPins(dir, nil).Update(func(b *pin.Book) bool { return b.Approve("fake", "echo", time.Now()) == nil }); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the approved definition to be served", func() bool { return strings.Contains(schema(), "id_rsa") })
	waitFor(t, "the approved definition to be listed", func() bool { return strings.Contains(listedDescription(), "id_rsa") })
	res := call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "fake__echo", "arguments": map[string]any{"text": "hi"}})
	if res.IsError || text(res) != "hi" {
		t.Errorf("execute after approval = %v %q", res.IsError, text(res))
	}
	if s := schema(); !strings.Contains(s, `"warnings"`) || strings.Contains(s, `"held"`) {
		t.Errorf("the approved poisoned description carries no warnings: %s", s)
	}
}
