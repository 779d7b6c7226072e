package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The two protocol generations the clients speak.
const (
	stateless = "2026-07-28" // no session: any replica answers any request
	legacy    = "2025-11-25" // a session, pinned to its replica
)

// protocols lists them in the order of the report.
var protocols = []string{stateless, legacy}

// tally is what one client (then, summed, one protocol) saw in a phase.
type tally struct {
	requests    int             // answered, at the first attempt or the retry
	retried     int             // of those, answered at the retry
	firstFailed int             // failed at the first attempt
	failed      int             // failed at the retry too
	wrong       int             // answered, but not as expected
	connects    int             // sessions connected (the first one included)
	lat         []time.Duration // of the answered: first attempt to answer
	errors      []string        // the first few failures and wrong answers
}

func (t *tally) add(o *tally) {
	t.requests += o.requests
	t.retried += o.retried
	t.firstFailed += o.firstFailed
	t.failed += o.failed
	t.wrong += o.wrong
	t.connects += o.connects
	t.lat = append(t.lat, o.lat...)
	for _, e := range o.errors {
		t.note("%s", e)
	}
}

// note keeps an error's text, at most 5 per tally.
func (t *tally) note(format string, args ...any) {
	if len(t.errors) < 5 {
		t.errors = append(t.errors, fmt.Sprintf(format, args...))
	}
}

// loss is a session (or a stateless client's calls) that failed and came
// back: when the first failure was seen and when a call succeeded again.
type loss struct {
	replica           string // where the session lived ("" for stateless)
	failed, recovered time.Time
}

// recorder wraps a client's HTTP transport and notes which replica
// answered each request (HAProxy's replicaHeader): per session, and for
// requests without a session.
type recorder struct {
	base http.RoundTripper

	mu        sync.Mutex
	sessions  map[string]string // Mcp-Session-Id → the replica that opened it
	served    map[string]int    // answered POSTs by replica
	violation []string          // a session's request answered by another replica
}

func newRecorder(base http.RoundTripper) *recorder {
	return &recorder{base: base, sessions: map[string]string{}, served: map[string]int{}}
}

// RoundTrip implements http.RoundTripper.
func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost || resp.StatusCode/100 != 2 {
		return resp, err
	}
	rep := resp.Header.Get(replicaHeader)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.served[rep]++
	if sid := req.Header.Get("Mcp-Session-Id"); sid != "" {
		if was, ok := r.sessions[sid]; ok && was != rep {
			r.violation = append(r.violation, fmt.Sprintf("session %s opened on %s, answered by %s", sid, was, rep))
		}
	} else if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		r.sessions[sid] = rep
	}
	return resp, err
}

// sessionReplica returns the replica that opened a session.
func (r *recorder) sessionReplica(sid string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sessions[sid]
}

// client is one MCP client of the load: a go-sdk session at one protocol
// version through the load balancer, running tasks one after another.
type client struct {
	proto   string
	url     string
	hc      *http.Client
	rec     *recorder
	timeout time.Duration // per request
	answers *answers

	cs *mcp.ClientSession
	t  tally

	mu      sync.Mutex
	replica string // the replica of the open legacy session
	losses  []loss
	lost    *loss // a failure not yet recovered from
}

func newClient(proto, url string, base http.RoundTripper, timeout time.Duration, a *answers) *client {
	rec := newRecorder(base)
	return &client{proto: proto, url: url, rec: rec, hc: &http.Client{Transport: rec}, timeout: timeout, answers: a}
}

// connect opens a session (2025-11-25: initialize; 2026-07-28:
// server/discover) and checks that it speaks the client's protocol: the
// go-sdk falls back to initialize when server/discover fails for any
// reason, which would turn a stateless client into a pinned one.
func (c *client) connect(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cl := mcp.NewClient(&mcp.Implementation{Name: "toolscout-clustertest", Version: "1"}, nil)
	cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: c.url, HTTPClient: c.hc},
		&mcp.ClientSessionOptions{ProtocolVersion: c.proto})
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	if got := cs.InitializeResult().ProtocolVersion; got != c.proto {
		cs.Close()
		return fmt.Errorf("connected at protocol %s, want %s", got, c.proto)
	}
	c.t.connects++
	c.cs = cs
	c.mu.Lock()
	c.replica = c.rec.sessionReplica(cs.ID())
	c.mu.Unlock()
	return nil
}

// close ends the session (a 2025-11-25 session: DELETE).
func (c *client) close() {
	if c.cs != nil {
		c.cs.Close()
		c.cs = nil
	}
}

// sessionReplica returns the replica that holds the client's session
// ("" for a stateless client).
func (c *client) sessionReplica() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.replica
}

// run runs tasks until stop is closed, from query number first on.
func (c *client) run(ctx context.Context, stop <-chan struct{}, queries []string, first int) {
	for i := first; ; i++ {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		default:
		}
		c.task(ctx, queries[i%len(queries)])
	}
}

// task is what an agent does with toolscout: discover_tools for a
// request, get_tool_schema of the best tool, execute_tool with the
// schema's first example. A catalog's tools have no server to run on, so
// execute_tool's expected answer is the tool error that says so.
func (c *client) task(ctx context.Context, query string) {
	res, err := c.call(ctx, "discover_tools", map[string]any{"query": query, "limit": 5})
	if err != nil {
		return
	}
	var disc struct {
		Results []struct {
			Name string `json:"name"`
		} `json:"results"`
	}
	if err := decode(res, &disc); err != nil || len(disc.Results) == 0 {
		c.wrong("discover_tools %q: no results (%v): %s", query, err, text(res))
		return
	}
	top := disc.Results[0].Name
	c.answers.add(query, top)
	if res, err = c.call(ctx, "get_tool_schema", map[string]any{"tool_name": top}); err != nil {
		return
	}
	var schema struct {
		Tools []struct {
			Name     string `json:"name"`
			Examples []struct {
				Arguments map[string]any `json:"arguments"`
			} `json:"examples"`
		} `json:"tools"`
	}
	if err := decode(res, &schema); err != nil || len(schema.Tools) != 1 || schema.Tools[0].Name != top {
		c.wrong("get_tool_schema %s: not its schema (%v): %s", top, err, text(res))
		return
	}
	args := map[string]any{}
	if ex := schema.Tools[0].Examples; len(ex) > 0 {
		args = ex[0].Arguments
	}
	if res, err = c.call(ctx, "execute_tool", map[string]any{"tool_name": top, "arguments": args}); err != nil {
		return
	}
	if !res.IsError || !strings.Contains(text(res), "cannot run here") {
		c.wrong("execute_tool %s: want the catalog tool's error, got isError %v: %s", top, res.IsError, text(res))
	}
}

func (c *client) wrong(format string, args ...any) {
	c.t.wrong++
	c.t.note(format, args...)
}

// retryPause is how long a client waits before it tries a failed call
// again.
const retryPause = 250 * time.Millisecond

// call calls a tool; a call that fails is tried once more, after
// retryPause, on a new session when the old one is gone (a 2025-11-25
// session whose replica went away: initialize again) or broken.
func (c *client) call(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
	start := time.Now()
	res, err := c.attempt(ctx, name, args)
	if err != nil {
		c.t.firstFailed++
		c.t.note("%s %s (first attempt, session on %q): %v", c.proto, name, c.sessionReplica(), err)
		c.mu.Lock()
		if c.lost == nil {
			c.lost = &loss{replica: c.replica, failed: time.Now()}
		}
		c.mu.Unlock()
		if c.proto == legacy || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) {
			c.close()
		}
		// As a client does, the retry waits a moment: at once, it could
		// land in the same instant on the replica that is closing its
		// idle connections to HAProxy (SIGTERM), which HAProxy cannot
		// retry for it: a 502, 1 run in 5 of make test.
		select {
		case <-ctx.Done():
		case <-time.After(retryPause):
		}
		if res, err = c.attempt(ctx, name, args); err != nil {
			c.t.failed++
			c.t.note("%s %s (retry): %v", c.proto, name, err)
			return nil, err
		}
		c.t.retried++
	}
	c.mu.Lock()
	if c.lost != nil {
		c.lost.recovered = time.Now()
		c.losses = append(c.losses, *c.lost)
		c.lost = nil
	}
	c.mu.Unlock()
	c.t.requests++
	c.t.lat = append(c.t.lat, time.Since(start))
	return res, nil
}

// attempt makes one call within the client's timeout, connecting first
// when the client has no session.
func (c *client) attempt(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
	if c.cs == nil {
		if err := c.connect(ctx); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	return c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

// decode reads a tool result's structuredContent into v.
func decode(res *mcp.CallToolResult, v any) error {
	if res.IsError {
		return fmt.Errorf("tool error")
	}
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// text returns a result's first text content, cut to 300 bytes.
func text(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			if len(t.Text) > 300 {
				return t.Text[:300] + "..."
			}
			return t.Text
		}
	}
	return ""
}

// answers collects each query's best tool, as every replica answered it:
// replicas of one index must agree.
type answers struct {
	mu  sync.Mutex
	top map[string]map[string]bool // query → best tools seen
}

func newAnswers() *answers { return &answers{top: map[string]map[string]bool{}} }

func (a *answers) add(query, tool string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.top[query] == nil {
		a.top[query] = map[string]bool{}
	}
	a.top[query][tool] = true
}

// disagreements lists the queries answered with more than one best tool.
func (a *answers) disagreements() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for q, tools := range a.top {
		if len(tools) > 1 {
			out = append(out, fmt.Sprintf("%q: %s", q, strings.Join(slices.Sorted(maps.Keys(tools)), ", ")))
		}
	}
	slices.Sort(out)
	return out
}

// percentile returns the p-th percentile (0 < p ≤ 100) of sorted
// durations, nearest rank.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(float64(len(sorted))*p/100)) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
