package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/relay"
)

// The transport end to end, with a real server behind it, is tested in
// package server (stdio_test.go, splice_test.go); here are its parts.

func deep(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// big is a text block over relay.MinSize, as JSON.
var big = `{"type":"text","text":"` + strings.Repeat("x", relay.MinSize) + `"}`

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Answers in a layout other than the go-sdk's usual one still get the
// client's id back and a real code.
func TestStdioRewriteOtherLayout(t *testing.T) {
	calls := newCallTable()
	wire, _ := calls.begin(json.RawMessage(`1.5`), "tools/list")
	if string(wire) == `1.5` {
		t.Fatalf("begin(%s) kept the id; want one of toolscout's", wire)
	}
	line := `{"error":{"message":"x","code":0},"id":` + string(wire) + `,"jsonrpc":"2.0"}` + "\n"
	got := string(calls.rewrite([]byte(line)))
	want := `{"error":{"code":-32600,"message":"x"},"id":1.5,"jsonrpc":"2.0"}` + "\n" // sent before initialize
	if got != want {
		t.Errorf("rewrite(%q) = %q, want %q", line, got, want)
	}
	if again := string(calls.rewrite([]byte(line))); again != line {
		t.Errorf("rewrite of an answered call = %q, want it unchanged", again)
	}
}

// Whatever the line, the guard hands the SDK only messages its decoder
// takes (a decode error there ends the session), or answers with one
// JSON-RPC 2.0 error response.
func FuzzStdioLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping","params":{"a":[1]}}`,
		`{"jsonrpc":"2.0","id":"\u0041","method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1.5}}`,
		`{"jsonrpc":"2.0","id":5,"error":{"code":-1,"message":"x","data":[{}]}}`,
		`{"jsonrpc":"2.0","id":5,"result":null}`,
		`{"jsonrpc":"2.0","id":5,"id":6,"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"x":` + deep(1000) + `}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		b := bytes.TrimSpace([]byte(line))
		if len(b) == 0 || bytes.IndexByte(b, '\n') >= 0 {
			return // not one line
		}
		m, lerr := parseLine(b, false)
		if lerr != nil {
			var r struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *struct {
					Code int64 `json:"code"`
				} `json:"error"`
			}
			reply := lerr.reply()
			if json.Unmarshal(reply, &r) != nil || r.JSONRPC != "2.0" || r.Error == nil || r.Error.Code == 0 || !json.Valid(r.ID) {
				t.Fatalf("parseLine(%q) answers %q", b, reply)
			}
			return
		}
		wire := m.id
		if wire != nil && !m.isResponse() {
			wire, _ = newCallTable().begin(m.id, m.method)
		}
		fwd := m.encode(wire)
		if _, err := jsonrpc.DecodeMessage(bytes.TrimSpace(fwd)); err != nil {
			t.Fatalf("parseLine(%q) hands the SDK %q, which it cannot decode: %v", b, fwd, err)
		}
	})
}

// spliceBody registers a large result in sp until ctx ends, as
// relay.Middleware does, and returns its marker and the answer line the
// SDK would write for call id (a JSON token) with it as its result.
func spliceBody(t *testing.T, ctx context.Context, sp *relay.Splicer, id string) (marker string, line []byte) {
	t.Helper()
	slot := &relay.Slot{}
	if _, ok := slot.Keep([]byte(`{"content":[` + big + `], "isError" : true}`)); !ok {
		t.Fatal("Keep kept nothing")
	}
	next := func(context.Context, string, mcp.Request) (mcp.Result, error) {
		return slot.Mark(&mcp.CallToolResult{Content: []mcp.Content{}}), nil
	}
	res, err := relay.Middleware(next)(relay.WithSplicer(ctx, sp), "tools/call", nil)
	if err != nil {
		t.Fatal(err)
	}
	result, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var placeholder map[string]int
	if err := json.Unmarshal(result, &placeholder); err != nil || len(placeholder) != 1 {
		t.Fatalf("the SDK encodes %.100q, want a placeholder (%v)", result, err)
	}
	for marker = range placeholder {
	}
	return marker, []byte(`{"jsonrpc":"2.0","id":` + id + `,"result":` + string(result) + "}\n")
}

// placeholderLine is the line the SDK writes for call id (a JSON token)
// when its result is the placeholder of marker.
func placeholderLine(id, marker string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{"` + marker + `":0}}` + "\n")
}

// newSpliceWriter is a stdioWriter over out with a call of id in flight.
func newSpliceWriter(t *testing.T, sp *relay.Splicer, out io.Writer, ids ...string) *stdioWriter {
	t.Helper()
	w := &stdioWriter{w: out, calls: newCallTable(), splice: sp, log: slog.New(slog.DiscardHandler)}
	for _, id := range ids {
		if _, ok := w.calls.begin(json.RawMessage(id), "tools/call"); !ok {
			t.Fatalf("call %s already in flight", id)
		}
	}
	return w
}

// wantSpliced is the line a client reads for call id answered with body.
func wantSpliced(id string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[` + big + `],"isError":true}}` + "\n"
}

// TestSpliceReleased: a registered result is released when its call's
// context ends (answered, cancelled, the connection ended), when writing
// it fails, and when the splicer closes; a placeholder whose result was
// released is answered with an error, and its id can be used again.
func TestSpliceReleased(t *testing.T) {
	t.Run("written", func(t *testing.T) {
		sp := relay.NewSplicer()
		_, line := spliceBody(t, context.Background(), sp, "7")
		var out bytes.Buffer
		if _, err := newSpliceWriter(t, sp, &out, "7").Write(line); err != nil {
			t.Fatal(err)
		}
		if out.String() != wantSpliced("7") {
			t.Errorf("wrote %.100q, want %.100q", out.String(), wantSpliced("7"))
		}
		if sp.Pending() != 0 {
			t.Errorf("%d results registered after the write, want 0", sp.Pending())
		}
	})
	t.Run("cancelled before written", func(t *testing.T) {
		sp := relay.NewSplicer()
		ctx, cancel := context.WithCancel(context.Background())
		_, line := spliceBody(t, ctx, sp, `"a"`)
		cancel()
		waitFor(t, "the release", func() bool { return sp.Pending() == 0 })
		var out bytes.Buffer
		w := newSpliceWriter(t, sp, &out, `"a"`)
		if _, err := w.Write(line); err != nil {
			t.Fatal(err)
		}
		var answer struct {
			ID    string          `json:"id"`
			Error *rpcError       `json:"error"`
			R     json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(out.Bytes(), &answer); err != nil || answer.ID != "a" || answer.Error == nil || answer.Error.Code != codeInternalError || answer.R != nil {
			t.Fatalf("answered %q (%v), want an internal error for id \"a\"", out.String(), err)
		}
		if _, ok := w.calls.begin(json.RawMessage(`"a"`), "tools/call"); !ok {
			t.Error("the id is still in flight after its error answer")
		}
	})
	t.Run("write fails", func(t *testing.T) {
		sp := relay.NewSplicer()
		_, line := spliceBody(t, context.Background(), sp, "1")
		fail := errors.New("stdout closed")
		if _, err := newSpliceWriter(t, sp, failWriter{fail}, "1").Write(line); !errors.Is(err, fail) {
			t.Errorf("Write = %v, want %v", err, fail)
		}
		if sp.Pending() != 0 {
			t.Errorf("%d results registered after a failed write, want 0", sp.Pending())
		}
	})
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

// TestSpliceForgedMarker: only a response whose result ends with the
// placeholder member is spliced, and only with the bytes registered under
// its own marker: another call's result that holds the marker (in text,
// in structured content, as its last member, in its id), or a placeholder
// with a marker of another connection or none at all, never gets them.
func TestSpliceForgedMarker(t *testing.T) {
	sp, other := relay.NewSplicer(), relay.NewSplicer()
	marker, line := spliceBody(t, context.Background(), sp, "1")
	otherMarker, _ := spliceBody(t, context.Background(), other, "1")
	forged := marker[:len(marker)-32] + strings.Repeat("0", 32)
	q := strconv.Quote
	var out bytes.Buffer
	w := newSpliceWriter(t, sp, &out)
	for _, c := range []struct{ name, line string }{
		{"text", `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":` + q(`"`+marker+`":0}}`) + `}]}}` + "\n"},
		{"structured content", `{"jsonrpc":"2.0","id":2,"result":{"content":[],"structuredContent":{"` + marker + `":0}}}` + "\n"},
		{"structured content's last member", `{"jsonrpc":"2.0","id":2,"result":{"content":[],"structuredContent":{"a":1,"` + marker + `":0}}}` + "\n"},
		{"string", `{"jsonrpc":"2.0","id":2,"result":{"content":[],"structuredContent":"\",\"` + marker + `\":0}"}}` + "\n"},
		{"id", `{"jsonrpc":"2.0","id":` + q(marker) + `,"result":{"content":[]}}` + "\n"},
		{"error", `{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m","data":{"` + marker + `":0}}}` + "\n"},
		{"notification", `{"jsonrpc":"2.0","method":"x","params":{"` + marker + `":0}}` + "\n"},
		{"no newline", strings.TrimSuffix(string(line), "\n")},
	} {
		out.Reset()
		if _, err := w.Write([]byte(c.line)); err != nil {
			t.Fatal(err)
		}
		if out.String() != c.line {
			t.Errorf("%s: wrote %.120q, want the line as it is: %.120q", c.name, out.String(), c.line)
		}
	}
	for _, c := range []struct{ name, marker string }{{"forged", forged}, {"another connection's", otherMarker}} {
		out.Reset()
		if _, err := w.Write(placeholderLine("3", c.marker)); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out.String(), `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,`) {
			t.Errorf("%s marker: wrote %.120q, want an error answer", c.name, out.String())
		}
	}
	if sp.Pending() != 1 || other.Pending() != 1 {
		t.Fatalf("%d and %d results registered, want each connection's still there", sp.Pending(), other.Pending())
	}
	out.Reset()
	if _, err := w.Write(line); err != nil {
		t.Fatal(err)
	}
	if out.String() != wantSpliced("1") {
		t.Errorf("the call's own placeholder: wrote %.100q, want %.100q", out.String(), wantSpliced("1"))
	}
}
