package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server/codemode"
	"github.com/toolscout/toolscout/server/codemode/tsdecl"
)

// Code mode (ExposeCode): run_code runs a JavaScript program that calls
// the tools the caller may see as tools.<domain>.<tool>(args), in a
// sandbox process (server/codemode). Each tool call goes the way an
// execute_tool call goes: the caller's view, argument checks, pinned
// definitions, feedback and the audit trail (one line per call, via
// run_code, plus one for the program).

// RunCode is code mode's meta-tool.
const RunCode = "run_code"

// ExposeCode lists discover_tools, get_tool_schema and run_code.
const ExposeCode Mode = "code"

var codePolicy = modePolicy{mode: ExposeCode, lists: listsNone, workflow: codeWorkflow}

// AuditProgram is AuditRecord.Tool for a run_code program's own line.
const AuditProgram = "program"

// MaxAnswerResult bounds run_code's result in its answer, as JSON: a
// longer one is cut, and the answer says so (Truncated).
const MaxAnswerResult = 64 << 10

// Code configures code mode (Options.Code).
type Code struct {
	// Runner runs the programs; its owner closes it. Required in code
	// mode.
	Runner *codemode.Runner
	// Limits bound each program (zero fields: codemode.Defaults); a
	// program's timeout_ms may only shorten Limits.Wall.
	Limits codemode.Limits
}

// RunCodeArgs are run_code's arguments.
type RunCodeArgs struct {
	Code      string `json:"code"`
	TimeoutMS int    `json:"timeout_ms,omitempty"`
}

// runCodeInput is run_code's input schema.
func runCodeInput(lim codemode.Limits) map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"code":       map[string]any{"type": "string", "description": "the program"},
			"timeout_ms": map[string]any{"type": "integer", "minimum": 1, "maximum": lim.Wall.Milliseconds(), "description": "stop it sooner"},
		},
		"required": []string{"code"},
	}
}

// runCodeDescription is run_code's description: the instructions say
// the workflow (instructions.go), this what a program can do.
const runCodeDescription = "Run a JavaScript program (async/await): `await tools.<domain>.<tool>({...})` calls a tool, `await toolscout.search(\"task\")` finds tools. Answers its return value (or last expression), console output and calls; a failed call throws an Error you may catch."

// addRunCode registers run_code on v.
func (mt *metaTools) addRunCode(v *view) {
	mcp.AddTool(v.mcp, &mcp.Tool{
		Name:        RunCode,
		Description: runCodeDescription,
		InputSchema: mt.schemas.input[RunCode],
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(true), OpenWorldHint: boolPtr(true)},
	}, func(ctx context.Context, req *mcp.CallToolRequest, args RunCodeArgs) (*mcp.CallToolResult, any, error) {
		return mt.runCode(ctx, req, v, args)
	})
}

// runCode runs one program and answers what it returned.
func (mt *metaTools) runCode(ctx context.Context, req *mcp.CallToolRequest, v *view, args RunCodeArgs) (*mcp.CallToolResult, any, error) {
	lim := mt.code.Limits.WithDefaults()
	if args.TimeoutMS < 0 {
		return nil, nil, errors.New("timeout_ms must be positive (milliseconds)")
	}
	if t := time.Duration(args.TimeoutMS) * time.Millisecond; t > 0 && t < lim.Wall {
		lim.Wall = t
	}
	if mt.code.Runner == nil {
		return nil, nil, errors.New("run_code cannot run programs here: this server has no sandbox (code mode is set up by toolscout serve --expose code)")
	}
	mt.start.waitReady(ctx)
	prog := mt.audit.begin(req, RunCode, AuditProgram)
	b := &codeBridge{mt: mt, req: req, v: v}
	ans, err := mt.code.Runner.Run(ctx, args.Code, lim, b)
	if err != nil {
		prog.endProgram(ctx, args.Code, nil, err)
		return nil, nil, fmt.Errorf("run_code cannot run programs now: %w", err)
	}
	prog.endProgram(ctx, args.Code, ans, nil)
	cutResult(ans)
	// The text once: the JSON, unescaped (a result's "<" stays one
	// character), or for a client that reads structuredContent a line
	// saying what it holds (structured.go).
	text := shortText(ans)
	if !mt.structuredClients.reads(req) {
		js, err := marshalUnescaped(ans)
		if err != nil {
			return nil, nil, err
		}
		text = string(js)
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: ans.Error != nil}
	return res, ans, nil
}

// cutResult cuts a result over MaxAnswerResult, saying so.
func cutResult(ans *codemode.Answer) {
	n := len(ans.Result)
	if n <= MaxAnswerResult {
		return
	}
	head := string(ans.Result[:MaxAnswerResult])
	for !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	ans.Result, _ = json.Marshal(head)
	ans.Truncated = fmt.Sprintf("the result was %d bytes of JSON; its first %d are given, as a string: return less (the fields you need, or a count)", n, MaxAnswerResult)
}

// codeBridge is a program's way to the tools: one per run_code call,
// in its caller's view.
type codeBridge struct {
	mt  *metaTools
	req *mcp.CallToolRequest
	v   *view
}

var _ codemode.Bridge = (*codeBridge)(nil)

// toolReq is the request a program's tool call is made for: run_code's,
// so that what the tool's server asks of the client in the middle of the
// call (sampling, elicitation, roots) and its progress and log messages
// go to run_code's client, but without the input responses and request
// state of a retry of run_code, which are not the tool's.
func (b *codeBridge) toolReq() *mcp.CallToolRequest {
	if b.req == nil || b.req.Params == nil || (b.req.Params.InputResponses == nil && b.req.Params.RequestState == "") {
		return b.req
	}
	r := *b.req
	p := *b.req.Params
	p.InputResponses, p.RequestState = nil, ""
	r.Params = &p
	return &r
}

// Call resolves tools.<domain>.<tool> in the caller's catalog and runs
// it as execute_tool would.
func (b *codeBridge) Call(ctx context.Context, domain, tool string, raw json.RawMessage) (string, json.RawMessage, error) {
	mt := b.mt
	who := mt.scope.callerIn(ctx)
	cat := mt.scope.catalogFor(who)
	t := codeTool(cat, domain, tool)
	name := domain + "__" + tool
	if t == nil {
		// Its server may be in its first connection attempt.
		mt.start.waitServer(ctx, who, name)
		cat = mt.scope.catalogFor(who)
		t = codeTool(cat, domain, tool)
	}
	call := mt.audit.begin(b.req, RunCode, name)
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil || args == nil {
		err = fmt.Errorf("tools.%s.%s takes one object of arguments", domain, tool)
		call.end(ctx, nil, nil, FailInvalidArguments, err)
		return name, nil, err
	}
	if t == nil {
		_, serr := mt.scope.resolveToolFor(who, cat, name)
		msg := fmt.Sprintf("unknown tool tools.%s.%s", domain, tool)
		if serr != nil {
			msg = serr.Error
		}
		err := errors.New(msg)
		call.end(ctx, args, nil, FailUnknownTool, err)
		return name, nil, err
	}
	call.resolved(t)
	res, fail, err := mt.runWith(ctx, b.toolReq(), t, args, false)
	if err == nil && res != nil && len(res.InputRequests) > 0 {
		// A program cannot wait for its client to answer and retry.
		res, fail, err = nil, FailInputRequired, fmt.Errorf("%s needs input from the user (an input-required result), which run_code cannot ask for: call it with execute_tool, whose client answers and retries", t.QualifiedName)
	}
	call.end(ctx, args, res, fail, err)
	if err != nil {
		if !strings.Contains(err.Error(), t.QualifiedName) {
			err = fmt.Errorf("%s: %v", t.QualifiedName, err)
		}
		return t.QualifiedName, nil, err
	}
	value, terr := toolValue(res)
	if terr != nil {
		return t.QualifiedName, nil, terr
	}
	return t.QualifiedName, value, nil
}

// Search runs the search discover_tools runs, in the caller's view.
func (b *codeBridge) Search(ctx context.Context, query string, limit int) (json.RawMessage, error) {
	if strings.TrimSpace(query) == "" {
		return nil, errors.New("toolscout.search needs a request in words")
	}
	if limit < 0 || limit > search.MaxLimit {
		return nil, fmt.Errorf("toolscout.search: limit %d: use 1 to %d", limit, search.MaxLimit)
	}
	_, out, err := b.mt.discover(ctx, b.v, DiscoverArgs{Query: query, Limit: limit})
	if err != nil {
		return nil, err
	}
	if a, ok := out.(SearchAnswer); ok {
		b.mt.feedback.noteAnswer(b.req, a)
	}
	return json.Marshal(out)
}

// codeTool finds the tool a program named as tools.<domain>.<tool>: by
// its names, or by the identifiers the declarations give them
// (tsdecl.Idents over the domains and tools of cat, the caller's
// catalog, as get_tool_schema's declarations choose them). nil when
// cat has none.
func codeTool(cat *index.Catalog, domain, tool string) *index.Tool {
	d := cat.Domain(domain)
	if d == nil {
		names := make([]string, 0, len(cat.Domains()))
		for _, c := range cat.Domains() {
			names = append(names, c.Name)
		}
		for name, id := range tsdecl.Idents(names) {
			if id == domain {
				d = cat.Domain(name)
				break
			}
		}
	}
	if d == nil {
		return nil
	}
	for _, t := range d.Tools {
		if t.Name == tool {
			return t
		}
	}
	names := make([]string, len(d.Tools))
	for i, t := range d.Tools {
		names[i] = t.Name
	}
	ids := tsdecl.Idents(names)
	for _, t := range d.Tools {
		if ids[t.Name] == tool {
			return t
		}
	}
	return nil
}

// toolValue is what a tool call gives the program: the structured
// result where the upstream sent one, else its text (the texts joined
// by newlines), else its content as JSON. A result with isError is the
// error the program's call throws.
func toolValue(res *mcp.CallToolResult) (json.RawMessage, error) {
	if res == nil {
		return json.RawMessage("null"), nil
	}
	var texts []string
	allText := true
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		} else {
			allText = false
		}
	}
	if res.IsError {
		msg := strings.Join(texts, "\n")
		if msg == "" {
			msg = "the tool failed without saying why"
		}
		return nil, errors.New(msg)
	}
	if res.StructuredContent != nil {
		return json.Marshal(res.StructuredContent)
	}
	if allText {
		return json.Marshal(strings.Join(texts, "\n"))
	}
	return json.Marshal(res.Content)
}

// endProgram writes the program's own line: its hash, how long it ran
// and how it ended, and, with AuditArguments, its text.
func (c *auditCall) endProgram(ctx context.Context, code string, ans *codemode.Answer, err error) {
	if c == nil {
		return
	}
	sum := sha256.Sum256([]byte(code))
	c.rec.Program = hex.EncodeToString(sum[:])
	fail := ""
	switch {
	case err != nil:
		fail = FailProgram + "_not_run"
	case ans.Error != nil && ans.Error.Kind == codemode.KindLimit:
		fail = FailProgram + "_limit_" + ans.Error.Limit
	case ans.Error != nil:
		fail = FailProgram + "_" + ans.Error.Kind
	}
	var res *mcp.CallToolResult
	if ans != nil {
		b, _ := json.Marshal(ans)
		res = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
	}
	var args map[string]any
	if c.a.args {
		args = map[string]any{"code": code}
	}
	c.end(ctx, args, res, fail, nil)
}
