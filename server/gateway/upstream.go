package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/redact"
	txt "github.com/toolscout/toolscout/internal/text"
)

// UpstreamConfig is one upstream MCP server, as an mcpServers entry
// describes it (already validated, ${VAR}s expanded).
type UpstreamConfig struct {
	// Domain is the domain name its tools are listed under.
	Domain string
	// Command, Args, Env and Cwd start a stdio server.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// URL and Headers reach a remote server. Transport is "" (Streamable
	// HTTP, then SSE when the server only speaks that), "http" or "sse".
	URL       string
	Headers   map[string]string
	Transport string
	// CallerHeaders, by caller name (the go-sdk token info's UserID that
	// toolscout's callers set), are sent instead of Headers (none of
	// which then go) with the tool calls that caller makes;
	// ForwardAuthorization sends the Authorization header of the
	// caller's own request in place of Headers' one. Neither
	// is the default: a caller's credential never leaves toolscout unless
	// the config says so (callerheaders.go).
	CallerHeaders        map[string]map[string]string
	ForwardAuthorization bool
	// CallerIdentity, when set (IdentityForward), runs each tool call on
	// a session of its caller's own, opened with the bearer token the
	// caller sent toolscout (IdentityExchange: that token exchanged, as
	// Exchange says, exchange.go); the shared session (Headers, Auth)
	// still lists. Never the default (percaller.go).
	CallerIdentity string
	// Exchange is where and as which client IdentityExchange exchanges
	// the callers' tokens (nil otherwise).
	Exchange *Exchange
	// Auth, when set, gives the bearer token of a remote server behind
	// OAuth (its entry's "auth": server/upauth); it goes in place of
	// Headers' Authorization.
	Auth TokenSource
	// Description describes the domain (default: derived from the server's
	// title, the first sentence of its instructions and the words its
	// tools share).
	Description string
	// Groups maps tool names to groups.
	Groups map[string]string
	// DisabledTools names tools to turn off: indexed, but not listed,
	// found (unless asked for) or run. DeprecatedTools marks tools as
	// deprecated, each with what to use instead ("" says only that).
	DisabledTools   []string
	DeprecatedTools map[string]string
	// Timeout bounds each tool call (60 s when zero).
	Timeout time.Duration
	// ConnectTimeout bounds starting, connecting and listing tools
	// (DefaultConnectTimeout when zero).
	ConnectTimeout time.Duration
}

// DefaultConnectTimeout is how long an upstream server gets to start,
// answer initialize and list its tools. A first `npx -y` start downloads
// the package: 3.6-4.7 s for the reference servers here (BENCHMARKS.md),
// 14.3 s on the machine issue 23 was filed from; the old 15 s left a
// server that needs 20 s never connected.
const DefaultConnectTimeout = 60 * time.Second

// upstreamProtocol is the protocol version toolscout asks stdio and SSE
// upstreams for: go-sdk's newer default sends server/discover first,
// which some stdio servers do not survive (go-sdk issue #1177).
const upstreamProtocol = "2025-11-25"

func (c *UpstreamConfig) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return 60 * time.Second
}

func (c *UpstreamConfig) connectTimeout() time.Duration {
	if c.ConnectTimeout > 0 {
		return c.ConnectTimeout
	}
	return DefaultConnectTimeout
}

// An attempt is one way to connect to an upstream: a transport and the
// protocol version to ask for ("": the go-sdk's newest, StatelessProtocol,
// which sends server/discover and falls back to initialize on a server of
// an older protocol).
type attempt struct {
	tr       mcp.Transport
	protocol string
	// retry is set on an attempt that repeats the one before it with an
	// older protocol: it is made only when that one got an answer (a
	// server that breaks the connection over server/discover), not when
	// it could not reach the server.
	retry bool
}

// attempts returns the ways to connect, in order. A stdio server gets a
// minimal environment (childEnv), and what it prints on stdout that is
// not JSON-RPC is skipped and logged to log, and a message over limit
// bytes answered with an error (frameGuard). A Streamable HTTP server is
// asked for the stateless protocol first (a server of only that protocol
// refuses an initialize of 2025-11-25), then, should that fail, for
// 2025-11-25.
func (c *UpstreamConfig) attempts(rt *routes, log *slog.Logger, limit int, secrets *redact.Redactor) []attempt {
	if c.Command != "" {
		cmd := exec.Command(c.Command, c.Args...)
		cmd.Dir = c.Cwd
		cmd.Env = childEnv(os.Environ(), c.Env)
		// The server's stderr is not ours to print on: its tail is kept
		// for the error when it exits before answering (stderrtail.go).
		tail := &stderrTail{done: make(chan struct{})}
		ownGroup(cmd)
		return []attempt{{tr: &commandTransport{cmd: cmd, terminate: stopGrace, limit: limit, log: log, stderr: tail, secrets: secrets}, protocol: upstreamProtocol}}
	}
	hc := &http.Client{Transport: headerTransport{rt: rt, headers: c.Headers, auth: c.Auth, base: http.DefaultTransport, secrets: secrets}}
	streamable := &mcp.StreamableClientTransport{Endpoint: c.URL, HTTPClient: hc, MaxRetries: 2}
	streamed := []attempt{{tr: streamable}, {tr: streamable, protocol: upstreamProtocol, retry: true}}
	sse := attempt{tr: &mcp.SSEClientTransport{Endpoint: c.URL, HTTPClient: hc}, protocol: upstreamProtocol}
	switch c.Transport {
	case "sse":
		return []attempt{sse}
	case "http":
		return streamed
	}
	return append(streamed, sse)
}

// headerTransport adds configured headers to every request, and turns
// an answer that refuses them (401, 403) into a refusedError, which the
// gateway words for the agent (unauthorized): the go-sdk says only
// "Unauthorized", without the server. Of the answer's WWW-Authenticate
// it keeps only what keptChallenges does: never free text, nor anything
// of the headers sent (secrets knows the configured ones).
type headerTransport struct {
	// rt marks the requests and notifications on the response stream of
	// a call's POST with the call (tagger.go); nil: none.
	rt      *routes
	headers map[string]string
	// auth gives the bearer token (nil: none); a 401 to it is retried
	// once with a refreshed one.
	auth    TokenSource
	base    http.RoundTripper
	secrets *redact.Redactor
}

// TokenSource gives an upstream's OAuth access token (server/upauth's
// Source): Token the one to send (refreshed before it expires), Refresh
// the one to retry with after the upstream refused stale. Their errors
// match ErrSignIn when the upstream needs a new sign-in.
type TokenSource interface {
	Token(ctx context.Context) (string, error)
	Refresh(ctx context.Context, stale string) (string, error)
}

// Challenger is a TokenSource that records an upstream's refusal of
// token (a 403 insufficient_scope, or a 401 that a refresh did not
// cure) for the next sign-in (server/upauth's Source: the scopes asked
// for, the protected resource metadata URL, the error code; no secret)
// and returns the error, matching ErrSignIn, that says which scopes and
// the command.
type Challenger interface {
	Challenged(ctx context.Context, token string, status int, errCode string, scopes []string, resourceMetadata string) error
}

// stepUpLimit is the error of a token source (server/upauth) whose
// upstream kept refusing the scopes it was signed in for: a new sign-in
// is not the advice.
type stepUpLimit interface{ StepUpLimit() bool }

// bearerChallenge returns re's first Bearer challenge (zero: none).
func bearerChallenge(re *refusedError) authChallenge {
	for _, c := range re.challenges {
		if strings.EqualFold(c.scheme, "Bearer") {
			return c
		}
	}
	return authChallenge{}
}

// ErrSignIn is wrapped by the errors of an upstream behind OAuth whose
// sign-in is missing or could not be refreshed: unavailable until
// `toolscout auth login SERVER`.
var ErrSignIn = errors.New("upstream sign-in needed")

// signInError is an upstream's OAuth token that could not be had.
type signInError struct{ err error }

func (e *signInError) Error() string { return e.err.Error() }
func (e *signInError) Unwrap() error { return e.err }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if h.auth == nil || callHeadersOf(r.Context()).only {
		return h.roundTrip(r, "")
	}
	tok, err := h.auth.Token(r.Context())
	if err != nil {
		return nil, &signInError{err}
	}
	resp, err := h.roundTrip(r, tok)
	var re *refusedError
	if errors.As(err, &re) && re.status == http.StatusForbidden {
		if c := bearerChallenge(re); c.errorCode == "insufficient_scope" {
			if ch, ok := h.auth.(Challenger); ok {
				return nil, &signInError{ch.Challenged(r.Context(), tok, re.status, c.errorCode, c.scopes, c.resourceMetadata)}
			}
		}
	}
	if !errors.As(err, &re) || re.status != http.StatusUnauthorized {
		return resp, err
	}
	// Refused: refresh (one at a time: the source's lock) and retry once
	// when the body can be sent again.
	fresh, ferr := h.auth.Refresh(r.Context(), tok)
	if ferr != nil {
		if ch, ok := h.auth.(Challenger); ok {
			c := bearerChallenge(re)
			ch.Challenged(r.Context(), tok, re.status, c.errorCode, c.scopes, c.resourceMetadata) // for the next sign-in; ferr says why
		}
		return nil, &signInError{ferr}
	}
	if r.Body != nil && r.GetBody == nil {
		return nil, err
	}
	r2 := r.Clone(r.Context())
	if r.GetBody != nil {
		if r2.Body, ferr = r.GetBody(); ferr != nil {
			return nil, err
		}
	}
	resp, err = h.roundTrip(r2, fresh)
	if errors.As(err, &re) && re.status == http.StatusUnauthorized {
		if a, ok := h.auth.(interface{ refusedAgain(*refusedError) error }); ok {
			return nil, a.refusedAgain(re)
		}
		if ch, ok := h.auth.(Challenger); ok {
			c := bearerChallenge(re)
			return nil, &signInError{ch.Challenged(r.Context(), fresh, re.status, c.errorCode, c.scopes, c.resourceMetadata)}
		}
		return nil, &signInError{fmt.Errorf("%w: its new token was refused too", ErrSignIn)}
	}
	return resp, err
}

// roundTrip sends r with the configured headers and the call's, and
// bearer (when not "") as its Authorization.
func (h headerTransport) roundTrip(r *http.Request, bearer string) (*http.Response, error) {
	call := callHeadersOf(r.Context())
	if bearer != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+bearer)
	}
	if len(h.headers) > 0 || len(call.headers) > 0 {
		r = r.Clone(r.Context())
		if !call.only { // a mapped caller sends its own headers alone
			for k, v := range h.headers {
				if bearer != "" && http.CanonicalHeaderKey(k) == "Authorization" {
					continue
				}
				r.Header.Set(k, v)
			}
		}
		for k, v := range call.headers {
			r.Header.Set(k, v)
		}
	}
	resp, err := h.base.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusOK && h.rt != nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		if route := routeOf(r.Context()); route != nil {
			resp.Body = newRouteTagger(h.rt, route, resp.Body)
		}
	}
	if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		resp.Body.Close() // free text: never read
		sent := make([]string, 0, len(h.headers)+len(call.headers)+1)
		if bearer != "" {
			sent = append(sent, bearer)
		}
		for _, v := range h.headers {
			sent = append(sent, v)
		}
		for _, v := range call.headers {
			sent = append(sent, v)
		}
		return nil, &refusedError{status: resp.StatusCode, challenges: keptChallenges(resp.Header.Values("WWW-Authenticate"), sent, h.secrets)}
	}
	return resp, err
}

// ErrUnauthorized is wrapped by the errors of a remote server that
// refused toolscout's credentials (HTTP 401 or 403), at connect (the
// status's Err) or at a call (Execute).
var ErrUnauthorized = errors.New("upstream server refused the credentials")

// refusedError is an upstream's 401 or 403, with what may be quoted of
// its WWW-Authenticate.
type refusedError struct {
	status     int
	challenges []authChallenge
}

func (e *refusedError) Error() string {
	return fmt.Sprintf("HTTP %d %s", e.status, http.StatusText(e.status))
}

// unauthorized words err for the agent when it holds domain's refusal
// of toolscout's credentials, and returns nil otherwise.
func unauthorized(domain string, err error) error {
	if xe := (*exchangeError)(nil); errors.As(err, &xe) {
		return classed(ErrUnauthorized, xe) // worded for the caller (exchange.go)
	}
	if se := (*signInError)(nil); errors.As(err, &se) {
		if lim := stepUpLimit(nil); errors.As(se.err, &lim) && lim.StepUpLimit() {
			return classed(ErrSignIn, fmt.Errorf("server %q is unavailable: %s; tools of other domains work", domain, se.err))
		}
		return classed(ErrSignIn, fmt.Errorf("server %q is unavailable: sign in again with toolscout auth login %s (%s); tools of other domains work", domain, domain, signInReason(se.err)))
	}
	var re *refusedError
	if !errors.As(err, &re) {
		return nil
	}
	challenge := ""
	if len(re.challenges) > 0 {
		parts := make([]string, len(re.challenges))
		for i, c := range re.challenges {
			parts[i] = c.String()
		}
		challenge = "; it asks for: " + strings.Join(parts, ", ")
	}
	return classed(ErrUnauthorized, fmt.Errorf("server %q refused toolscout's credentials (%v%s): the headers or header_files of its entry in the config are missing, wrong or expired; tools of other domains work", domain, re, challenge))
}

// signInReason is why a sign-in is needed, without the advice the
// source's error ends with (unauthorized gives it first).
func signInReason(err error) string {
	s := err.Error()
	if i := strings.Index(s, "; sign in again"); i >= 0 {
		s = s[:i]
	}
	return s
}

// toolSpecs converts an upstream's tools into catalog specs, cleaning what
// the SDK and the catalog would refuse. Tools that cannot be cleaned are
// skipped and reported, not the whole server; stale are the config's
// entries (groups, disabled_tools, deprecated_tools) for tools the server
// does not list: a typo in the config, not a tool skipped.
func toolSpecs(cfg *UpstreamConfig, tools []*mcp.Tool) (specs []index.ToolSpec, skipped, stale []string) {
	seen := map[string]bool{}
	for _, t := range tools {
		if t == nil || t.Name == "" || seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		if err := index.CheckToolName(t.Name); err != nil {
			skipped = append(skipped, err.Error())
			continue
		}
		in, err := cleanSchema(t.InputSchema)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: input schema %v", t.Name, err))
			continue
		}
		spec := index.ToolSpec{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: in}
		cfg.applyTo(&spec)
		if t.OutputSchema != nil {
			if out, err := cleanSchema(t.OutputSchema); err == nil {
				spec.OutputSchema = out
			}
		}
		if t.Annotations != nil {
			spec.Annotations, _ = json.Marshal(t.Annotations)
			if spec.Title == "" {
				spec.Title = t.Annotations.Title
			}
		}
		specs = append(specs, spec)
	}
	// An entry for a tool the server does not list is a typo in the
	// config, or a tool the server dropped: say so instead of ignoring it.
	for _, list := range []struct {
		key   string
		names []string
	}{{"groups", slices.Collect(maps.Keys(cfg.Groups))}, {"disabled_tools", cfg.DisabledTools}, {"deprecated_tools", slices.Collect(maps.Keys(cfg.DeprecatedTools))}} {
		var missing []string
		for _, name := range list.names {
			if !seen[name] {
				missing = append(missing, name)
			}
		}
		sort.Strings(missing)
		for _, name := range missing {
			msg := fmt.Sprintf("%s entry %q: the server has no such tool", list.key, name)
			if s := txt.Closest(name, slices.Sorted(maps.Keys(seen)), 1); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %q?)", s[0])
			}
			stale = append(stale, msg)
		}
	}
	return specs, skipped, stale
}

// applyTo sets what the config says of ts's tool: its group, and whether
// it is disabled or deprecated. What the server listed says nothing of
// these: this run's config decides, for tools kept from the last run too.
func (c *UpstreamConfig) applyTo(ts *index.ToolSpec) {
	ts.Group = strings.TrimSpace(c.Groups[ts.Name])
	ts.Enabled = nil
	if slices.Contains(c.DisabledTools, ts.Name) {
		ts.Enabled = new(bool)
	}
	ts.Deprecated = ""
	if msg, ok := c.DeprecatedTools[ts.Name]; ok {
		ts.Deprecated = index.Deprecation(strings.TrimSpace(msg))
		if ts.Deprecated == "" {
			ts.Deprecated = index.DeprecatedTrue
		}
	}
}

// cleanSchema returns an upstream's schema as a catalog object schema
// (index.NormalizeObjectSchema).
func cleanSchema(s any) (json.RawMessage, error) {
	if s == nil {
		return index.NormalizeObjectSchema(nil)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return index.NormalizeObjectSchema(raw)
}

// stopGrace is how long a stdio server gets to exit after its stdin is
// closed, and then after SIGTERM, before it (its process group) is
// signalled again: a session's servers are gone a second or two after it
// ends, and a CLI run with --config does not wait longer on servers that
// ignore the end of their input (the everything reference server does).
const stopGrace = time.Second

// MaxUpstreamMessage bounds one message from a stdio upstream server. The
// SDK's command transport caps it at 16 MiB and ends the session on a
// larger one: a 20 MB tool result broke that server's session until it was
// restarted. A message over this bound is dropped and its request answered
// with an error saying so (frameGuard); the session goes on.
const MaxUpstreamMessage = 64 << 20

// commandTransport is mcp.CommandTransport with a frame limit
// (Options.MaxMessage): it starts the command and speaks newline-delimited JSON-RPC
// over its stdin and stdout (lineConn, which copies no message).
type commandTransport struct {
	cmd       *exec.Cmd
	terminate time.Duration
	limit     int          // the largest message read whole
	log       *slog.Logger // for the lines on stdout that are skipped
	stderr    *stderrTail  // the last of what the server wrote on stderr
	secrets   *redact.Redactor
	// mark marks each request and notification read with the call it
	// belongs to (routes.markStdio); nil: none.
	mark func(*jsonrpc.Request)
}

func (t *commandTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	var stderrW *os.File
	if t.stderr != nil {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		t.cmd.Stderr, stderrW = w, w
		go t.stderr.readFrom(r)
	}
	err = t.cmd.Start()
	if stderrW != nil {
		stderrW.Close() // the child has its own copy: EOF when it exits
	}
	if err != nil {
		return nil, err
	}
	guard := &frameGuard{r: bufio.NewReaderSize(stdout, 64<<10), limit: t.limit, noise: &noiseLog{log: t.log}}
	// The session ends by closing stdin (childStdin), as the MCP stdio
	// transport says; the child's stdout stays open until it exits.
	return newLineConn(guard, &childStdin{WriteCloser: stdin, cmd: t.cmd, terminate: t.terminate}, t.secrets, t.mark), nil
}

// childStdin ends the server when the session closes: it closes the
// server's stdin, waits up to terminate for the server to exit (the MCP
// stdio shutdown), then sends SIGTERM to the server's process group
// (ownGroup), and SIGKILL when anything of it is left after terminate
// more. The group is signalled even when the server exited at once: what
// it started (npx's node, a wrapper's server) may outlive it.
type childStdin struct {
	io.WriteCloser
	cmd       *exec.Cmd
	terminate time.Duration
	once      sync.Once
	err       error
}

func (c *childStdin) Close() error {
	c.once.Do(func() { c.err = c.shutdown() })
	return c.err
}

// groupPoll is how often shutdown looks whether a signalled group is gone.
const groupPoll = 20 * time.Millisecond

func (c *childStdin) shutdown() error {
	var errs []error
	if err := c.WriteCloser.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing stdin: %w", err))
	}
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	exited := false
	var werr error
	select {
	case werr = <-done:
		exited = true
	case <-time.After(c.terminate):
	}
	if signalGroup(c.cmd, syscall.SIGTERM) {
		deadline := time.Now().Add(c.terminate)
		tick := time.NewTicker(groupPoll)
		for (!exited || groupAlive(c.cmd)) && time.Now().Before(deadline) {
			select {
			case werr = <-done:
				exited = true
			case <-tick.C:
			}
		}
		tick.Stop()
		if !exited || groupAlive(c.cmd) {
			signalGroup(c.cmd, syscall.SIGKILL)
		}
	}
	if !exited {
		select {
		case werr = <-done:
		case <-time.After(c.terminate):
			werr = errors.New("the server process did not exit")
		}
	}
	return errors.Join(append(errs, werr)...)
}

// frameGuard passes a server's newline-delimited messages through, except
// one longer than limit: it is dropped, and when its request ID can be
// found where JSON-RPC puts it (first, as the Go SDK writes responses, or
// last, as the TypeScript SDK does) an error response for that request
// takes its place, so the call fails with a clear error and the session
// goes on. Memory stays within limit plus a few kilobytes. Lines that are
// not JSON-RPC (a banner, log lines) are skipped and told to noise.
type frameGuard struct {
	r     *bufio.Reader
	limit int
	noise *noiseLog
	out   []byte
	err   error
}

func (f *frameGuard) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.next()
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	if len(f.out) == 0 {
		f.out = nil // a large line is not kept until the next one
	}
	return n, nil
}

// nextLine returns the next message, a line that the caller may keep: the
// guard does not reuse it.
func (f *frameGuard) nextLine() ([]byte, error) {
	for len(f.out) == 0 {
		if f.err != nil {
			return nil, f.err
		}
		f.next()
	}
	line := f.out
	f.out = nil
	return line, nil
}

// frameEdge is how much of the start and end of an oversized message is
// kept to find its request ID.
const frameEdge = 4 << 10

func (f *frameGuard) next() {
	var line lineBuf
	var head, tail []byte
	total, over := 0, false
	for {
		chunk, err := f.r.ReadSlice('\n')
		total += len(chunk)
		switch {
		case !over && total <= f.limit:
			line.add(chunk)
		case !over:
			over = true
			head = line.head(frameEdge)
			tail = line.tail(frameEdge, chunk)
			line = lineBuf{}
		default:
			tail = append(tail, chunk...)
			tail = append([]byte(nil), tail[max(0, len(tail)-frameEdge):]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			f.err = err
		}
		break
	}
	if !over {
		out := line.bytes()
		if msg := bytes.TrimSpace(out); len(msg) > 0 && !isJSONRPC(msg) {
			f.noise.skipped(msg)
			return
		}
		f.out = out
		return
	}
	id := frameID(head, tail)
	if id == nil {
		return // a notification, or an ID we cannot place: drop it
	}
	msg := fmt.Sprintf("the server's answer is %d bytes, over the %d toolscout accepts in one message (%d MiB)", total, f.limit, f.limit>>20)
	f.out, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32603, "message": msg}})
	f.out = append(f.out, '\n')
}

// lineBuf collects one line read in chunks. Appending to one slice would
// allocate about five times the line's size as it grows (a 1.25 growth
// factor), and keep up to twice it at the last copy; lineBuf copies the
// chunks into blocks that double up to lineBlockMax, and the line into
// one slice of its exact size at the end: twice its size in all.
type lineBuf struct {
	blocks [][]byte
	n      int
}

// lineBlockMax bounds a lineBuf block, and so the room left unused in
// the last one.
const lineBlockMax = 4 << 20

func (b *lineBuf) add(p []byte) {
	b.n += len(p)
	if k := len(b.blocks); k > 0 {
		last := b.blocks[k-1]
		m := min(cap(last)-len(last), len(p))
		b.blocks[k-1] = append(last, p[:m]...)
		p = p[m:]
	}
	if len(p) > 0 {
		blk := make([]byte, 0, max(len(p), min(b.n, lineBlockMax)))
		b.blocks = append(b.blocks, append(blk, p...))
	}
}

// bytes returns the line.
func (b *lineBuf) bytes() []byte {
	if len(b.blocks) <= 1 {
		if len(b.blocks) == 0 {
			return nil
		}
		return b.blocks[0]
	}
	out := make([]byte, 0, b.n)
	for _, blk := range b.blocks {
		out = append(out, blk...)
	}
	b.blocks = nil
	return out
}

// head returns a copy of the line's first n bytes.
func (b *lineBuf) head(n int) []byte {
	var out []byte
	for _, blk := range b.blocks {
		if len(out) == n {
			break
		}
		out = append(out, blk[:min(len(blk), n-len(out))]...)
	}
	return out
}

// tail returns a copy of the last n bytes of the line followed by more.
func (b *lineBuf) tail(n int, more []byte) []byte {
	out := append([]byte(nil), more[max(0, len(more)-n):]...)
	for i := len(b.blocks) - 1; i >= 0 && len(out) < n; i-- {
		blk := b.blocks[i]
		out = append(append([]byte(nil), blk[max(0, len(blk)-(n-len(out))):]...), out...)
	}
	return out
}

var (
	leadingID  = regexp.MustCompile(`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)`)
	trailingID = regexp.MustCompile(`"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)\s*\}\s*$`)
)

// frameID finds the top-level request ID of a message from its first and
// last bytes, or returns nil.
func frameID(head, tail []byte) json.RawMessage {
	if m := leadingID.FindSubmatch(head); m != nil {
		return json.RawMessage(m[1])
	}
	if m := trailingID.FindSubmatch(tail); m != nil {
		return json.RawMessage(m[1])
	}
	return nil
}
