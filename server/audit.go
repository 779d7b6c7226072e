package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/redact"
	"github.com/toolscout/toolscout/server/gateway"
	"github.com/toolscout/toolscout/server/relay"
)

// The audit trail (Options.Audit): one JSON line per execute_tool call
// and per call of a tool listed directly, saying who ran what, on which
// upstream, how it ended, how long it took and how much it answered;
// with Options.AuditArguments, what it was called with, bounded. Calls
// the SDK refuses before a handler runs (a direct call of a name that is
// not listed, unparsable parameters) are not recorded; calls refused over
// HTTP for their token's scopes are (stepup.go).
//
// Each line is encoded first and written with one Write under a lock:
// lines never interleave, whatever the writer. A line is at most
// AuditLineMax bytes, under PIPE_BUF, so that one write(2) of it is
// atomic even on a pipe that other writers share; on a file opened with
// O_APPEND, it lands whole at the end. The line is written once the call
// has been answered by the upstream, and a line that cannot be written
// is said in the log (once, until writing works again): the call is not
// failed for it. A Write cut short (a full disk) leaves part of a line
// unless the writer takes it back (cmd's audit file does): the next
// line then begins with a newline of its own, so that it is whole
// rather than glued to the fragment (issue 52, item 5).

// AuditRecord is one line of the audit trail.
type AuditRecord struct {
	// Time is when the call arrived (UTC).
	Time time.Time `json:"time"`
	// Caller is who made the call (callerOf): "user:ID" when the request
	// was authenticated as a user, else "session:ID" (an MCP session),
	// else "local" (stdio, or stateless requests without an identity).
	Caller string `json:"caller"`
	// Via is ExecuteTool, "direct" for a tool listed directly, or
	// RunCode for a tool called by a program, and for the program's own
	// line (Tool is then AuditProgram).
	Via string `json:"via"`
	// Tool is the qualified name of the tool run; for a name that
	// resolved to no tool, the name asked for (cut to
	// auditToolNameMax bytes as encoded).
	Tool string `json:"tool"`
	// Upstream is the tool's domain ("" when the name resolved to none).
	Upstream string `json:"upstream,omitempty"`
	// Outcome is AuditOK, AuditToolError (the upstream answered isError)
	// or AuditFailure (the call reached no upstream result; Error says why).
	Outcome string `json:"outcome"`
	// Error is, with AuditFailure, the class of the failure (the Fail*
	// constants); the message is not recorded, as it may quote arguments.
	Error string `json:"error,omitempty"`
	// DurationMS is the time from the call's arrival to its answer, in
	// milliseconds (microsecond precision), startup waits included.
	DurationMS float64 `json:"duration_ms"`
	// ResultBytes is the size of the tool result answered, as JSON (the
	// upstream's bytes for a result relayed raw); 0 when the call ended
	// without one (cancelled).
	ResultBytes int `json:"result_bytes"`
	// Arguments, with Options.AuditArguments, are the call's arguments,
	// shortened when their JSON is over AuditArgumentsMax bytes
	// (ArgumentsCut); ArgumentsBytes is the size of their whole JSON.
	Arguments      json.RawMessage `json:"arguments,omitempty"`
	ArgumentsBytes int             `json:"arguments_bytes,omitempty"`
	ArgumentsCut   bool            `json:"arguments_cut,omitempty"`
	// Program is, on a run_code program's own line, the SHA-256 of its
	// text (hex); with AuditArguments, Arguments holds the text itself
	// as {"code": ...}.
	Program string `json:"program_sha256,omitempty"`
}

// Outcomes of a call (AuditRecord.Outcome).
const (
	AuditOK        = "ok"
	AuditToolError = "tool_error"
	AuditFailure   = "failure"
)

// AuditDirect is AuditRecord.Via for a call of a tool listed directly.
const AuditDirect = "direct"

// Failure classes (AuditRecord.Error).
const (
	FailBadRequest       = "bad_request"        // execute_tool without tool_name
	FailUnknownTool      = "unknown_tool"       // no such tool, several with that bare name, or no longer listed
	FailInvalidArguments = "invalid_arguments"  // arguments that do not match the schema, or not an object
	FailDisabled         = "disabled"           // the tool is switched off in the config
	FailNotExecutable    = "not_executable"     // listed from a catalog: no upstream runs it
	FailHeld             = "awaiting_approval"  // its definition changed upstream: pinned (index/pin)
	FailScope            = "insufficient_scope" // the caller's access token allows only read-only tools (callers.ReadOnly)
	FailUnavailable      = "upstream_unavailable"
	FailTimeout          = "upstream_timeout"
	FailStopped          = "upstream_stopped"      // the upstream exited during the call
	FailUnauthorized     = "upstream_unauthorized" // the upstream refused toolscout's credentials (401, 403)
	FailShuttingDown     = "shutting_down"
	FailUpstream         = "upstream_error" // the upstream answered with a protocol error
	FailCanceled         = "canceled"       // the client cancelled the call or went away
	FailInputRequired    = "input_required" // a run_code program's tool needed input from the user (2026-07-28)
	// FailProgram begins the class of a run_code program's failure:
	// program_syntax, program_runtime, program_tool (an uncaught tool
	// error), program_limit_<limit> (codemode's limit names), or
	// program_not_run (code mode could not start it).
	FailProgram = "program"
)

// Bounds of an audit line.
const (
	// AuditArgumentsMax bounds the arguments' JSON in a line: larger
	// arguments are shortened (boundArguments).
	AuditArgumentsMax = 2048
	// AuditLineMax bounds a whole line: the arguments, the caller and the
	// tool name are bounded so that it holds.
	AuditLineMax = 4096
	// auditCallerMax and auditToolNameMax bound the caller and a tool
	// name that resolved to nothing (a qualified name is at most 64), as
	// encoded in the line (cutEncoded).
	auditCallerMax   = 256
	auditToolNameMax = 128
)

// auditor writes the audit trail; nil is off.
type auditor struct {
	w       io.Writer
	args    bool
	secrets *redact.Redactor // the arguments recorded are redacted
	log     *slog.Logger

	mu      sync.Mutex // one Write at a time: each line whole
	failing bool       // the last Write failed (said once)
	torn    bool       // the trail ends in part of a line: a Write was cut short
}

func newAuditor(w io.Writer, args bool, secrets *redact.Redactor, log *slog.Logger) *auditor {
	if w == nil {
		return nil
	}
	return &auditor{w: w, args: args, secrets: secrets, log: log}
}

// auditCall is a call on its way to the audit trail.
type auditCall struct {
	a     *auditor
	rec   AuditRecord
	start time.Time
	// secrets are the auditor's and the credential of the call's request.
	secrets *redact.Redactor
}

// begin starts the record of a call of name by req's caller; nil when
// the trail is off. via is ExecuteTool or AuditDirect.
func (a *auditor) begin(req *mcp.CallToolRequest, via, name string) *auditCall {
	if a == nil {
		return nil
	}
	start := time.Now()
	secrets := a.secrets
	if a.args && req != nil && req.Extra != nil && req.Extra.Header != nil {
		secrets = secrets.With(req.Extra.Header.Values("Authorization")...)
	}
	return &auditCall{a: a, start: start, secrets: secrets, rec: AuditRecord{
		Time:   start.UTC(),
		Caller: cutEncoded(callerOf(req), auditCallerMax),
		Via:    via,
		Tool:   cutEncoded(name, auditToolNameMax),
	}}
}

// resolved records that the call's name is t.
func (c *auditCall) resolved(t *index.Tool) {
	if c != nil && t != nil {
		c.rec.Tool, c.rec.Upstream = t.QualifiedName, t.Domain
	}
}

// end records how the call ended and writes its line: args are the
// call's arguments (nil when they were not an object), res and err what
// the handler answers, fail toolscout's failure class ("" when the
// upstream answered res).
func (c *auditCall) end(ctx context.Context, args map[string]any, res *mcp.CallToolResult, fail string, err error) {
	if c == nil {
		return
	}
	r := &c.rec
	r.DurationMS = float64(time.Since(c.start).Microseconds()) / 1000
	switch {
	case err != nil && ctx.Err() != nil:
		fail = FailCanceled
	case err != nil && fail == "":
		fail = FailUpstream // every error path names its class: a safe default
	}
	switch {
	case fail != "":
		r.Outcome, r.Error = AuditFailure, fail
	case res != nil && res.IsError:
		r.Outcome = AuditToolError
	default:
		r.Outcome = AuditOK
	}
	if err != nil && fail != FailCanceled {
		res = errorResult("%v", err) // what the handler's caller answers
	}
	r.ResultBytes = resultSize(res)
	if c.a.args && args != nil {
		if red, ok := c.secrets.Any(args).(map[string]any); ok {
			args = red
		}
		r.Arguments, r.ArgumentsBytes, r.ArgumentsCut = boundArguments(args, AuditArgumentsMax)
	}
	c.a.write(r)
}

// write encodes r and writes it as one line, in one Write.
func (a *auditor) write(r *AuditRecord) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // arguments read as sent: <, > and & unescaped
	if err := enc.Encode(r); err != nil {
		a.log.Error("audit: could not encode a line", "tool", r.Tool, "err", err)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var err error
	if a.torn {
		// End the fragment first, in a Write of its own: the line
		// stays within PIPE_BUF.
		var n int
		if n, err = a.w.Write([]byte{'\n'}); n == 1 {
			a.torn = false
		} else if err == nil {
			err = io.ErrShortWrite
		}
	}
	if !a.torn {
		var n int
		n, err = a.w.Write(buf.Bytes())
		a.torn = n > 0 && n < buf.Len() // the line ends in its newline
	}
	switch {
	case err != nil && !a.failing:
		a.failing = true
		a.log.Error("audit: could not write the trail; calls go on unrecorded until it works again", "err", err)
	case err == nil && a.failing:
		a.failing = false
		a.log.Info("audit: writing the trail again")
	}
}

// resultSize returns the size of res as JSON: the bytes relayed for a
// result kept raw (server/relay), else its encoding; 0 for no result.
func resultSize(res *mcp.CallToolResult) int {
	if res == nil {
		return 0
	}
	if n, ok := relay.MarkedSize(res); ok {
		return n
	}
	b, err := json.Marshal(res)
	if err != nil {
		return 0
	}
	return len(b)
}

// failClass returns the class of an executor's error.
func failClass(err error) string {
	switch {
	case errors.Is(err, gateway.ErrNotExecutable):
		return FailNotExecutable
	case errors.Is(err, gateway.ErrHeld):
		return FailHeld
	case errors.Is(err, gateway.ErrUnavailable):
		return FailUnavailable
	case errors.Is(err, gateway.ErrTimeout):
		return FailTimeout
	case errors.Is(err, gateway.ErrUnauthorized):
		return FailUnauthorized
	case errors.Is(err, gateway.ErrStopped):
		return FailStopped
	case errors.Is(err, gateway.ErrClosing):
		return FailShuttingDown
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return FailCanceled
	}
	return FailUpstream
}

// Shortening arguments over AuditArgumentsMax: every string is cut to
// its first bytes, every array and object to its first elements (objects
// in key order) and nesting to a depth, then smaller bounds each round
// until the JSON fits. An elided part reads "…" (a string cut short ends
// with it; the rest of an array is "…N more", of an object a member
// "…": "N more"), so that short arguments beside a long one (the path
// beside a file's content) stay readable.
var argumentBounds = []struct{ str, items, depth int }{
	{256, 16, 4},
	{64, 8, 3},
	{16, 4, 2},
	{0, 0, 1},
}

// boundArguments returns args as JSON of at most max bytes, the size of
// their whole JSON, and whether they were shortened.
func boundArguments(args map[string]any, max int) (raw json.RawMessage, size int, shortened bool) {
	whole, err := marshalArguments(args)
	if err != nil {
		return nil, 0, false
	}
	if len(whole) <= max {
		return whole, len(whole), false
	}
	for _, b := range argumentBounds {
		short, err := marshalArguments(shorten(args, b.str, b.items, b.depth))
		if err == nil && len(short) <= max {
			return short, len(whole), true
		}
	}
	return json.RawMessage(fmt.Sprintf(`{"…":"%d bytes"}`, len(whole))), len(whole), true
}

// marshalArguments encodes v as compact JSON, without HTML escaping.
func marshalArguments(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// shorten returns v with strings cut to str bytes, arrays and objects to
// items elements and nesting to depth levels (v decoded JSON).
func shorten(v any, str, items, depth int) any {
	switch v := v.(type) {
	case string:
		if len(v) <= str {
			return v
		}
		return cut(v, str)
	case []any:
		if depth <= 0 {
			return "…"
		}
		out := make([]any, 0, min(len(v), items)+1)
		for _, e := range v[:min(len(v), items)] {
			out = append(out, shorten(e, str, items, depth-1))
		}
		if len(v) > items {
			out = append(out, fmt.Sprintf("…%d more", len(v)-items))
		}
		return out
	case map[string]any:
		if depth <= 0 {
			return "…"
		}
		keys := slices.Sorted(maps.Keys(v))
		out := make(map[string]any, min(len(keys), items)+1)
		kept := 0
		for _, k := range keys {
			if kept == items {
				break
			}
			ck := cut(k, max(str, 16))
			if _, dup := out[ck]; dup {
				continue
			}
			out[ck] = shorten(v[k], str, items, depth-1)
			kept++
		}
		if n := len(keys) - kept; n > 0 {
			out["…"] = fmt.Sprintf("%d more", n)
		}
		return out
	case nil, bool, float64, json.Number:
		return v
	}
	// Not decoded JSON (an embedding program's values): kept when small.
	if b, err := json.Marshal(v); err == nil && len(b) <= max(str, 16) {
		return json.RawMessage(b)
	}
	return "…"
}

// cutEncoded returns s, or its first runes and "…", so that it takes at
// most n bytes as the contents of a JSON string: a control character
// takes six there.
func cutEncoded(s string, n int) string {
	const ell = "…"
	total, fits := 0, 0 // fits: the end of the longest prefix that leaves room for ell
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		w := size
		switch {
		case r == utf8.RuneError && size == 1:
			w = 6 // \ufffd
		case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t':
			w = 2
		case r < 0x20 || r == '\u2028' || r == '\u2029':
			w = 6
		}
		if total+w > n {
			return s[:fits] + ell
		}
		total += w
		i += size
		if total <= n-len(ell) {
			fits = i
		}
	}
	return s
}

// cut returns s when it has at most n bytes, else its first bytes (whole
// runes) and "…" in at most n bytes.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ell = "…"
	end := max(n-len(ell), 0)
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + ell
}
