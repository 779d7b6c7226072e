package progress

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// waitTool serves one tool over in-memory transports whose handler runs
// waits(ctx, req), and returns a client session whose progress
// notifications go to onProgress.
func waitTool(t *testing.T, waits func(ctx context.Context, req *mcp.CallToolRequest), onProgress func(*mcp.ProgressNotificationClientRequest)) *mcp.ClientSession {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "progress-test", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "wait", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx = WithCall(ctx, req)
		waits(ctx, req)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	})
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { onProgress(req) },
	})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestWaitTellsProgress: a request with a progress token that waits
// longer than noticeAfter gets progress notifications saying what it
// waits for, and its two waits make one rising series.
func TestWaitTellsProgress(t *testing.T) {
	first, second := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var got []*mcp.ProgressNotificationParams
	cs := waitTool(t, func(ctx context.Context, req *mcp.CallToolRequest) {
		log := slog.New(slog.DiscardHandler)
		if !Wait(ctx, log, nil, first, "a call waits", func() string { return "the index to load" }) {
			t.Error("the first wait = false, want true: its channel closed")
		}
		if !Wait(ctx, log, nil, second, "a call waits", func() string { return "upstream servers" }) {
			t.Error("the second wait = false, want true: its channel closed")
		}
	}, func(req *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, req.Params)
		switch len(got) {
		case 1:
			close(first) // the first wait was told: end it
		case 2:
			close(second)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait", Meta: mcp.Meta{"progressToken": "tok"}})
	if err != nil || res.IsError {
		t.Fatalf("CallTool = %v, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) < 2 {
		t.Fatalf("%d progress notifications, want 2 (one per wait)", len(got))
	}
	if got[0].ProgressToken != "tok" || got[0].Message != "the index to load" || got[1].Message != "upstream servers" {
		t.Errorf("notifications = %+v, %+v; want token tok and each wait's message", got[0], got[1])
	}
	if got[1].Progress <= got[0].Progress {
		t.Errorf("progress went %v then %v: one request's series must rise", got[0].Progress, got[1].Progress)
	}
}

// lines is a slog handler's output that signals each line written.
type lines struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	select {
	case l.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestWaitLogsWithoutToken: without a progress token a long wait is
// logged with its label and what it waits for, and its end too; a wait
// whose channel is closed already returns at once, silently.
func TestWaitLogsWithoutToken(t *testing.T) {
	out := &lines{wrote: make(chan struct{}, 1)}
	log := slog.New(slog.NewTextHandler(out, nil))
	closed := make(chan struct{})
	close(closed)
	if !Wait(context.Background(), log, nil, closed, "x", func() string { return "y" }) || out.String() != "" {
		t.Fatalf("a wait on a closed channel logged %q or returned false", out.String())
	}
	ready := make(chan struct{})
	done := make(chan bool)
	go func() {
		done <- Wait(context.Background(), log, nil, ready, "tools/list waits", func() string { return "the index to load" })
	}()
	select {
	case <-out.wrote:
	case <-time.After(30 * time.Second):
		t.Fatal("no log line after 30 s of waiting")
	}
	close(ready)
	if !<-done {
		t.Error("Wait = false after its channel closed, want true")
	}
	s := out.String()
	for _, want := range []string{"tools/list waits", "the index to load", "done waiting"} {
		if !strings.Contains(s, want) {
			t.Errorf("log %q does not say %q", s, want)
		}
	}
}

// TestWaitGivesUp: a wait whose context ends reports false, and a
// deadline that passes is logged with what it waited for.
func TestWaitGivesUp(t *testing.T) {
	out := &lines{wrote: make(chan struct{}, 1)}
	log := slog.New(slog.NewTextHandler(out, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if Wait(ctx, log, nil, make(chan struct{}), "a call waits", func() string { return "server fake" }) {
		t.Fatal("Wait = true, want false: the channel never closed")
	}
	if s := out.String(); !strings.Contains(s, "stopped waiting") || !strings.Contains(s, "server fake") {
		t.Errorf("log = %q, want it to say it stopped waiting for server fake", s)
	}
}

// TestWithCallKeepsTheFirst: the waits of one request report to the
// request that came in first, however often WithCall is called.
func TestWithCallKeepsTheFirst(t *testing.T) {
	a, b := &mcp.CallToolRequest{}, &mcp.CallToolRequest{}
	ctx := WithCall(WithCall(context.Background(), a), b)
	c, ok := ctx.Value(callKey{}).(*clientCall)
	if !ok || c.req != a {
		t.Errorf("WithCall(WithCall(ctx, a), b) reports to %v, want a", c)
	}
}
