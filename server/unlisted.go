package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/search"
)

// A client may call a tool by name that its tools/list does not hold: a
// model that saw the name in a discover_tools answer, or one that calls
// a tool it knows from elsewhere. By its own name (the one its server
// gives it, unprefixed), toolscout runs it when exactly one tool the
// caller sees has that name (several: the answer lists them): the name
// a client's permission rules see is then the tool's real one. By a
// qualified name it does not list, toolscout does not run it (a tool the
// user never saw listed would run under execute_tool's approval without
// saying so): it answers, as a tool error the model reads, with the
// exact execute_tool call to make, and in dynamic mode the enable_domain
// call that lists it. A disabled tool is said to be disabled.

// maxEchoedArguments bounds the arguments an answer quotes back.
const maxEchoedArguments = 1000

// unlistedCall answers a tools/call of req's tool when v does not list
// it under the name called but the catalog has it (by qualified name,
// domain/tool or its own name), or it is disabled; (nil, nil) otherwise
// (a listed tool, or a name the catalog does not have, which the go-sdk
// answers). A call by a tool's own name (the name its server gives it)
// runs the tool when exactly one enabled tool the caller sees has that
// name, in every mode: agents drop prefixes, and the name called is the
// tool's real one; when several have it, the answer lists them.
func (mt *metaTools) unlistedCall(ctx context.Context, v *view, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if req.Params == nil {
		return nil, nil
	}
	name := req.Params.Name
	cat := mt.scope.catalogFor(v.who)
	t := cat.Tool(name)
	if t == nil {
		t = cat.ToolByKey(name)
	}
	own := false
	if t == nil {
		switch ts := ownNamed(cat, name); len(ts) {
		case 0:
			if ts := cat.ToolsWithName(name); len(ts) == 1 {
				t = ts[0] // disabled: said below
			}
		case 1:
			t, own = ts[0], true
		default:
			return errorResult("tool name %s is ambiguous: %d servers have a tool of that name. Call one of %s", search.Quote(name, 100), len(ts), candidateNames(ts)), nil
		}
	}
	if t == nil {
		return nil, nil
	}
	if t.Disabled {
		return errorResult("%s", disabledMessage(t)), nil
	}
	direct, listed, as, dynamic := mt.expo.listed(cat, v, t, name)
	switch {
	case direct:
		return nil, nil
	case own:
		return mt.callDirect(ctx, v, req, t.QualifiedName)
	case listed && name == as:
		return nil, nil // being listed right now: the go-sdk has it or says so
	case listed:
		return errorResult("%s is listed as %s: call it by that name", search.Quote(name, 100), as), nil
	}
	how := fmt.Sprintf("tool_name %q and the same arguments", t.QualifiedName)
	if args := echoedArguments(req.Params.Arguments); args != nil {
		call, _ := json.Marshal(map[string]any{"tool_name": t.QualifiedName, "arguments": args})
		how = string(call)
	}
	msg := fmt.Sprintf("%s is not in this server's tools/list, so it cannot be called by name: call execute_tool with %s (get_tool_schema %s gives its arguments)", search.Quote(name, 100), how, t.QualifiedName)
	if dynamic {
		msg += fmt.Sprintf(", or call enable_domain with {\"domain\":%q} to list it", t.Domain)
	}
	return errorResult("%s.", msg), nil
}

// echoedArguments returns the arguments of a call as a JSON object to
// quote back: {} when there are none or they are not an object, nil when
// they are too long to quote (the answer says it in words).
func echoedArguments(raw json.RawMessage) any {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || raw[0] != '{' || !json.Valid(raw):
		return map[string]any{}
	case len(raw) > maxEchoedArguments:
		return nil
	}
	return raw
}

// disabledMessage says that t is disabled.
func disabledMessage(t *index.Tool) string {
	return fmt.Sprintf("%s is disabled in this server's catalog or config: it does not run. Tell the user, or find another tool with discover_tools", t.QualifiedName)
}
