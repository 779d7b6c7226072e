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
)

// The stdio server answers every malformed line with a JSON-RPC error and
// keeps serving: the next request succeeds.
func TestStdioSurvivesBadLines(t *testing.T) {
	srv := New(Options{Live: testLive(t, testCatalog, nil)})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.MCP().Run(ctx, NewStdioTransport(inR, outW, nil)) }()
	lines := bufio.NewScanner(outR)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	next := func() map[string]any {
		t.Helper()
		got := make(chan map[string]any, 1)
		go func() {
			if !lines.Scan() {
				got <- nil
				return
			}
			var m map[string]any
			json.Unmarshal(lines.Bytes(), &m)
			got <- m
		}()
		select {
		case m := <-got:
			if m == nil {
				t.Fatal("the server closed stdout")
			}
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no answer in 10 s")
		}
		return nil
	}
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := next(); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("initialize = %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	bad := []struct {
		name, line string
		code       float64
		id         any
	}{
		{"not json", `{not json`, -32700, nil},
		{"null", `null`, -32600, nil},
		{"empty array", `[]`, -32600, nil},
		{"batch", `[{"jsonrpc":"2.0","id":5,"method":"tools/list"}]`, -32600, nil},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":7,"method":"tools/list"}`, -32600, 7.0},
		{"no method", `{"jsonrpc":"2.0","id":"a"}`, -32600, "a"},
		{"string", `"hello"`, -32600, nil},
		{"invalid utf-8", "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"\xff\xfe\"}", -32700, nil},
		{"17 MiB line", `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"x":"` + strings.Repeat("a", 17<<20) + `"}}`, -32700, nil},
	}
	for i, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			send(tc.line)
			m := next()
			e, _ := m["error"].(map[string]any)
			if e == nil || e["code"] != tc.code || m["id"] != tc.id || m["jsonrpc"] != "2.0" {
				t.Errorf("reply to %.60q = %v, want error %v with id %v", tc.line, m, tc.code, tc.id)
			}
			// The next request still works.
			id := 100 + i
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id))
			if m := next(); m["id"] != float64(id) || m["result"] == nil {
				t.Errorf("tools/list after %s = %.200v, want a result", tc.name, m)
			}
		})
	}
	inW.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Error("the server did not end when stdin closed")
	}
}
