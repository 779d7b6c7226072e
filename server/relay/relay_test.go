package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// big is a text block over MinSize, as JSON.
var big = `{"type":"text","text":"` + strings.Repeat("x", MinSize) + `"}`

func TestRelayBody(t *testing.T) {
	for _, c := range []struct {
		name, result string
		want         string // "" when the result takes the SDK's path
	}{
		{"no meta", `{"content":[` + big + `],"isError":true}`, `{"content":[` + big + `],"isError":true}`},
		{"meta first", `{ "_meta" : {"a":"}"} , "content":[` + big + `]}`, `{"content":[` + big + `]}`},
		{"meta last", `{"content":[` + big + `],"structuredContent":{"_meta":1} ,"_meta":{}}`, `{"content":[` + big + `],"structuredContent":{"_meta":1}}`},
		{"meta between", `{"content":[` + big + `],"_meta":{},"isError":false}`, `{"content":[` + big + `],"isError":false}`},
		{"all blocks", `{"content":[` + big + `,{"type":"image"},{"type":"audio"},{"type":"resource_link"},{"type":"resource"}]}`,
			`{"content":[` + big + `,{"type":"image"},{"type":"audio"},{"type":"resource_link"},{"type":"resource"}]}`},
		{"small", `{"content":[{"type":"text","text":"x"}]}`, ""},
		{"unknown block", `{"content":[` + big + `,{"type":"tool_use"}]}`, ""},
		{"block not an object", `{"content":[` + big + `,"text"]}`, ""},
		{"no content", `{"structuredContent":` + big + `}`, ""},
		{"content not an array", `{"content":` + big + `}`, ""},
		{"duplicate", `{"content":[` + big + `],"content":[]}`, ""},
		{"result type", `{"content":[` + big + `],"resultType":"complete"}`, ""},
		{"not an object", `[` + big + `]`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := newRelayBody([]byte(c.result))
			if c.want == "" {
				if body != nil {
					t.Fatalf("newRelayBody(%.60q) kept it raw, want the SDK's path", c.result)
				}
				return
			}
			if body == nil {
				t.Fatalf("newRelayBody(%.60q) = nil, want it kept raw", c.result)
			}
			slot := &Slot{}
			slot.body.Store(body)
			if n, ok := MarkedSize(slot.Mark(&mcp.CallToolResult{})); !ok || n != len(c.want) {
				t.Errorf("MarkedSize of %.60q = %d, %v, want %d (the relayed bytes)", c.result, n, ok, len(c.want))
			}
			var stub mcp.CallToolResult
			if err := json.Unmarshal(body.stub(), &stub); err != nil {
				t.Fatal(err)
			}
			res := &rawResult{CallToolResult: &stub, body: body}
			got, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("relayed %.60q as %.80q, want %.80q", c.result, got, c.want)
			}
			// With members the SDK adds (new protocol): they come first.
			res.SetMeta(map[string]any{"k": "v"})
			got, err = json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"_meta":{"k":"v"},` + c.want[1:]; string(got) != want {
				t.Errorf("with the SDK's _meta, relayed %.60q as %.80q, want %.80q", c.result, got, want)
			}
		})
	}
}

// TestRelayBodyUnmarshalled: a relayed result that misses Middleware
// fails loudly instead of answering an empty result.
func TestRelayBodyUnmarshalled(t *testing.T) {
	slot := &Slot{}
	if _, ok := slot.Keep([]byte(`{"content":[` + big + `]}`)); !ok {
		t.Fatal("Keep kept nothing")
	}
	if _, err := json.Marshal(slot.Mark(&mcp.CallToolResult{Content: []mcp.Content{}})); err == nil {
		t.Error("a relayed result marshalled without Middleware, want an error")
	}
}

// TestSplicerReleases: a closed splicer holds nothing and registers
// nothing; what Middleware registers stays until the call's context ends.
func TestSplicerReleases(t *testing.T) {
	t.Run("closed", func(t *testing.T) {
		sp := NewSplicer()
		if sp.register(context.Background(), newRelayBody([]byte(`{"content":[`+big+`]}`))) == "" {
			t.Fatal("register refused")
		}
		sp.Close()
		if sp.Pending() != 0 {
			t.Errorf("%d results registered after close, want 0", sp.Pending())
		}
		if m := sp.register(context.Background(), newRelayBody([]byte(`{"content":[`+big+`]}`))); m != "" {
			t.Error("a closed splicer registered a result")
		}
	})
	t.Run("middleware", func(t *testing.T) {
		// What the SDK sees: the placeholder, the bytes registered until
		// the call's context ends.
		sp := NewSplicer()
		ctx, cancel := context.WithCancel(WithSplicer(context.Background(), sp))
		slot := &Slot{}
		slot.Keep([]byte(`{"content":[` + big + `]}`))
		next := func(context.Context, string, mcp.Request) (mcp.Result, error) {
			return slot.Mark(&mcp.CallToolResult{Content: []mcp.Content{}}), nil
		}
		res, err := Middleware(next)(ctx, "tools/call", &mcp.CallToolRequest{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > 100 || !bytes.Contains(got, []byte(relayMarkerPrefix)) || sp.Pending() != 1 {
			t.Fatalf("the SDK encodes %.100q with %d results registered, want a placeholder and 1", got, sp.Pending())
		}
		cancel()
		waitFor(t, "the release", func() bool { return sp.Pending() == 0 })
	})
}

// waitFor waits up to ten seconds for cond.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestSlotMoveTo: what a slot kept moves to another slot, which marks
// the stub with it; the first then marks nothing.
func TestSlotMoveTo(t *testing.T) {
	result := []byte(`{"content":[{"type":"text","text":"` + strings.Repeat("x", MinSize) + `"}]}`)
	first, second := &Slot{}, &Slot{}
	if _, ok := first.Keep(result); !ok {
		t.Fatal("a large result was not kept")
	}
	first.MoveTo(second)
	stub := &mcp.CallToolResult{}
	if n, ok := MarkedSize(second.Mark(stub)); !ok || n == 0 {
		t.Errorf("the second slot's mark: %d, %v; want the moved result", n, ok)
	}
	if _, ok := MarkedSize(first.Mark(stub)); ok {
		t.Error("the first slot still marks the result it moved")
	}
	first.MoveTo(nil) // nothing to move, nowhere: no panic
	(*Slot)(nil).MoveTo(second)
}
