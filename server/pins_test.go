package server

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
	t.Parallel()
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
	// The held tool is marked where the model finds it: ranked answers
	// and the domain's listing; the tool beside it is not.
	heldMark := `"held":"awaits approval of its new definition (toolscout approve fake__echo)`
	for _, args := range []map[string]any{{"query": "echo the text back", "limit": 5}, {"domain": "fake"}} {
		s := text(call(t, env.cs, DiscoverTools, args))
		if !strings.Contains(s, heldMark) || strings.Count(s, `"held"`) != 1 {
			t.Errorf("discover_tools(%v) = %s, want fake__echo (only) marked %s", args, s, heldMark)
		}
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
	if s := text(call(t, env.cs, DiscoverTools, map[string]any{"domain": "fake"})); strings.Contains(s, `"held"`) {
		t.Errorf("discover_tools after approval still marks a tool held: %s", s)
	}
}

// TestPinsDamagedHeld: issue 52. pins.bin is damaged (a byte flipped, or
// cut in half) while a serve holds a changed tool. With the previous
// generation there, the book is rebuilt from it and the change stays
// held; with no good copy, every tool of the server is held (listed as
// the server lists it, refused with why) until approved. Damage never
// lets a changed tool run.
func TestPinsDamagedHeld(t *testing.T) {
	t.Parallel()
	damages := []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"byte flipped", func(b []byte) []byte { b = bytes.Clone(b); b[len(b)/2] ^= 0x01; return b }},
		{"cut in half", func(b []byte) []byte { return b[:len(b)/2] }},
	}
	for _, d := range damages {
		for _, withPrev := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s, previous generation %v", d.name, withPrev), func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				env := startGatewayServer(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{fakeConfig(t, "fake", "rugpull")},
					Pins: pin.NewGuard(store.OpenPins(dir, nil)), PinPoll: 50 * time.Millisecond}, Options{Expose: Exposure{Mode: ExposeEager}})
				waitFor(t, "tools", func() bool { return env.hasTool("fake__echo") })
				execute := func(tool string) *mcp.CallToolResult {
					return call(t, env.cs, ExecuteTool, map[string]any{"tool_name": tool, "arguments": map[string]any{"text": "hi"}})
				}
				if res := execute("fake__rug"); res.IsError {
					t.Fatal(text(res))
				}
				waitFor(t, "the change to be held", func() bool {
					b, err := store.OpenPins(dir, nil).Read()
					return err == nil && len(b.Pending()) == 1 && execute("fake__echo").IsError
				})
				path := filepath.Join(dir, "pins.bin")
				if !withPrev {
					os.Remove(path + ".prev")
				}
				good, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				// Renamed into place: the serve's poll never reads it half written.
				if err := os.WriteFile(path+".new", d.damage(good), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(path+".new", path); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "the damage to be found", func() bool {
					_, err := store.OpenPins(dir, nil).Read()
					return err == nil
				})
				// A poll's repin may still be under way: ask until the
				// answers are those of the rebuilt book; the changed tool
				// never runs meanwhile.
				wantRefused := map[bool]string{true: "changed the tool's definition (description)", false: "record of the approved tool definitions was damaged"}[withPrev]
				waitFor(t, "the rebuilt book to be served", func() bool {
					res := execute("fake__echo")
					if !res.IsError {
						t.Fatalf("the changed tool ran after pins.bin was damaged: %q", text(res))
					}
					return strings.Contains(text(res), wantRefused)
				})
				if res := execute("fake__rug"); res.IsError == withPrev {
					t.Errorf("execute of an unchanged tool = %v %q; want it refused only with no good copy", res.IsError, text(res))
				}
				schema := text(call(t, env.cs, GetToolSchema, map[string]any{"tool_name": "fake__echo"}))
				if withPrev && (strings.Contains(schema, "id_rsa") || !strings.Contains(schema, `"held":"its server changed`)) {
					t.Errorf("get_tool_schema with the previous generation = %s, want the approved description, held", schema)
				}
				if !withPrev && !strings.Contains(schema, `"held":"toolscout's record of the approved tool definitions was damaged`) {
					t.Errorf("get_tool_schema with no good copy = %s, want held as unchecked", schema)
				}
				b, _ := store.OpenPins(dir, nil).Read()
				if want := map[bool]int{true: 1, false: 5}[withPrev]; len(b.Pending()) != want {
					t.Errorf("pending after the damage: %d, want %d", len(b.Pending()), want)
				}

				// Approved from outside (toolscout approve --all): served and run.
				if err := store.OpenPins(dir, nil).Update(func(b *pin.Book) bool {
					for _, h := range b.Pending() {
						b.Approve(h.Domain, h.Tool, time.Now())
					}
					b.EndReview([]string{"fake"})
					return true
				}); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "the approved definitions to run", func() bool {
					res := execute("fake__echo")
					return !res.IsError && text(res) == "hi"
				})
			})
		}
	}
}
