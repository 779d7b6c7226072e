package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestRouteTagger: on a call's response stream, requests and
// notifications are marked with the call's route, long ones (past the
// buffer) too; responses, long or short, and lines that are not JSON-RPC
// pass through byte for byte.
func TestRouteTagger(t *testing.T) {
	g := New(Options{})
	route := &callRoute{id: "toolscout-test", key: "k3y", domain: "d", ctx: context.Background()}
	big := strings.Repeat("x", 3*taggerBuffer)
	response := `data: {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + big + `"}]}}` + "\n"
	events := []string{
		"event: message\n",
		`data: {"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{"message":"` + big + `"}}` + "\n",
		"\n",
		`data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi","_meta":{"k":1}}}` + "\n",
		"\n",
		`data: {"method": not json` + "\n",
		"\n",
		response,
		"\n",
	}
	tg := newRouteTagger(g.env.routes, route, io.NopCloser(strings.NewReader(strings.Join(events, ""))))
	var out bytes.Buffer
	buf := make([]byte, 1000) // reads smaller than a line
	for {
		n, err := tg.Read(buf)
		out.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.SplitAfter(out.String(), "\n")
	if len(lines) != len(events)+1 || lines[len(lines)-1] != "" {
		t.Fatalf("%d lines out, want %d", len(lines)-1, len(events))
	}
	for i, want := range events {
		got := lines[i]
		switch i {
		case 1, 3:
			msg, err := jsonrpc.DecodeMessage([]byte(strings.TrimPrefix(got, "data: ")))
			if err != nil {
				t.Fatalf("line %d: %v", i, err)
			}
			var p struct {
				Meta map[string]any `json:"_meta"`
			}
			if err := json.Unmarshal(msg.(*jsonrpc.Request).Params, &p); err != nil || p.Meta[routeMetaKey] != route.id+"."+route.key {
				t.Errorf("line %d's _meta = %v (%v), want the route", i, p.Meta, err)
			}
			if i == 3 && p.Meta["k"] != float64(1) {
				t.Errorf("the server's own _meta was lost: %v", p.Meta)
			}
		default:
			if got != want {
				t.Errorf("line %d = %.80q, want it as it was", i, got)
			}
		}
	}
	if route.pend.n != 1 {
		t.Errorf("%d notifications counted, want 1 (the log message)", route.pend.n)
	}
}

// TestMarkForged: a server that writes toolscout's mark itself (it knows
// a route's id: the progress token it was sent) does not choose the
// client: without a route of toolscout's, the mark is removed.
func TestMarkForged(t *testing.T) {
	g := New(Options{})
	req := &jsonrpc.Request{Method: "elicitation/create", Params: json.RawMessage(`{"message":"m","_meta":{"` + routeMetaKey + `":"toolscout-alice","k":1}}`)}
	if !g.env.routes.mark(req, nil) {
		t.Fatal("the forged mark was left")
	}
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil || p.Meta[routeMetaKey] != nil || p.Meta["k"] != float64(1) {
		t.Errorf("params after mark = %s, want the server's _meta without the mark", req.Params)
	}
}

// TestRouteForForged: a mark that holds a route's id (which the server
// knows: the progress token it was sent) but not its key finds no route.
func TestRouteForForged(t *testing.T) {
	g := New(Options{Upstreams: []UpstreamConfig{{Domain: "d", URL: "http://127.0.0.1:1/mcp"}}})
	u := g.fleet.byDom["d"]
	r, end := g.env.routes.open(context.Background(), "d", nil, nil)
	defer end()
	for _, mark := range []string{r.id, r.id + ".guess", r.id + "." + r.key} {
		got, marked, _ := g.env.routes.routeFor(&u.cfg, map[string]any{routeMetaKey: mark})
		if want := mark == r.id+"."+r.key; (got == r) != want || marked != want {
			t.Errorf("routeFor(mark %q) = %v, %v; want the route: %v", mark, got, marked, want)
		}
	}
}
