package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/toolscout/toolscout/server/stdio"
)

// stdioPeer drives a real Server through stdio.NewTransport over pipes, as a
// client process does over the server's stdin and stdout.
type stdioPeer struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan []byte
	done  chan struct{} // closed when Run returns, with its error in err
	err   error
}

func startStdio(t *testing.T, srv *Server) *stdioPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	p := &stdioPeer{t: t, in: inW, lines: make(chan []byte, 64), done: make(chan struct{})}
	go func() {
		p.err = srv.MCP().Run(ctx, stdio.NewTransport(inR, outW, nil, nil))
		inR.CloseWithError(fmt.Errorf("the server ended: %v", p.err)) // no write blocks
		outW.Close()
		close(p.done)
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		for sc.Scan() {
			p.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
	})
	return p
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("write: %v", err)
	}
}

// stdioReply is one line the server wrote, with its id kept as written.
type stdioReply struct {
	line    []byte
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (p *stdioPeer) next() stdioReply {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			<-p.done
			p.t.Fatalf("the server closed stdout (Run: %v)", p.err)
		}
		var r stdioReply
		if err := json.Unmarshal(line, &r); err != nil {
			p.t.Fatalf("the server wrote %.200q: %v", line, err)
		}
		r.line = line
		return r
	case <-time.After(20 * time.Second):
		p.t.Fatal("no answer in 20 s")
	}
	return stdioReply{}
}

func (p *stdioPeer) initialize() {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if r := p.next(); string(r.ID) != `"init"` || r.Result == nil {
		p.t.Fatalf("initialize = %s", r.line)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// close ends stdin and checks that the server ends without writing more.
func (p *stdioPeer) close() {
	p.t.Helper()
	p.in.Close()
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		p.t.Fatal("the server did not end when stdin closed")
	}
	for line := range p.lines {
		p.t.Errorf("stray line after the last answer: %.200s", line)
	}
}

func deep(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// Every kind of bad line gets the JSON-RPC 2.0 answer it calls for (or,
// for a notification or a response, none), its id echoed byte for byte, and
// the same session goes on: a ping after each line is answered.
func TestStdioBadLines(t *testing.T) {
	t.Parallel()
	const long30 = "123456789012345678901234567890"
	ping := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}` }
	tests := []struct {
		name string
		line string
		code int64  // the answer's error code; 0 means a result
		id   string // the answer's id as written; "" means no answer
	}{
		// Ids of every JSON type.
		{"id empty object", ping(`{}`), -32600, `null`},
		{"id object", ping(`{"a":1}`), -32600, `null`},
		{"id empty array", ping(`[]`), -32600, `null`},
		{"id array", ping(`[1]`), -32600, `null`},
		{"id true", ping(`true`), -32600, `null`},
		{"id false", ping(`false`), -32600, `null`},
		{"id null", ping(`null`), -32600, `null`},
		{"id 1e400", ping(`1e400`), 0, `1e400`},
		{"id -1e400", ping(`-1e400`), 0, `-1e400`},
		{"id 1e-400", ping(`1e-400`), 0, `1e-400`},
		{"id 1.5", ping(`1.5`), 0, `1.5`},
		{"id 1.0", ping(`1.0`), 0, `1.0`},
		{"id 1e2", ping(`1e2`), 0, `1e2`},
		{"id -0", ping(`-0`), 0, `-0`},
		{"id 0", ping(`0`), 0, `0`},
		{"id -5", ping(`-5`), 0, `-5`},
		{"id 30 digits", ping(long30), 0, long30},
		{"id -30 digits", ping("-" + long30), 0, "-" + long30},
		{"id 2^53+1", ping(`9007199254740993`), 0, `9007199254740993`},
		{"id max int64", ping(`9223372036854775807`), 0, `9223372036854775807`},
		{"id escaped string", ping(`"\u0041"`), 0, `"\u0041"`},
		{"id escaped slash", ping(`"a\/b"`), 0, `"a\/b"`},
		{"id empty string", ping(`""`), 0, `""`},
		{"id html string", ping(`"<&>"`), 0, `"<&>"`},
		{"id U+2028", ping("\"a\u2028b\""), 0, "\"a\u2028b\""},
		{"id like a synthetic one", ping(`"toolscout~id~1"`), 0, `"toolscout~id~1"`},
		{"id 10k string", ping(`"` + strings.Repeat("x", 10000) + `"`), 0, `"` + strings.Repeat("x", 10000) + `"`},
		// Lines that are not JSON.
		{"not json", `{not json`, -32700, `null`},
		{"truncated", `{"jsonrpc":"2.0","id":1,"method":"ping"`, -32700, `null`},
		{"trailing garbage", ping(`1`) + `x`, -32700, `null`},
		{"two messages on a line", ping(`1`) + ping(`2`), -32700, `null`},
		{"invalid utf-8", "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"\xff\xfe\"}", -32700, `null`},
		{"invalid utf-8 in id", ping("\"\xc3\x28\""), -32700, `null`},
		{"byte order mark", "\ufeff" + ping(`1`), -32700, `null`},
		{"nul byte", ping(`1`) + "\x00", -32700, `null`},
		// A line over 4 MiB is not read whole; a request whose id and
		// method come first is answered under its id.
		{"17 MiB line", `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"x":"` + strings.Repeat("a", 17<<20) + `"}}`, -32600, `9`},
		{"5 MiB line, string id", `{"jsonrpc":"2.0","method":"tools/call","id":"q-1","params":{"x":"` + strings.Repeat("a", 5<<20) + `"}}`, -32600, `"q-1"`},
		{"5 MiB line, id after the bulk", `{"jsonrpc":"2.0","method":"tools/call","params":{"x":"` + strings.Repeat("a", 5<<20) + `"},"id":9}`, -32700, `null`},
		{"5 MiB line, id an object", `{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{"x":"` + strings.Repeat("a", 5<<20) + `"}}`, -32700, `null`},
		{"5 MiB response", `{"jsonrpc":"2.0","id":9,"result":{"x":"` + strings.Repeat("a", 5<<20) + `"}}`, -32700, `null`},
		{"5 MiB line, 5000 spaces before the id", `{"jsonrpc":"2.0",` + strings.Repeat(" ", 5000) + `"id":9,"method":"tools/call","params":{"x":"` + strings.Repeat("a", 5<<20) + `"}}`, -32700, `null`},
		{"params nested 1001 deep", `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":` + deep(999) + `}}`, -32700, `null`},
		{"extra member nested 2000 deep", `{"jsonrpc":"2.0","id":5,"method":"ping","x":` + deep(2000) + `}`, -32700, `null`},
		{"nested 100000 deep", `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":` + deep(100000) + `}}`, -32700, `null`},
		{"unclosed 5000 deep", strings.Repeat("[", 5000), -32700, `null`},
		// JSON that is not a request object.
		{"null", `null`, -32600, `null`},
		{"true", `true`, -32600, `null`},
		{"number", `42`, -32600, `null`},
		{"string", `"hello"`, -32600, `null`},
		{"empty array", `[]`, -32600, `null`},
		{"batch", `[` + ping(`5`) + `]`, -32600, `null`},
		{"batch of two", `[` + ping(`5`) + `,` + ping(`6`) + `]`, -32600, `null`},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":7,"method":"tools/list"}`, -32600, `7`},
		{"jsonrpc missing", `{"id":7,"method":"ping"}`, -32600, `7`},
		{"jsonrpc a number", `{"jsonrpc":2.0,"id":7,"method":"ping"}`, -32600, `7`},
		{"JSONRPC upper case", `{"JSONRPC":"2.0","id":7,"method":"ping"}`, -32600, `7`},
		{"no method", `{"jsonrpc":"2.0","id":"a"}`, -32600, `"a"`},
		{"method a number", `{"jsonrpc":"2.0","id":2,"method":5}`, -32600, `2`},
		{"method null", `{"jsonrpc":"2.0","id":2,"method":null}`, -32600, `2`},
		{"method empty", `{"jsonrpc":"2.0","id":2,"method":""}`, -32600, `2`},
		{"method an object", `{"jsonrpc":"2.0","id":2,"method":{}}`, -32600, `2`},
		{"method of a bad notification", `{"jsonrpc":"2.0","method":1,"params":"bar"}`, -32600, `null`},
		{"id twice", `{"jsonrpc":"2.0","id":2,"id":{},"method":"ping"}`, -32600, `null`},
		{"method twice", `{"jsonrpc":"2.0","id":2,"method":"ping","method":5}`, -32600, `null`},
		{"params a number", `{"jsonrpc":"2.0","id":2,"method":"ping","params":5}`, -32600, `2`},
		{"params a string", `{"jsonrpc":"2.0","id":2,"method":"ping","params":"x"}`, -32600, `2`},
		{"params true", `{"jsonrpc":"2.0","id":2,"method":"ping","params":true}`, -32600, `2`},
		{"params of a notification a number", `{"jsonrpc":"2.0","method":"notifications/initialized","params":5}`, -32600, `null`},
		// Well-formed requests the SDK refuses.
		{"params an array", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":[1]}`, -32602, `2`},
		{"tool name a number", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5}}`, -32602, `2`},
		{"unknown method", `{"jsonrpc":"2.0","id":2,"method":"no/such"}`, -32601, `2`},
		{"notification with an id", `{"jsonrpc":"2.0","id":3,"method":"notifications/initialized"}`, -32600, `3`},
		// Lines the server answers normally.
		{"params null", `{"jsonrpc":"2.0","id":2,"method":"ping","params":null}`, 0, `2`},
		{"nested 1000 deep", `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":` + deep(998) + `}}`, 0, `5`},
		{"unknown member", `{"jsonrpc":"2.0","id":2,"method":"ping","extra":{"x":[1]}}`, 0, `2`},
		{"spaces around", "  \t" + ping(`2`) + "  ", 0, `2`},
		{"crlf", ping(`2`) + "\r", 0, `2`},
		{"spaces inside", `{ "jsonrpc" : "2.0" , "id" : 1.5 , "method" : "ping" , "params" : { } }`, 0, `1.5`},
		// Lines that get no answer.
		{"empty line", ``, 0, ``},
		{"blank line", " \t ", 0, ``},
		{"notification", `{"jsonrpc":"2.0","method":"tools/list"}`, 0, ``},
		{"unknown notification", `{"jsonrpc":"2.0","method":"notifications/no_such"}`, 0, ``},
		{"cancel of no request", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1.5}}`, 0, ``},
		{"cancel with an object id", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}`, 0, ``},
		{"response to no request", `{"jsonrpc":"2.0","id":5,"result":{}}`, 0, ``},
		{"response with a null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, 0, ``},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, 0, ``},
		{"response with an object id", `{"jsonrpc":"2.0","id":{},"result":{}}`, 0, ``},
		{"response error a string", `{"jsonrpc":"2.0","id":5,"error":"oops"}`, 0, ``},
		{"response error code 1.5", `{"jsonrpc":"2.0","id":5,"error":{"code":1.5,"message":"x"}}`, 0, ``},
		{"response error code a string", `{"jsonrpc":"2.0","id":5,"error":{"code":"x","message":"x"}}`, 0, ``},
		{"response with result and error", `{"jsonrpc":"2.0","id":5,"result":{},"error":{"code":1,"message":"x"}}`, 0, ``},
		{"response with result and a null error", `{"jsonrpc":"2.0","id":5,"result":{},"error":null}`, 0, ``},
	}
	p := startStdio(t, New(Options{Live: testLive(t, testCatalog, nil)}))
	p.initialize()
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p.t = t
			alive := fmt.Sprintf(`"alive-%d"`, i)
			p.send(tc.line)
			p.send(ping(alive))
			// The SDK answers calls concurrently: the ping's answer may come
			// first.
			var got []stdioReply
			for pinged := false; !pinged || tc.id != "" && len(got) == 0; {
				r := p.next()
				if string(r.ID) != alive {
					got = append(got, r)
					continue
				}
				if r.Result == nil {
					t.Fatalf("ping after %s = %s, want a result", tc.name, r.line)
				}
				pinged = true
			}
			if tc.id == "" {
				for _, r := range got {
					t.Errorf("answer to %.60q = %.200s, want none", tc.line, r.line)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("%d answers to %.60q, want 1", len(got), tc.line)
			}
			r := got[0]
			ok := r.JSONRPC == "2.0" && string(r.ID) == tc.id
			if tc.code == 0 {
				ok = ok && r.Error == nil && r.Result != nil
			} else {
				ok = ok && r.Error != nil && r.Error.Code == tc.code && r.Result == nil
			}
			if !ok {
				t.Errorf("answer to %.60q = %.200s, want code %d (0: a result) with id %.60s", tc.line, r.line, tc.code, tc.id)
			}
		})
	}
	p.t = t
	p.close()
}

// Calls before initialize and a second initialize are refused with a real
// JSON-RPC code (-32600), not the go-sdk's 0; ping is allowed before.
func TestStdioLifecycleCodes(t *testing.T) {
	t.Parallel()
	p := startStdio(t, New(Options{Live: testLive(t, testCatalog, nil)}))
	steps := []struct {
		name, line string
		code       int64 // 0: a result
	}{
		{"tools/list before initialize", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, -32600},
		{"tools/call before initialize", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"discover_tools","arguments":{}}}`, -32600},
		{"ping before initialize", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, 0},
		{"initialize", `{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, 0},
		{"second initialize", `{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, -32600},
		{"tools/list after initialize", `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`, 0},
	}
	for i, s := range steps {
		p.send(s.line)
		r := p.next()
		code := int64(0)
		if r.Error != nil {
			code = r.Error.Code
		}
		if string(r.ID) != fmt.Sprint(i+1) || code != s.code || code == 0 && r.Result == nil {
			t.Errorf("%s = %.200s, want code %d (0: a result) with id %d", s.name, r.line, s.code, i+1)
		}
	}
	p.close()
}

// A call that reuses the id of a call still in flight is answered with an
// error (the go-sdk drops it silently); ids the SDK would read as the same
// number (1.5 and 1) stay two calls; a cancellation names the call by the
// id the client sent; the id is free again once answered.
func TestStdioInFlightIDs(t *testing.T) {
	t.Parallel()
	live := unloadedLive(t)
	// Nothing is ever loaded: discover_tools waits (MaxStartupWait) until
	// it is cancelled.
	p := startStdio(t, New(Options{Live: live}))
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"discover_tools","arguments":{"query":"forecast"}}}`)
	want := func(what, id string, isErr bool) {
		t.Helper()
		r := p.next()
		if string(r.ID) != id || (r.Error != nil) != isErr || r.Error != nil && r.Error.Code == 0 {
			t.Errorf("%s = %.200s, want id %s and error %v (with a real code)", what, r.line, id, isErr)
		}
	}
	p.send(`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`)
	want("ping reusing the id in flight", `1.5`, true)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	want("ping with id 1 while 1.5 is in flight", `1`, false)
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"no such call"}}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	want("ping after cancelling id 1 (answered already)", `2`, false)
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1.5}}`)
	r := p.next() // the cancelled call ends, with an error or a result
	if string(r.ID) != `1.5` || r.Error != nil && r.Error.Code == 0 {
		t.Fatalf("cancelled call = %.200s, want id 1.5 and a real code if an error", r.line)
	}
	p.send(`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`)
	want("ping reusing id 1.5 once answered", `1.5`, false)
	p.close()
}
