package server

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/search"
)

// A client may call a tool by name that its tools/list does not hold: a
// model that saw the name in a discover_tools answer, or one that calls
// a tool it knows from elsewhere. toolscout does not run it (a client's
// permission rules see the name it calls; a tool the user never saw
// listed would run under execute_tool's approval without saying so):
// it answers, as a tool error the model reads, with the exact
// execute_tool call to make, and in dynamic mode the enable_domain call
// that lists it. A disabled tool is said to be disabled.

// maxEchoedArguments bounds the arguments an answer quotes back.
const maxEchoedArguments = 1000

// unlistedCall answers a tools/call of req's tool when v does not list
// it but the catalog has it (by qualified name, domain/tool or a unique
// bare name), or it is disabled; nil otherwise (a listed tool, or a name
// the catalog does not have, which the go-sdk answers).
func (mt *metaTools) unlistedCall(v *view, req *mcp.CallToolRequest) *mcp.CallToolResult {
	if req.Params == nil {
		return nil
	}
	name := req.Params.Name
	cat := mt.scope.catalogFor(v.who)
	t := cat.Tool(name)
	if t == nil {
		var err error
		if t, err = cat.Resolve(name); err != nil || t == nil {
			return nil
		}
	}
	if t.Disabled {
		return errorResult("%s", disabledMessage(t))
	}
	direct, listed, dynamic := mt.expo.listed(cat, v, t, name)
	switch {
	case direct:
		return nil
	case listed && name == t.QualifiedName:
		return nil // being listed right now: the go-sdk has it or says so
	case listed:
		return errorResult("%s is listed as %s: call it by that name", search.Quote(name, 100), t.QualifiedName)
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
	return errorResult("%s.", msg)
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
