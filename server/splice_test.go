package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/internal/rawjson"
	"github.com/toolscout/toolscout/server/relay"
)

// TestSpliceSameAnswer: over ServeStdio a large result is written in place
// of its placeholder, and the client reads the same line, byte for byte,
// as over the SDK's encoder (s.MCP().Run with stdio.NewTransport): text and
// image blocks, isError, the upstream's _meta dropped, whitespace between
// tokens removed, and in the new protocol the SDK's own _meta in front.
func TestSpliceSameAnswer(t *testing.T) {
	t.Parallel()
	e := startRelay(t)
	plain := relaySession(t, e.srv, false)
	for _, c := range []struct {
		blob    blobSpec
		spliced bool
	}{
		// Sizes just over relay.MinSize take the spliced path as a larger
		// one does; 3 MiB cost 8 s of the package's time under -race.
		{blobSpec{Text: 768 << 10, Image: 256 << 10}, true},
		{blobSpec{Text: 600 << 10, IsError: true}, true},
		{blobSpec{Text: 1 << 20, Image: 300 << 10, Spaced: true}, true},
		{blobSpec{Text: 1000, Image: 100}, false}, // under relay.MinSize: the SDK's path in both
	} {
		for _, proto := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(fmt.Sprintf("%+v/%s", c.blob, proto), func(t *testing.T) {
				meta := ""
				if proto == "2026-07-28" {
					meta = newProtocolMeta
				}
				before := e.splice.Spliced()
				e.callMeta(1, c.blob, true, meta)
				plain.callMeta(1, c.blob, true, meta)
				got := keptAnswer(t, e.dir)
				want := keptAnswer(t, plain.dir)
				if !bytes.Equal(got, want) {
					i := 0
					for i < min(len(got), len(want)) && got[i] == want[i] {
						i++
					}
					t.Fatalf("spliced answer (%d bytes) differs from the encoder's (%d bytes) at byte %d: got %.80q, want %.80q",
						len(got), len(want), i, got[i:], want[i:])
				}
				if spliced := e.splice.Spliced() - before; spliced != map[bool]int64{true: 1, false: 0}[c.spliced] {
					t.Errorf("%d results spliced, want spliced=%v", spliced, c.spliced)
				}
				if bytes.Contains(got, []byte(`"fake":true`)) {
					t.Error("the upstream's _meta came through")
				}
				if proto == "2025-11-25" && c.spliced {
					compact := c.blob
					compact.Spaced = false
					if want := `{"jsonrpc":"2.0","id":1,"result":` + string(compact.result(false)) + "}\n"; string(got) != want {
						t.Errorf("answer = %.120q..., want the upstream's result, compact, less its _meta: %.120q...", got, want)
					}
				} else if proto == "2026-07-28" && !bytes.HasPrefix(got, []byte(`{"jsonrpc":"2.0","id":1,"result":{"_meta":{"`+mcp.MetaKeyServerInfo+`"`)) {
					t.Errorf("new protocol: answer %.200q does not start with the SDK's serverInfo", got)
				}
				if n := e.splice.Pending(); n != 0 {
					t.Errorf("%d results still registered after the answer", n)
				}
			})
		}
	}
}

// keptAnswer returns the first answer a relayEnv kept in dir.
func keptAnswer(t *testing.T, dir string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "0"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSpliceConcurrent: large calls at once, with small ones between, each
// get their own result on the one stdout, with their id as the client
// wrote it, also when the SDK knows the call by another (run with -race).
func TestSpliceConcurrent(t *testing.T) {
	t.Parallel()
	e := startRelay(t)
	blobs := map[string]blobSpec{}
	for i, id := range []string{`1`, `"b"`, `3`, `1.5`, `"e\u0041"`, `6`} {
		b := blobSpec{Text: 300<<10 + i*50<<10, Image: i * 20 << 10, IsError: i%2 == 1}
		if i%3 == 2 {
			b = blobSpec{Text: 100 + i} // small: the SDK's path
		}
		blobs[id] = b
		args, _ := json.Marshal(b.args())
		e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"execute_tool","arguments":{"tool_name":"fake__blob","arguments":%s}}}`, id, args))
	}
	for range len(blobs) {
		var line bytes.Buffer
		if a := e.readLine(&line); a.err != nil {
			t.Fatal(a.err)
		}
		prefix := `{"jsonrpc":"2.0","id":`
		rest, ok := strings.CutPrefix(line.String(), prefix)
		id := rest[:rawjson.TokenLen([]byte(rest))]
		b, known := blobs[id]
		if !ok || !known {
			t.Fatalf("answer %.100q is not one of the calls'", line.String())
		}
		if want := prefix + id + `,"result":` + string(b.result(false)) + "}\n"; b.Text > relay.MinSize && line.String() != want {
			t.Errorf("answer to call %s (%+v) = %.100q..., want %.100q...", id, b, line.String(), want)
		}
		delete(blobs, id)
	}
	if n := e.splice.Spliced(); n != 4 {
		t.Errorf("%d results spliced, want the 4 large ones", n)
	}
}

// TestSpliceClientGone: when the client stops reading, the answer fails
// to write and nothing of it is held; when the session ends, nothing is
// registered and nothing new is.
func TestSpliceClientGone(t *testing.T) {
	if !inOwnProcess(t) { // it measures the heap
		return
	}
	e := startRelay(t)
	e.call(1, blobSpec{Text: 1000}, false) // warm up the session
	before := heapNow()
	e.outR.CloseWithError(errors.New("the client left"))
	args, _ := json.Marshal(blobSpec{Text: 8 << 20, Image: 1 << 20}.args())
	e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute_tool","arguments":{"tool_name":"fake__blob","arguments":%s}}}`, args))
	waitFor(t, "the answer's write to fail", func() bool { return e.writeErrs.Load() > 0 })
	if n := e.splice.Pending(); n != 0 {
		t.Errorf("%d results registered after the answer failed to write", n)
	}
	e.in.Close()
	if err := <-e.done; err != nil {
		t.Logf("session ended: %v", err)
	}
	if n := e.splice.Pending(); n != 0 {
		t.Errorf("%d results registered after the session ended", n)
	}
	if grown := int64(heapNow()) - int64(before); grown > 4<<20 {
		t.Errorf("the heap is %.1f MiB larger after the failed answer than before: the result is still held", float64(grown)/(1<<20))
	}
	slot := keptSlot(t, `{"content":[`+big+`]}`)
	relay.Middleware(markedBy(slot))(relay.WithSplicer(context.Background(), e.splice), "tools/call", nil)
	if n := e.splice.Pending(); n != 0 {
		t.Error("a result was registered after the session ended")
	}
}

// TestSpliceCancelled: a large call the client cancels while it runs gets
// one answer (its result, or an error if the cancellation came first),
// holds nothing afterwards, and the session goes on.
func TestSpliceCancelled(t *testing.T) {
	t.Parallel()
	e := startRelay(t)
	args, _ := json.Marshal(blobSpec{Text: 2 << 20}.args())
	for i := range 5 {
		e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"execute_tool","arguments":{"tool_name":"fake__blob","arguments":%s}}}`, i+1, args))
		e.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, i+1))
	}
	for range 5 {
		var line bytes.Buffer
		if a := e.readLine(&line); a.err != nil {
			t.Fatal(a.err)
		}
		if !strings.Contains(line.String(), `"result":{"content":[{"type":"text"`) && !strings.Contains(line.String(), `"error":{`) {
			t.Errorf("answer %.200q is neither the result nor an error", line.String())
		}
	}
	waitFor(t, "the release of every result", func() bool { return e.splice.Pending() == 0 })
	got := e.call(1, blobSpec{Text: 1 << 20}, false)
	if got[0].bytes < 1<<20 {
		t.Errorf("after the cancelled calls, a call got %d bytes, want its result", got[0].bytes)
	}
}

// TestSpliceHTTPSameAnswer: over HTTPHandler, in both protocol
// generations, a large result is written into the SSE event in place of
// its placeholder: the message is the one the SDK's own handler (no
// splicing) writes for the same call, a client's own splice header
// changes nothing, and no splicer outlives its request.
//
// In a process of its own: relay.HTTPStats counts the splicers of the
// whole process, so a parallel test relaying a large result over HTTP at
// the same moment moved both counts (a flake seen on a loaded machine).
func TestSpliceHTTPSameAnswer(t *testing.T) {
	if !inOwnProcess(t) {
		return
	}
	e := startRelay(t)
	ours := httptest.NewServer(e.srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(ours.Close)
	server := func(*http.Request) *mcp.Server { return e.srv.MCP() }
	sdkSessions := httptest.NewServer(mcp.NewStreamableHTTPHandler(server, nil))
	t.Cleanup(sdkSessions.Close)
	sdkStateless := httptest.NewServer(mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(sdkStateless.Close)
	post := func(url, body string, headers map[string]string) (*http.Response, []byte) {
		t.Helper()
		resp := postRPC(t, url, body, headers)
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, data
	}
	// The message of an answer: JSON, or the data of its SSE event.
	message := func(data []byte) []byte {
		for _, l := range bytes.Split(data, []byte("\n")) {
			if d, ok := bytes.CutPrefix(l, []byte("data: ")); ok && len(d) > 0 {
				return d
			}
		}
		return bytes.TrimSpace(data)
	}
	session := func(url string) string {
		t.Helper()
		h := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
		resp, _ := post(url, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, h)
		h["Mcp-Session-Id"] = resp.Header.Get("Mcp-Session-Id")
		if h["Mcp-Session-Id"] == "" {
			t.Fatalf("%s: initialize opened no session", url)
		}
		post(url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
		return h["Mcp-Session-Id"]
	}
	sids := map[string]string{ours.URL: session(ours.URL), sdkSessions.URL: session(sdkSessions.URL)}
	newMeta := fmt.Sprintf(`,"_meta":{%q:%q,%q:{"name":"t","version":"1"},%q:{}}`, mcp.MetaKeyProtocolVersion, StatelessProtocol, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities)
	for _, c := range []struct {
		blob    blobSpec
		spliced bool
	}{
		{blobSpec{Text: 768 << 10, Image: 256 << 10}, true}, // over relay.MinSize, as above
		{blobSpec{Text: 1 << 20, Spaced: true, IsError: true}, true},
		{blobSpec{Text: 1000}, false},
	} {
		for _, proto := range []string{"2025-11-25", StatelessProtocol} {
			t.Run(fmt.Sprintf("%+v/%s", c.blob, proto), func(t *testing.T) {
				args, _ := json.Marshal(c.blob.args())
				call := func(url string) []byte {
					headers := map[string]string{"Mcp-Protocol-Version": proto, "X-Toolscout-Splice": "forged-by-the-client"} // relay.SpliceHTTP's header
					meta := ""
					if proto == StatelessProtocol {
						meta = newMeta
						headers["Mcp-Method"], headers["Mcp-Name"] = "tools/call", "execute_tool"
					} else {
						headers["Mcp-Session-Id"] = sids[url]
					}
					_, data := post(url, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute_tool","arguments":{"tool_name":"fake__blob","arguments":%s}%s}}`, args, meta), headers)
					return message(data)
				}
				want := call(map[string]string{"2025-11-25": sdkSessions.URL, StatelessProtocol: sdkStateless.URL}[proto])
				_, before := relay.HTTPStats()
				got := call(ours.URL)
				if !bytes.Equal(got, want) {
					i := 0
					for i < min(len(got), len(want)) && got[i] == want[i] {
						i++
					}
					t.Fatalf("spliced answer (%d bytes) differs from the SDK's (%d bytes) at byte %d: got %.80q, want %.80q",
						len(got), len(want), i, got[i:], want[i:])
				}
				if !bytes.Contains(got, []byte(`"text":"00000000 `)) {
					t.Errorf("answer %.200q holds no text of the blob", got)
				}
				left, spliced := relay.HTTPStats()
				if n := spliced - before; n != map[bool]int64{true: 1, false: 0}[c.spliced] {
					t.Errorf("%d results spliced, want spliced=%v", n, c.spliced)
				}
				if left != 0 {
					t.Errorf("%d splicers registered after the request", left)
				}
			})
		}
	}
}
