package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/internal/rawjson"
	"github.com/toolscout/toolscout/internal/redact"
	"github.com/toolscout/toolscout/server/relay"
	"github.com/toolscout/toolscout/server/stdio"
)

// decodeCases are lines decodeLine must read as jsonrpc.DecodeMessage does.
var decodeCases = []struct {
	name, line string
}{
	{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,{"b":"]}"}]}}}`},
	{"string id", `{"jsonrpc":"2.0","id":"a\"b","method":"ping"}`},
	{"float id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`},
	{"notification", `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`},
	{"null params", `{"jsonrpc":"2.0","method":"m","params":null}`},
	{"result first", `{"result":{"content":[{"type":"text","text":"a \\\" } ] {"}]},"jsonrpc":"2.0","id":7}`},
	{"spaces", " {\n \"jsonrpc\" : \"2.0\" ,\t\"id\" : 3 , \"result\" : { } } "},
	{"error", `{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no","data":{"x":1}}}`},
	{"null error", `{"jsonrpc":"2.0","id":4,"result":{},"error":null}`},
	{"escaped name", `{"jsonrpc":"2.0","id":5,"res\u0075lt":[1,2]}`},
	{"duplicate", `{"jsonrpc":"2.0","id":5,"id":6,"result":true}`},
	{"unknown members", `{"jsonrpc":"2.0","x":{"id":9},"id":5,"result":"r"}`},
	{"bad version", `{"jsonrpc":"1.0","id":1,"method":"m"}`},
	{"no version", `{"id":1,"method":"m"}`},
	{"response without id", `{"jsonrpc":"2.0","result":{}}`},
	{"object id", `{"jsonrpc":"2.0","id":{},"method":"m"}`},
	{"method not a string", `{"jsonrpc":"2.0","id":1,"method":3}`},
	{"not an object", `"jsonrpc"`},
	{"invalid JSON", `{"jsonrpc":"2.0","id":1,"method":"m"`},
}

// sdkDecode is jsonrpc.DecodeMessage, reading a batch as the SDK's stdio
// transport does.
func sdkDecode(line []byte) ([]jsonrpc.Message, error) {
	line = bytes.TrimSpace(line)
	if len(line) > 0 && line[0] == '[' {
		var raw []json.RawMessage
		if err := json.Unmarshal(line, &raw); err != nil {
			return nil, err
		}
		var msgs []jsonrpc.Message
		for _, r := range raw {
			m, err := jsonrpc.DecodeMessage(r)
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, m)
		}
		if len(msgs) == 0 {
			return nil, io.EOF
		}
		return msgs, nil
	}
	m, err := jsonrpc.DecodeMessage(line)
	return []jsonrpc.Message{m}, err
}

func checkDecode(t *testing.T, line []byte) {
	t.Helper()
	want, werr := sdkDecode(line)
	got, gerr := decodeLine(bytes.TrimSpace(line))
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("decodeLine(%q) = %v, %v; DecodeMessage: %v, %v", line, got, gerr, want, werr)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeLine(%q) = %#v, want %#v", line, got, want)
	}
}

func TestDecodeLine(t *testing.T) {
	for _, c := range decodeCases {
		t.Run(c.name, func(t *testing.T) { checkDecode(t, []byte(c.line)) })
	}
	t.Run("batch", func(t *testing.T) {
		checkDecode(t, []byte(`[`+decodeCases[0].line+`, `+decodeCases[5].line+`]`))
	})
	t.Run("no copy", func(t *testing.T) {
		line := []byte(decodeCases[5].line)
		msgs, err := decodeLine(line)
		if err != nil {
			t.Fatal(err)
		}
		res := msgs[0].(*jsonrpc.Response).Result
		if cap(line)-cap(res) != bytes.Index(line, []byte(`{"content"`)) {
			t.Errorf("the result is not a sub-slice of the line")
		}
	})
}

// FuzzDecodeLine: whatever the line, decodeLine agrees with the SDK's
// decoder (on JSON it does not refuse for its depth).
func FuzzDecodeLine(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c.line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || !json.Valid(line) || rawjson.Deeper(line, stdio.MaxJSONDepth) {
			return
		}
		checkDecode(t, line)
	})
}

// TestLineConnSlots: the result of a call made with a relay.Slot lands in
// the slot, the SDK reads a stub; a cancelled call's slot is forgotten.
func TestLineConnSlots(t *testing.T) {
	inR, inW := io.Pipe()
	c := newLineConn(&frameGuard{r: bufioReader(inR), limit: 1 << 30}, nopWriteCloser{io.Discard}, nil, nil)
	defer c.Close()
	ctx := context.Background()
	for _, id := range []int64{1, 2} {
		slot := &relay.Slot{}
		rid, _ := jsonrpc.MakeID(float64(id))
		call := &jsonrpc.Request{ID: rid, Method: "tools/call", Params: json.RawMessage(`{}`)}
		if err := c.Write(relay.WithSlot(ctx, slot), call); err != nil {
			t.Fatal(err)
		}
		if id == 2 {
			cancel, _ := json.Marshal(map[string]any{"requestId": 2, "reason": "timeout"})
			c.Write(ctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: cancel})
			if len(c.slots) != 0 {
				t.Fatalf("%d slots after the call was cancelled, want 0", len(c.slots))
			}
			continue
		}
		go io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"result":{"content":[`+big+`],"isError":true,"_meta":{}}}`+"\n")
		msg, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r := msg.(*jsonrpc.Response); string(r.Result) != `{"content":[],"isError":true}` {
			t.Errorf("the SDK reads %.80s, want the stub", r.Result)
		}
		if got := relayedJSON(t, slot); got != `{"content":[`+big+`],"isError":true}` {
			t.Errorf("the slot relays %.80s, want the result less its _meta", got)
		}
	}
}

// big is a text block over relay.MinSize, as JSON.
var big = `{"type":"text","text":"` + strings.Repeat("x", relay.MinSize) + `"}`

// relayedJSON is what relay.Middleware writes for a result marked with
// slot.
func relayedJSON(t *testing.T, slot *relay.Slot) string {
	t.Helper()
	next := func(context.Context, string, mcp.Request) (mcp.Result, error) {
		return slot.Mark(&mcp.CallToolResult{Content: []mcp.Content{}}), nil
	}
	res, err := relay.Middleware(next)(context.Background(), "tools/call", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func bufioReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 64<<10) }

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// TestLineConnKeepsNoSecretRaw: a large result holding a configured
// secret (as written, or escaped as a JSON string) is not kept raw in
// its slot: the SDK decodes it, and Execute redacts it.
func TestLineConnKeepsNoSecretRaw(t *testing.T) {
	const secret = `Bearer s3cret/<token>`
	for _, tc := range []struct {
		name, text string
		raw        bool
	}{
		{"no secret", "nothing", true},
		{"as written", "Bearer s3cret/<token>", false},
		{"escaped", `Bearer s3cret\/\u003ctoken>`, true}, // an escape Go does not write: not found
		{"escaped as Go does", `Bearer s3cret/\u003ctoken\u003e`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inR, inW := io.Pipe()
			c := newLineConn(&frameGuard{r: bufioReader(inR), limit: 1 << 30}, nopWriteCloser{io.Discard}, redact.New(secret), nil)
			defer c.Close()
			ctx := context.Background()
			slot := &relay.Slot{}
			rid, _ := jsonrpc.MakeID(float64(1))
			if err := c.Write(relay.WithSlot(ctx, slot), &jsonrpc.Request{ID: rid, Method: "tools/call", Params: json.RawMessage(`{}`)}); err != nil {
				t.Fatal(err)
			}
			go io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"result":{"content":[`+big+`,{"type":"text","text":"`+tc.text+`"}]}}`+"\n")
			msg, err := c.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if kept := len(msg.(*jsonrpc.Response).Result) < relay.MinSize; kept != tc.raw {
				t.Errorf("kept raw: %v, want %v", kept, tc.raw)
			}
		})
	}
}
