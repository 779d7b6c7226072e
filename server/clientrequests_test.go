package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/internal/logtest"
	"github.com/toolscout/toolscout/internal/redact"
	"github.com/toolscout/toolscout/server/codemode"
	"github.com/toolscout/toolscout/server/gateway"
)

// askingClient is a go-sdk client of toolscout that answers sampling,
// elicitation and roots as a user's client would, each answer naming
// the client, and records the progress and log messages it gets.
type askingClient struct {
	name     string
	cs       *mcp.ClientSession
	mu       sync.Mutex
	asked    []string // the methods it was asked, in order
	progress []any    // progress tokens
	logs     []*mcp.LoggingMessageParams
}

func (c *askingClient) note(what string) {
	c.mu.Lock()
	c.asked = append(c.asked, what)
	c.mu.Unlock()
}

// askingOptions are the client options of a client that declares every
// capability (all true) or none.
func (c *askingClient) options(all bool) *mcp.ClientOptions {
	o := &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			c.mu.Lock()
			c.progress = append(c.progress, req.Params.ProgressToken)
			c.mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			c.mu.Lock()
			c.logs = append(c.logs, req.Params)
			c.mu.Unlock()
		},
	}
	if !all {
		o.Capabilities = &mcp.ClientCapabilities{}
		return o
	}
	o.CreateMessageHandler = func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		c.note("sampling")
		return &mcp.CreateMessageResult{Model: "model-of-" + c.name, Role: "assistant", Content: &mcp.TextContent{Text: "sampled by " + c.name}}, nil
	}
	o.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		c.note("elicitation")
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "user of " + c.name, "check": true}}, nil
	}
	return o
}

// connectAsking connects a client named name to srv over transport
// ("memory", "stdio" or "http"), with every capability or none.
func connectAsking(t *testing.T, srv *Server, transport, name string, all bool) *askingClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	c := &askingClient{name: name}
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, c.options(all))
	if all {
		client.AddRoots(&mcp.Root{URI: "file:///home/" + name, Name: name + "'s folder"})
	}
	tr := serverTransport(t, ctx, srv, transport)
	cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	c.cs = cs
	return c
}

// waitTool waits until toolscout lists the tool (the everything server
// registers its tools that need a client capability after initialize).
func waitTool(t *testing.T, c *askingClient, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: GetToolSchema, Arguments: map[string]any{"tool_name": name}})
		if err == nil && !res.IsError {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is not listed: %v %v", name, err, res)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestClientRequestsPassThrough: sampling, elicitation and roots/list of
// the everything server (over stdio) in the middle of an execute_tool
// reach the client that made the call, over each of toolscout's
// transports, and progress and log messages of the call come back
// under the client's own token and filtered by its level.
func TestClientRequestsPassThrough(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"memory", "stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			env := startGateway(t, []gateway.UpstreamConfig{{Domain: "everything", Command: npmBin(t, "mcp-server-everything")}}, Exposure{Mode: ExposeMeta})
			c := connectAsking(t, env.srv, transport, "alice", true)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			waitTool(t, c, "everything__trigger-elicitation-request")
			if err := c.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
				t.Fatalf("logging/setLevel: %v", err)
			}

			// The roots first, for their log: see asking_client.mjs.
			res := call(t, c.cs, ExecuteTool, map[string]any{"tool_name": "everything__get-roots-list"})
			if res.IsError || !strings.Contains(text(res), "file:///home/alice") {
				t.Errorf("get-roots-list = %q, want alice's root", text(res))
			}
			res = call(t, c.cs, ExecuteTool, map[string]any{"tool_name": "everything__trigger-elicitation-request"})
			if res.IsError || !strings.Contains(text(res), "user of alice") {
				t.Errorf("trigger-elicitation-request = %q, want alice's answer", text(res))
			}
			res = call(t, c.cs, ExecuteTool, map[string]any{"tool_name": "everything__trigger-sampling-request", "arguments": map[string]any{"prompt": "hi", "maxTokens": 10}})
			if res.IsError || !strings.Contains(text(res), "sampled by alice") {
				t.Errorf("trigger-sampling-request = %q, want alice's sample", text(res))
			}

			res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: ExecuteTool, Meta: mcp.Meta{"progressToken": "alice-token"},
				Arguments: map[string]any{"tool_name": "everything__trigger-long-running-operation", "arguments": map[string]any{"duration": 0.3, "steps": 3}}})
			if err != nil || res.IsError {
				t.Fatalf("trigger-long-running-operation: %v %v", err, res)
			}
			// The client hands notifications to its handlers on another
			// goroutine than the result's: wait for them to be handled.
			var progress []any
			var logs []*mcp.LoggingMessageParams
			for {
				c.mu.Lock()
				progress = append([]any(nil), c.progress...)
				logs = append([]*mcp.LoggingMessageParams(nil), c.logs...)
				c.mu.Unlock()
				if len(progress) >= 3 || ctx.Err() != nil {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if len(progress) != 3 {
				t.Errorf("progress notifications = %v, want 3 under alice-token", progress)
			}
			for _, tok := range progress {
				if tok != "alice-token" {
					t.Errorf("progress token %v, want alice-token", tok)
				}
			}
			var rootsLog bool
			for _, l := range logs {
				if !strings.HasPrefix(l.Logger, "everything") {
					t.Errorf("log message from logger %q, want it to name the server", l.Logger)
				}
				if fmt.Sprint(l.Data) == "Roots updated: 1 root(s) received from client" {
					rootsLog = true
				}
			}
			if !rootsLog {
				t.Errorf("log messages = %d, want the roots update of get-roots-list", len(logs))
			}
		})
	}
}

// TestClientRequestsTwoCallers: two clients of toolscout call a tool
// that elicits at the same time, through one connection to the
// everything server over HTTP: each answers only its own request. A
// client that declared no capability gets the upstream's error, and the
// audit trail records every call.
func TestClientRequestsTwoCallers(t *testing.T) {
	t.Parallel()
	url := everythingHTTP(t)
	w := &lockedAudit{}
	env := startGatewayServer(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{{Domain: "everything", URL: url}}, MinBackoff: 100 * time.Millisecond, MaxBackoff: 500 * time.Millisecond},
		Options{Expose: Exposure{Mode: ExposeMeta}, Audit: w})
	alice := connectAsking(t, env.srv, "http", "alice", true)
	bob := connectAsking(t, env.srv, "http", "bob", true)
	carol := connectAsking(t, env.srv, "http", "carol", false)
	waitTool(t, alice, "everything__trigger-elicitation-request")

	var wg sync.WaitGroup
	for _, c := range []*askingClient{alice, bob, alice, bob} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ExecuteTool, Arguments: map[string]any{"tool_name": "everything__trigger-elicitation-request"}})
			if err != nil || res.IsError || !strings.Contains(text(res), "user of "+c.name) {
				t.Errorf("%s's trigger-elicitation-request = %v, %v; want its own answer", c.name, res, err)
			}
		}()
	}
	wg.Wait()
	for _, c := range []*askingClient{alice, bob} {
		if len(c.asked) != 2 {
			t.Errorf("%s was asked %v, want its own 2 elicitations", c.name, c.asked)
		}
	}
	res := call(t, carol.cs, ExecuteTool, map[string]any{"tool_name": "everything__trigger-elicitation-request"})
	if !res.IsError || !strings.Contains(text(res), "does not support elicitation") {
		t.Errorf("carol's trigger-elicitation-request = %q, want the upstream's error for a client without elicitation", text(res))
	}
	if len(carol.asked) != 0 {
		t.Errorf("carol was asked %v", carol.asked)
	}
	lines := w.count("everything__trigger-elicitation-request")
	if lines != 5 {
		t.Errorf("audit trail has %d lines of trigger-elicitation-request, want 5", lines)
	}
}

// lockedAudit keeps the audit lines written (the calls of several
// clients run at once).
type lockedAudit struct{ logtest.Buffer }

func (w *lockedAudit) count(s string) int {
	return strings.Count(w.String(), s)
}

// inputUpstream is a go-sdk server over HTTP whose tool "deploy" asks
// its client to confirm with an input-required result (SEP-2322), then
// answers what the retry carried: the answer and the request state.
// caps records the capabilities each call said its client has.
func inputUpstream(t *testing.T) (url string, caps chan bool) {
	t.Helper()
	caps = make(chan bool, 16)
	s := mcp.NewServer(&mcp.Implementation{Name: "input", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "deploy", Description: "Deploy after the user confirms.", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ip := req.Session.InitializeParams()
			caps <- ip != nil && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil
			if len(req.Params.InputResponses) == 0 {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{Message: "Deploy?",
					RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}}},
					RequestState: "state-1"}, nil
			}
			er, _ := req.Params.InputResponses["confirm"].(*mcp.ElicitResult)
			if er == nil {
				return nil, fmt.Errorf("no answer to confirm: %v", req.Params.InputResponses)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("deployed: %s %v, state %s", er.Action, er.Content["name"], req.Params.RequestState)}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(hs.Close)
	return hs.URL, caps
}

// TestInputRequiredPassThrough: an upstream's input-required result
// (2026-07-28) goes back to the client with its input requests and
// request state as they were; the client answers and retries, and the
// retry reaches the upstream with the answer and the state. A client of
// 2025-11-25 is asked by the go-sdk on toolscout's side, over its own
// session. The upstream learns the capabilities of the client of each
// call, not toolscout's.
func TestInputRequiredPassThrough(t *testing.T) {
	t.Parallel()
	url, caps := inputUpstream(t)
	env := startGateway(t, []gateway.UpstreamConfig{{Domain: "input", URL: url}}, Exposure{Mode: ExposeMeta})
	hs := httptest.NewServer(env.srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	for _, protocol := range []string{StatelessProtocol, "2025-11-25"} {
		t.Run(protocol, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var asked []string
			client := mcp.NewClient(&mcp.Implementation{Name: "asker", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked = append(asked, req.Params.Message)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ada"}}, nil
				},
				// The input-required result itself, untouched.
				MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: protocol == StatelessProtocol},
			})
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			waitFor(t, "input__deploy", func() bool { return env.hasTool("input__deploy") })
			for len(caps) > 0 {
				<-caps
			}
			params := &mcp.CallToolParams{Name: ExecuteTool, Arguments: map[string]any{"tool_name": "input__deploy"}}
			res, err := cs.CallTool(ctx, params)
			if err != nil {
				t.Fatalf("execute_tool input__deploy: %v", err)
			}
			if protocol == StatelessProtocol {
				el, ok := res.InputRequests["confirm"].(*mcp.ElicitParams)
				if !ok || el.Message != "Deploy?" || res.RequestState != "state-1" || len(res.Content) != 0 {
					t.Fatalf("first answer = %+v %q, want the upstream's input request and state as they were", res, text(res))
				}
				retry := *params
				retry.InputResponses = mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ada"}}}
				retry.RequestState = res.RequestState
				if res, err = cs.CallTool(ctx, &retry); err != nil {
					t.Fatalf("retry: %v", err)
				}
			} else if len(asked) != 1 || asked[0] != "Deploy?" {
				t.Errorf("the client was asked %v, want Deploy? once", asked)
			}
			if got := text(res); got != "deployed: accept ada, state state-1" {
				t.Errorf("execute_tool input__deploy = %q, want the upstream's answer to the retry", got)
			}
			if protocol == StatelessProtocol {
				if c := <-caps; !c {
					t.Errorf("the upstream was told the client has no elicitation; it declared it")
				}
			}
		})
	}
	// A client without elicitation: the upstream is told so (toolscout
	// itself declares it, for the clients that have it).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bare, err := mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: StatelessProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	for len(caps) > 0 {
		<-caps
	}
	if _, err := bare.CallTool(ctx, &mcp.CallToolParams{Name: ExecuteTool, Arguments: map[string]any{"tool_name": "input__deploy"}}); err != nil {
		t.Fatal(err)
	}
	if c := <-caps; c {
		t.Errorf("the upstream was told a client without elicitation has it")
	}
}

// TestSubscribeOverHTTPUpstream: a resource of an upstream reached over
// Streamable HTTP (the everything server, of the TypeScript SDK) is
// subscribed to through toolscout as one over stdio is, and its updates
// reach the client.
func TestSubscribeOverHTTPUpstream(t *testing.T) {
	t.Parallel()
	url := everythingHTTP(t)
	env := startGateway(t, []gateway.UpstreamConfig{{Domain: "everything", URL: url}}, Exposure{Mode: ExposeMeta})
	for _, protocol := range []string{"2025-11-25", StatelessProtocol} {
		t.Run(protocol, func(t *testing.T) {
			c := connectSurfaceClient(t, env.srv, "http", protocol)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			doc := "toolscout://everything/demo://resource/static/document/architecture.md"
			waitFor(t, "the everything server's resources", func() bool {
				rl, err := c.cs.ListResources(ctx, nil)
				return err == nil && len(rl.Resources) > 0
			})
			if err := c.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: doc}); err != nil {
				t.Fatalf("subscribe: %v", err)
			}
			if res := call(t, c.cs, ExecuteTool, map[string]any{"tool_name": "everything__toggle-subscriber-updates", "arguments": map[string]any{}}); res.IsError {
				t.Fatalf("toggle-subscriber-updates: %v", text(res))
			}
			select {
			case got := <-c.updated:
				if got != doc {
					t.Errorf("notifications/resources/updated for %s, want %s", got, doc)
				}
			case <-ctx.Done():
				t.Fatal("no notifications/resources/updated")
			}
			call(t, c.cs, ExecuteTool, map[string]any{"tool_name": "everything__toggle-subscriber-updates", "arguments": map[string]any{}})
			if err := c.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: doc}); err != nil {
				t.Errorf("unsubscribe: %v", err)
			}
		})
	}
}

// goSubscribeUpstream is a go-sdk server over HTTP (stateless: only the
// 2026-07-28 protocol, or stateful) with one resource that may be
// subscribed to, and a tool "touch" that says it changed.
func goSubscribeUpstream(t *testing.T, stateless bool) string {
	t.Helper()
	var s *mcp.Server
	s = mcp.NewServer(&mcp.Implementation{Name: "subs", Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	s.AddResource(&mcp.Resource{URI: "test://watched", Name: "watched"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "now"}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "touch", Description: "Change the watched resource.", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if err := s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "test://watched"}); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "touched"}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestSubscribeGoSDKUpstream: a go-sdk server that declares
// resources.subscribe is subscribed to through toolscout, stateful and
// stateless (where the go-sdk client subscribes with
// subscriptions/listen), and its updates reach the client.
func TestSubscribeGoSDKUpstream(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		stateless bool
		protocol  string
	}{{false, "2025-11-25"}, {true, "2025-11-25"}, {false, StatelessProtocol}, {true, StatelessProtocol}} {
		t.Run(fmt.Sprintf("upstream stateless=%v client %s", tc.stateless, tc.protocol), func(t *testing.T) {
			env := startGateway(t, []gateway.UpstreamConfig{{Domain: "subs", URL: goSubscribeUpstream(t, tc.stateless)}}, Exposure{Mode: ExposeMeta})
			c := connectSurfaceClient(t, env.srv, "http", tc.protocol)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			uri := "toolscout://subs/test://watched"
			waitFor(t, "the resource", func() bool {
				rl, err := c.cs.ListResources(ctx, nil)
				return err == nil && len(rl.Resources) > 0
			})
			if err := c.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
				t.Fatalf("subscribe: %v", err)
			}
			if res := call(t, c.cs, ExecuteTool, map[string]any{"tool_name": "subs__touch"}); res.IsError {
				t.Fatalf("touch: %v", text(res))
			}
			select {
			case got := <-c.updated:
				if got != uri {
					t.Errorf("notifications/resources/updated for %s, want %s", got, uri)
				}
			case <-ctx.Done():
				t.Fatal("no notifications/resources/updated")
			}
		})
	}
}

// TestClientRequestsTypeScript: the TypeScript SDK's client, through
// toolscout over stdio and over HTTP, is asked by the everything server
// (over stdio) for a sample, a form and its roots, and gets the progress
// and log messages of its calls, as it would directly.
func TestClientRequestsTypeScript(t *testing.T) {
	t.Parallel()
	script, _ := filepath.Abs(filepath.Join("testdata", "asking_client.mjs"))
	if _, err := exec.LookPath("node"); err != nil {
		needNodeModules(t, "node is not installed")
	}
	if _, err := os.Stat(filepath.Join("..", "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		needNodeModules(t, "npm packages are missing: run npm ci (make test does)")
	}
	// A gateway and an everything server for each transport (the
	// everything server logs "Roots updated" once per session), one node
	// process for both clients, over stdio first, then over HTTP: a node
	// start with the SDK loaded is most of what a client costs.
	transports := []string{"stdio", "http"}
	viaStdio := startGateway(t, []gateway.UpstreamConfig{{Domain: "everything", Command: npmBin(t, "mcp-server-everything")}}, Exposure{Mode: ExposeMeta})
	viaHTTP := startGateway(t, []gateway.UpstreamConfig{{Domain: "everything", Command: npmBin(t, "mcp-server-everything")}}, Exposure{Mode: ExposeMeta})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	report, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer report.Close()
	hs := httptest.NewServer(viaHTTP.srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	cmd := exec.CommandContext(ctx, "node", script, "stdio", hs.URL)
	toServer, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	fromClient, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = viaStdio.srv.ServeStdio(ctx, fromClient, toServer, nil)
		toServer.Close()
	}()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	type seen struct {
		Asked    []string `json:"asked"`
		Progress []int    `json:"progress"`
		Logs     []struct {
			Logger string `json:"logger"`
			Data   any    `json:"data"`
		} `json:"logs"`
		Results map[string]string `json:"results"`
	}
	var got []seen
	dec := json.NewDecoder(report)
	for range transports {
		var s seen
		if err := dec.Decode(&s); err != nil {
			cmd.Process.Kill()
			werr := cmd.Wait()
			t.Fatalf("the client reported %d of %d transports (%v, %v):\n%s", len(got), len(transports), err, werr, stderr.String())
		}
		got = append(got, s)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("node: %v\n%s", err, stderr.String())
	}
	for i, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			got := got[i]
			for key, want := range map[string]string{"elicitation": "ts user", "sampling": "sampled by ts", "roots": "file:///home/ts", "progress": "Long running operation completed"} {
				if !strings.Contains(got.Results[key], want) {
					t.Errorf("%s result = %q, want %q in it", key, got.Results[key], want)
				}
			}
			if len(got.Progress) != 3 {
				t.Errorf("progress = %v, want 3 notifications", got.Progress)
			}
			var rootsLog bool
			for _, l := range got.Logs {
				if !strings.HasPrefix(l.Logger, "everything") {
					t.Errorf("log message from logger %q, want it to name the server", l.Logger)
				}
				rootsLog = rootsLog || strings.HasPrefix(fmt.Sprint(l.Data), "Roots updated")
			}
			if !rootsLog {
				t.Errorf("log messages %v, want the roots update", got.Logs)
			}
		})
	}
}

// logUpstream is a go-sdk server over HTTP (stateless or not) whose tool
// "work" logs two messages, at debug and at warning.
func logUpstream(t *testing.T, stateless bool) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "logs", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "work", Description: "Work and log about it.", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for _, l := range []mcp.LoggingLevel{"debug", "warning"} {
				if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: l, Logger: "worker", Data: "at " + string(l)}); err != nil {
					return nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestLogMessagesPassThrough: the log messages a go-sdk server sends
// during a call reach the client of the call as its logging/setLevel
// lets them (the server sends none before its client sets a level:
// toolscout sets one for all), with the logger naming the server; a
// client that set no level gets none.
func TestLogMessagesPassThrough(t *testing.T) {
	t.Parallel()
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprintf("upstream stateless=%v", stateless), func(t *testing.T) {
			env := startGateway(t, []gateway.UpstreamConfig{{Domain: "logs", URL: logUpstream(t, stateless)}}, Exposure{Mode: ExposeMeta})
			warned := connectAsking(t, env.srv, "http", "warned", false)
			silent := connectAsking(t, env.srv, "http", "silent", false)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := warned.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "logs__work", func() bool { return env.hasTool("logs__work") })
			for _, c := range []*askingClient{warned, silent} {
				if res := call(t, c.cs, ExecuteTool, map[string]any{"tool_name": "logs__work"}); res.IsError {
					t.Fatalf("work: %s", text(res))
				}
			}
			var logs []*mcp.LoggingMessageParams
			for ctx.Err() == nil {
				warned.mu.Lock()
				logs = append(logs[:0], warned.logs...)
				warned.mu.Unlock()
				if len(logs) > 0 {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if len(logs) != 1 || logs[0].Level != "warning" || logs[0].Logger != "logs/worker" || logs[0].Data != "at warning" {
				t.Errorf("log messages of the client at info = %+v, want the warning alone, from logs/worker", logs)
			}
			silent.mu.Lock()
			defer silent.mu.Unlock()
			if len(silent.logs) != 0 {
				t.Errorf("a client that set no level got %d log messages", len(silent.logs))
			}
		})
	}
}

// TestRunCodeClientRequests: in code mode, what a program's tool asks of
// the client in the middle of its call (here an elicitation of the
// everything server's) goes to run_code's client; a tool whose server
// answers input-required (2026-07-28), which a program cannot wait for,
// throws an error that says so and names execute_tool.
func TestRunCodeClientRequests(t *testing.T) {
	t.Parallel()
	url, _ := inputUpstream(t)
	w := &lockedAudit{}
	env := startGatewayServer(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{
		{Domain: "everything", Command: npmBin(t, "mcp-server-everything")},
		{Domain: "input", URL: url},
	}}, Options{Expose: Exposure{Mode: ExposeCode}, Code: &Code{Runner: codeRunner(t)}, Audit: w})
	c := connectAsking(t, env.srv, "http", "alice", true)
	waitTool(t, c, "everything__trigger-elicitation-request")
	waitFor(t, "input__deploy", func() bool { return env.hasTool("input__deploy") })

	ans := codeAnswer(t, c.cs, `const r = await tools.everything["trigger-elicitation-request"]({}); return JSON.stringify(r)`)
	if ans.Error != nil || !strings.Contains(string(ans.Result), "user of alice") {
		t.Errorf("a program's elicitation = %s %+v, want alice's answer", ans.Result, ans.Error)
	}
	ans = codeAnswer(t, c.cs, `await tools.input.deploy({})`)
	if ans.Error == nil || ans.Error.Kind != codemode.KindTool || !strings.Contains(ans.Error.Message, "input__deploy needs input") || !strings.Contains(ans.Error.Message, "execute_tool") {
		t.Errorf("a program's input-required tool = %+v, want the error that says run_code cannot ask", ans.Error)
	}
	if w.count(`"error":"input_required"`) != 1 {
		t.Errorf("audit trail: %s, want one input_required call", w.String())
	}
}

// TestClientRequestsStdioTwoCallers: over stdio nothing says which call
// an upstream's request belongs to, so while calls of two clients run on
// the one connection a request is refused with a reason, never sent to
// the wrong client; alone, each client's call is answered by it. A
// direct call (eager mode) is routed as execute_tool is.
func TestClientRequestsStdioTwoCallers(t *testing.T) {
	t.Parallel()
	env := startGateway(t, []gateway.UpstreamConfig{{Domain: "everything", Command: npmBin(t, "mcp-server-everything")}}, Exposure{Mode: ExposeEager})
	alice := connectAsking(t, env.srv, "memory", "alice", true)
	bob := connectAsking(t, env.srv, "memory", "bob", true)
	waitTool(t, alice, "everything__trigger-elicitation-request")
	// alice's client holds its answer until bob's call has run.
	asked, release := make(chan struct{}), make(chan struct{})
	alice.cs.Close()
	held := &askingClient{name: "alice"}
	o := held.options(true)
	o.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		close(asked)
		<-release
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "user of alice", "check": true}}, nil
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := env.srv.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	held.cs, err = mcp.NewClient(&mcp.Implementation{Name: "alice", Version: "1"}, o).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer held.cs.Close()

	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := held.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "everything__trigger-elicitation-request", Arguments: map[string]any{}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	select {
	case <-asked:
	case res := <-done:
		t.Fatalf("alice's call ended before she was asked: %v", text(res))
	case <-time.After(time.Minute):
		t.Fatal("alice was not asked")
	}
	res := call(t, bob.cs, "everything__trigger-elicitation-request", map[string]any{})
	if !res.IsError || !strings.Contains(text(res), "calls of several clients are running") {
		t.Errorf("bob's call while alice's runs = %q, want the refusal saying why", text(res))
	}
	if len(bob.asked) != 0 {
		t.Errorf("bob was asked %v during alice's call", bob.asked)
	}
	close(release)
	if res := <-done; res == nil || res.IsError || !strings.Contains(text(res), "user of alice") {
		t.Errorf("alice's call = %v, want her answer", res)
	}
	res = call(t, bob.cs, "everything__trigger-elicitation-request", map[string]any{})
	if res.IsError || !strings.Contains(text(res), "user of bob") {
		t.Errorf("bob's call alone = %q, want his answer", text(res))
	}
}

// TestCancellationReachesUpstream: a client that cancels its call (here
// by its context) ends the call on the upstream too.
func TestCancellationReachesUpstream(t *testing.T) {
	t.Parallel()
	started, stopped := make(chan struct{}, 1), make(chan struct{}, 1)
	s := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "wait", Description: "Wait until cancelled.", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case started <- struct{}{}:
			default:
			}
			select {
			case <-ctx.Done():
				stopped <- struct{}{}
				return nil, ctx.Err()
			case <-time.After(time.Minute):
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "not cancelled"}}}, nil
			}
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	env := startGateway(t, []gateway.UpstreamConfig{{Domain: "slow", URL: hs.URL}}, Exposure{Mode: ExposeMeta})
	waitFor(t, "slow__wait", func() bool { return env.hasTool("slow__wait") })
	// The client cancels once the call is running upstream: a cancel
	// after a fixed delay (200 ms, before) came first once on a loaded
	// machine, before toolscout had sent the call on, and then no
	// upstream call ran to be stopped.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := env.cs.CallTool(ctx, &mcp.CallToolParams{Name: ExecuteTool, Arguments: map[string]any{"tool_name": "slow__wait"}})
		errc <- err
	}()
	select {
	case <-started:
	case err := <-errc:
		t.Fatalf("the call ended (%v) before it reached the upstream", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not reach the upstream in 30 s")
	}
	cancel()
	if err := <-errc; err == nil {
		t.Error("a cancelled call answered")
	}
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Error("the upstream's call went on after the client cancelled")
	}
}

// TestClientRequestsRedacted: a secret toolscout knows (a configured
// header's value, say) that an upstream puts in a request to the client
// reaches the client replaced, as in the upstream's results.
func TestClientRequestsRedacted(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-value-0123456789"
	s := mcp.NewServer(&mcp.Implementation{Name: "leaky", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "ask", Description: "Ask the user.", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "your token is " + secret, RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}})
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	env := startGatewayServer(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{{Domain: "leaky", URL: hs.URL}}, Redactor: redact.New(secret)}, Options{Expose: Exposure{Mode: ExposeMeta}})
	var got []string
	c := &askingClient{name: "alice"}
	o := c.options(true)
	o.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		got = append(got, req.Params.Message)
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := env.srv.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "alice", Version: "1"}, o).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	waitFor(t, "leaky__ask", func() bool { return env.hasTool("leaky__ask") })
	if res := call(t, cs, ExecuteTool, map[string]any{"tool_name": "leaky__ask"}); res.IsError || text(res) != "decline" {
		t.Fatalf("ask = %q", text(res))
	}
	if len(got) != 1 || strings.Contains(got[0], secret) || !strings.Contains(got[0], redact.Marker) {
		t.Errorf("the client was asked %q, want the secret replaced", got)
	}
}

// TestPromptClientRequests: what an upstream asks of its client while it
// answers prompts/get (an elicitation, here) goes to the client that
// asked for the prompt, as during a tool call.
func TestPromptClientRequests(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "asks", Version: "1"}, nil)
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greet the user by the name they give."},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?", RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}})
			if err != nil {
				return nil, err
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: fmt.Sprintf("Say hello to %v.", res.Content["name"])}}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	env := startGateway(t, []gateway.UpstreamConfig{{Domain: "asks", URL: hs.URL}}, Exposure{Mode: ExposeMeta})
	for _, transport := range []string{"memory", "http"} {
		t.Run(transport, func(t *testing.T) {
			c := connectAsking(t, env.srv, transport, "alice", true)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var gp *mcp.GetPromptResult
			waitFor(t, "the prompt", func() bool {
				var err error
				gp, err = c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "asks__greet"})
				return err == nil
			})
			if len(gp.Messages) != 1 || gp.Messages[0].Content.(*mcp.TextContent).Text != "Say hello to user of alice." {
				t.Errorf("prompts/get = %+v, want the prompt made with alice's answer", gp.Messages)
			}
		})
	}
}

// TestClientRequestsNewProtocolClient: a client of 2026-07-28 (the
// go-sdk's default, which cannot be asked in the middle of a call) calls
// the everything server's tools that elicit, sample and ask for roots
// (a 2025-11-25 server, over stdio): toolscout hands it each request as
// an input-required result, and its retry answers the server, which
// then finishes its call.
func TestClientRequestsNewProtocolClient(t *testing.T) {
	t.Parallel()
	env := startGateway(t, []gateway.UpstreamConfig{{Domain: "everything", Command: npmBin(t, "mcp-server-everything")}}, Exposure{Mode: ExposeMeta})
	for _, transport := range []string{"memory", "http"} {
		t.Run(transport, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c := &askingClient{name: "nova"}
			client := mcp.NewClient(&mcp.Implementation{Name: "nova", Version: "1"}, c.options(true))
			client.AddRoots(&mcp.Root{URI: "file:///home/nova", Name: "nova's folder"})
			var tr mcp.Transport
			if transport == "memory" {
				st, ct := mcp.NewInMemoryTransports()
				ss, err := env.srv.MCP().Connect(ctx, st, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer ss.Close()
				tr = ct
			} else {
				hs := httptest.NewServer(env.srv.HTTPHandler(HTTPOptions{}))
				defer hs.Close()
				tr = &mcp.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1}
			}
			cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: StatelessProtocol})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			c.cs = cs
			waitTool(t, c, "everything__trigger-elicitation-request")
			for tool, want := range map[string]string{
				"everything__trigger-elicitation-request": "user of nova",
				"everything__trigger-sampling-request":    "sampled by nova",
				"everything__get-roots-list":              "file:///home/nova",
			} {
				args := map[string]any{}
				if strings.Contains(tool, "sampling") {
					args = map[string]any{"prompt": "hi", "maxTokens": 10}
				}
				res := call(t, cs, ExecuteTool, map[string]any{"tool_name": tool, "arguments": args})
				if res.IsError || !strings.Contains(text(res), want) {
					t.Errorf("%s = %q, want %q in it", tool, text(res), want)
				}
			}
		})
	}
}

// TestBridgeRefusals: a client of 2026-07-28 without elicitation is
// refused for it as the go-sdk refuses a server directly; a retry whose
// requestState names no waiting call is an error that says what to do.
// On the package's gateway to the reference servers (referenceGateway):
// the refused elicitation changes nothing there.
func TestBridgeRefusals(t *testing.T) {
	t.Parallel()
	env := referenceGateway(t, Exposure{Mode: ExposeMeta})
	full := connectAsking(t, env.srv, "memory", "full", true)
	waitTool(t, full, "everything__trigger-elicitation-request")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := env.srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	bare, err := mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: StatelessProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	res := call(t, bare, ExecuteTool, map[string]any{"tool_name": "everything__trigger-elicitation-request"})
	if !res.IsError || !strings.Contains(text(res), "client does not support elicitation") {
		t.Errorf("a 2026-07-28 client without elicitation = %q, want the refusal", text(res))
	}
	res, err = bare.CallTool(ctx, &mcp.CallToolParams{Name: ExecuteTool, Arguments: map[string]any{"tool_name": "everything__trigger-elicitation-request"},
		RequestState: "toolscout-bridge:nothing.here", InputResponses: mcp.InputResponseMap{"toolscout": &mcp.ElicitResult{Action: "accept"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(text(res), "names no call") || !strings.Contains(text(res), "call the tool again") {
		t.Errorf("a retry of no call = %q, want the error saying to call again", text(res))
	}
}
