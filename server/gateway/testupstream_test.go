package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
)

// The gateway's own tests run a real stdio MCP server: this test binary,
// started again by the gateway with upstreamEnvVar set, serving a go-sdk
// server on its stdin and stdout (TestMain). It is a real process that
// the gateway starts, lists, calls, restarts and stops, as it does an
// npm server, but it starts in milliseconds and does what a test asks:
//
//   - tools: echo {text}; crash (the process exits mid-call); slow {ms};
//     fail (a JSON-RPC error); add_tool {name} (announces
//     tools/list_changed); touch {uri} (notifications/resources/updated);
//     add_prompt {name} (prompts/list_changed); big {n, tail} (n
//     bytes of text, then tail); ask, elicit, roots and progress (what a server asks of its client
//     in a call, and tells it);
//   - prompts "greet" {name}, "ask" (which asks its client to sample),
//     "crash" and "slow"; a resource test://hello; completions; a tool
//     "log" that logs to its client;
//   - with upstreamBareEnv, one tool only (newBareServer);
//   - upstreamStateEnv names a folder where each start appends a line to
//     "starts" (how many times it was started), and whose file "desc",
//     when there, is echo's description (a definition that changes
//     across restarts), and where slow leaves a file "slow" when it
//     begins; upstreamDelayEnv delays its start, in ms.
const (
	upstreamEnvVar   = "TOOLSCOUT_GATEWAY_TEST_UPSTREAM"
	upstreamStateEnv = "TOOLSCOUT_GATEWAY_TEST_STATE"
	upstreamDelayEnv = "TOOLSCOUT_GATEWAY_TEST_DELAY_MS"
	// upstreamBannerEnv is a line the server prints on stdout before it
	// serves (not JSON-RPC, as some servers do).
	upstreamBannerEnv = "TOOLSCOUT_GATEWAY_TEST_BANNER"
	// upstreamBareEnv makes a server of tools only: no prompts,
	// resources, subscriptions or completions.
	upstreamBareEnv = "TOOLSCOUT_GATEWAY_TEST_BARE"
)

func TestMain(m *testing.M) {
	if os.Getenv(upstreamEnvVar) != "" {
		if err := serveTestUpstream(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "test upstream:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveTestUpstream serves the test upstream on stdin and stdout.
func serveTestUpstream(ctx context.Context) error {
	if ms, _ := strconv.Atoi(os.Getenv(upstreamDelayEnv)); ms > 0 {
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
	if b := os.Getenv(upstreamBannerEnv); b != "" {
		fmt.Println(b)
	}
	starts := 1
	desc := "Echoes the text it is given."
	if dir := os.Getenv(upstreamStateEnv); dir != "" {
		f, err := os.OpenFile(filepath.Join(dir, "starts"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		fmt.Fprintln(f, "start")
		f.Close()
		b, _ := os.ReadFile(filepath.Join(dir, "starts"))
		starts = strings.Count(string(b), "\n")
		if d, err := os.ReadFile(filepath.Join(dir, "desc")); err == nil {
			desc = strings.TrimSpace(string(d))
		}
	}
	if os.Getenv(upstreamBareEnv) != "" {
		return newBareServer().Run(ctx, &mcp.StdioTransport{})
	}
	return newTestServer(starts, desc).Run(ctx, &mcp.StdioTransport{})
}

// newTestServer returns the test upstream's server: its start number
// and echo's description.
func newTestServer(starts int, desc string) *mcp.Server {
	var s *mcp.Server
	s = mcp.NewServer(&mcp.Implementation{Name: "test-upstream", Title: "Test Upstream", Version: "1"}, &mcp.ServerOptions{
		Instructions:       "A test server. It echoes text and keeps notes.",
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"alpha", "beta"}}}, nil
		},
	})
	obj := func(props map[string]any) map[string]any {
		if props == nil {
			props = map[string]any{}
		}
		return map[string]any{"type": "object", "properties": props}
	}
	str := map[string]any{"type": "string"}
	args := func(req *mcp.CallToolRequest) map[string]any {
		var a map[string]any
		_ = json.Unmarshal(req.Params.Arguments, &a)
		return a
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}, Meta: mcp.Meta{"upstream": "private"}}
	}
	s.AddTool(&mcp.Tool{Name: "echo", Description: desc, InputSchema: obj(map[string]any{"text": str})},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(fmt.Sprintf("echo: %v (start %d)", args(req)["text"], starts)), nil
		})
	s.AddTool(&mcp.Tool{Name: "crash", Description: "Exits the server in the middle of the call.", InputSchema: obj(nil)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "slow", Description: "Answers after ms milliseconds.", InputSchema: obj(map[string]any{"ms": map[string]any{"type": "number"}})},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if dir := os.Getenv(upstreamStateEnv); dir != "" {
				_ = os.WriteFile(filepath.Join(dir, "slow"), nil, 0o644)
			}
			ms, _ := args(req)["ms"].(float64)
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
				return text("slept"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	s.AddTool(&mcp.Tool{Name: "fail", Description: "Fails with a JSON-RPC error.", InputSchema: obj(nil)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: -32042, Message: "fail fails"}
		})
	s.AddTool(&mcp.Tool{Name: "add_tool", Description: "Adds a tool named name.", InputSchema: obj(map[string]any{"name": str})},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name, _ := args(req)["name"].(string)
			s.AddTool(&mcp.Tool{Name: name, Description: "Added while running.", InputSchema: obj(nil)},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return text("added " + name), nil
				})
			return text("added"), nil
		})
	s.AddTool(&mcp.Tool{Name: "touch", Description: "Says that the resource uri changed.", InputSchema: obj(map[string]any{"uri": str})},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			uri, _ := args(req)["uri"].(string)
			return text("touched"), s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
		})
	s.AddTool(&mcp.Tool{Name: "add_prompt", Description: "Adds a prompt named name.", InputSchema: obj(map[string]any{"name": str})},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name, _ := args(req)["name"].(string)
			s.AddPrompt(&mcp.Prompt{Name: name, Description: "Added while running."}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: name}}}}, nil
			})
			return text("added"), nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greets someone.", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Meta: mcp.Meta{"upstream": "private"}, Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["name"]}}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://hello", Name: "hello", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: fmt.Sprintf("hello from start %d", starts)}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "big", Description: "Answers n bytes, then tail.", InputSchema: obj(map[string]any{"n": map[string]any{"type": "number"}, "tail": str})},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n, _ := args(req)["n"].(float64)
			tail, _ := args(req)["tail"].(string)
			return text(strings.Repeat("b", int(n)) + tail), nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "ask", Description: "Asks the client to sample."},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "say hi"}}}})
			if err != nil {
				return nil, err
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: res.Content}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "crash", Description: "Exits the server while it is asked for."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			os.Exit(3)
			return nil, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "slow", Description: "Answers in a minute."},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			select {
			case <-time.After(time.Minute):
				return &mcp.GetPromptResult{}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	s.AddTool(&mcp.Tool{Name: "log", Description: "Logs a message to its client.", InputSchema: obj(nil)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Logger: "notes", Data: "a note"})
			return text("logged"), err
		})
	s.AddTool(&mcp.Tool{Name: "elicit", Description: "Asks its client for a name.", InputSchema: obj(nil)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?", RequestedSchema: obj(map[string]any{"name": str})})
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "elicitation failed: " + err.Error()}}}, nil
			}
			return text(fmt.Sprintf("%s: %v", res.Action, res.Content["name"])), nil
		})
	s.AddTool(&mcp.Tool{Name: "ask", Description: "Asks its client to sample, and answers what it said.", InputSchema: obj(nil)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "say hi"}}}})
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "sampling failed: " + err.Error()}}}, nil
			}
			said, _ := res.Content.(*mcp.TextContent)
			return text("the client said: " + said.Text), nil
		})
	s.AddTool(&mcp.Tool{Name: "roots", Description: "Lists its client's roots.", InputSchema: obj(nil)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "roots failed: " + err.Error()}}}, nil
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			return text("roots: " + strings.Join(uris, " ")), nil
		})
	s.AddTool(&mcp.Tool{Name: "progress", Description: "Tells its progress twice.", InputSchema: obj(nil)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; i <= 2 && tok != nil; i++ {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 2, Message: fmt.Sprintf("step %d", i)}); err != nil {
					return nil, err
				}
			}
			return text(fmt.Sprintf("progress token given: %v", tok != nil)), nil
		})
	return s
}

// newBareServer returns a server of one tool, echo, and nothing else.
func newBareServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "bare"}}}, nil
	})
	return s
}

// testUpstream returns the config of a test upstream as domain, its
// state kept in dir ("" for none).
func testUpstream(t *testing.T, domain, dir string) UpstreamConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{upstreamEnvVar: "1"}
	if dir != "" {
		env[upstreamStateEnv] = dir
	}
	return UpstreamConfig{Domain: domain, Command: exe, Args: []string{"-test.run=^$"}, Env: env, ConnectTimeout: 60 * time.Second, Timeout: 60 * time.Second}
}

// startGateway starts a gateway with opts (restarts after 10 ms at
// first, unless opts says) and closes it when the test ends.
func startGateway(t *testing.T, opts Options) *Gateway {
	t.Helper()
	if opts.MinBackoff == 0 {
		opts.MinBackoff, opts.MaxBackoff = 10*time.Millisecond, 100*time.Millisecond
	}
	g := New(opts)
	ctx, cancel := context.WithCancel(context.Background())
	g.Start(ctx)
	t.Cleanup(func() {
		g.Close()
		cancel()
	})
	return g
}

// waitUntil waits until cond holds, looking again each time the gateway
// says its tools changed and every 20 ms; it fails the test after a
// minute (a bound against a hang, not a measure: it holds at once or
// within a few restarts).
func waitUntil(t *testing.T, g *Gateway, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(time.Minute)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-g.Changed():
		case <-tick.C:
		case <-deadline:
			t.Fatalf("waited a minute for %s", what)
		}
	}
}

// testTool returns the test server's tool name as Execute takes it.
func testTool(name string) *index.Tool {
	return &index.Tool{Domain: "test", Name: name, QualifiedName: index.QualifiedName("test", name)}
}

// recv receives from ch, failing the test after a minute (a bound
// against a hang when what the test waits for never comes).
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("waited a minute for %s", what)
		panic("unreachable")
	}
}

// call runs tool of domain through Execute.
func call(g *Gateway, domain, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	return g.Execute(context.Background(), nil, &index.Tool{Domain: domain, Name: tool, QualifiedName: index.QualifiedName(domain, tool)}, args)
}

// resultText returns the text of res's content.
func resultText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// toolNames returns the names of domain's tools in g.Specs, nil when
// domain has none.
func toolNames(g *Gateway, domain string) []string {
	for _, s := range g.Specs() {
		if s.Name == domain {
			names := []string{}
			for _, t := range s.Tools {
				names = append(names, t.Name)
			}
			return names
		}
	}
	return nil
}

// stateOf returns domain's state in g.Status.
func stateOf(g *Gateway, domain string) UpstreamStatus {
	for _, st := range g.Upstreams().Status() {
		if st.Domain == domain {
			return st
		}
	}
	return UpstreamStatus{}
}

// starts returns how many times the test upstream keeping its state in
// dir was started.
func starts(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "starts"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}
