package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/callers"
)

// A caller whose OAuth access token holds only read scopes runs only the
// tools that say they are read-only (callers.ReadOnly). When a tools/call
// names a tool that does not, before any of it runs, toolscout refuses
// the HTTP request as the MCP authorization specification's scope
// challenge asks ("Runtime Insufficient Scope Errors"): 403 with
// WWW-Authenticate: Bearer error="insufficient_scope", the scopes that
// run it, and the resource metadata, so that a client acting for a user
// asks its authorization server for them and sends the call again
// (step-up). The body is a JSON-RPC error answering the call, so that a
// client without step-up reads why and keeps its session.
//
// The tool is known from the request when it is execute_tool's
// tool_name or a direct call's name; a run_code program's calls are
// known only as it runs, after its answer has begun, and are refused as
// failed tools (execute.go), as are calls this check let through.

// codeInsufficientScope is the JSON-RPC error code of a call refused for
// its token's scopes: one of the codes JSON-RPC leaves to servers
// (-32000 to -32099); MCP defines none for it.
const codeInsufficientScope = -32003

// refuseReadOnlyRun answers a tools/call made with a read-only token for
// a tool that is not read-only (see above), and reports whether it
// answered.
func (hh *httpHandler) refuseReadOnlyRun(w http.ResponseWriter, r *http.Request) bool {
	if hh.scope.callers == nil || !callers.ReadOnly(auth.TokenInfoFromContext(r.Context())) {
		return false
	}
	body, ok := bufferBody(w, r)
	if !ok {
		return true
	}
	c := calledTool(body)
	if c.tool == "" {
		return false
	}
	id, name := c.id, c.tool
	hh.start.waitReady(r.Context()) // the tool may be an upstream's still connecting
	who := hh.scope.requestCaller(r)
	t, serr := hh.scope.resolveToolFor(who, hh.scope.catalogFor(who), name)
	if serr != nil || t.Disabled || readOnly(t) {
		// Not a tool this call would run: the handler answers it.
		return false
	}
	desc := fmt.Sprintf("running %s needs a scope that runs tools: this token's scopes run only the tools that say they are read-only (readOnlyHint)", t.QualifiedName)
	challenge, scopes, ok := hh.scope.callers.RunChallenge(r.Context(), desc)
	if !ok {
		return false
	}
	hh.log.Info("request refused", "path", r.URL.Path, "remote", r.RemoteAddr, "caller", who.Name, "tool", t.QualifiedName,
		"why", "insufficient_scope: the access token's scopes run only read-only tools")
	// The audit trail records the refusal as it recorded the tool's
	// isError before: the call named a tool and did not run it.
	via := ExecuteTool
	if c.direct {
		via = AuditDirect
	}
	call := hh.audit.begin(&mcp.CallToolRequest{Extra: &mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(r.Context()), Header: r.Header}}, via, name)
	call.resolved(t)
	args := c.args
	if args == nil {
		args = map[string]any{} // none given: as execute_tool records it
	}
	call.end(r.Context(), args, nil, FailScope, nil)
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	w.Header().Set("WWW-Authenticate", challenge)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{
		"code":    codeInsufficientScope,
		"message": fmt.Sprintf("Forbidden (insufficient_scope): %s does not run with this access token, whose scopes run only the tools that say they are read-only (readOnlyHint). Sign in again with the scopes %s (the WWW-Authenticate header names them) and send the call again", t.QualifiedName, strings.Join(scopes, " ")),
	}})
	return true
}

// serverTools are the tools toolscout itself lists: a call by one of
// these names runs it, whatever a domain's tools are called.
var serverTools = []string{DiscoverTools, GetToolSchema, ExecuteTool, RunCode, EnableDomain, DisableDomain}

// toolCall is what refuseReadOnlyRun reads of a tools/call.
type toolCall struct {
	id     json.RawMessage
	tool   string         // the catalog tool it would run ("": none)
	direct bool           // called by its own name, not through execute_tool
	args   map[string]any // the tool's arguments (nil: none, or not an object)
}

// calledTool reads a tools/call in body: its id and the catalog tool it
// would run, execute_tool's tool_name or the name a direct call gives,
// with that tool's arguments; a zero toolCall for anything else.
func calledTool(body []byte) toolCall {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" {
		return toolCall{}
	}
	switch name := msg.Params.Name; {
	case name == ExecuteTool:
		var a struct {
			ToolName  any            `json:"tool_name"`
			Arguments map[string]any `json:"arguments"`
		}
		if json.Unmarshal(msg.Params.Arguments, &a) != nil {
			return toolCall{}
		}
		s, _ := a.ToolName.(string)
		return toolCall{id: msg.ID, tool: s, args: a.Arguments}
	case slices.Contains(serverTools, name):
		return toolCall{}
	default:
		var args map[string]any
		json.Unmarshal(msg.Params.Arguments, &args)
		return toolCall{id: msg.ID, tool: name, direct: true, args: args}
	}
}
