package server

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/server/relay"

	"github.com/toolscout/toolscout/server/arguments"
	"github.com/toolscout/toolscout/server/callers"
	"github.com/toolscout/toolscout/server/gateway"
)

// ExecuteArgs are execute_tool's arguments.
type ExecuteArgs struct {
	ToolName  string         `json:"tool_name"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

func (mt *metaTools) execute(ctx context.Context, req *mcp.CallToolRequest, args ExecuteArgs) (*mcp.CallToolResult, any, error) {
	call := mt.audit.begin(req, ExecuteTool, args.ToolName)
	res, fail, err := mt.executeNamed(ctx, req, args, call)
	sent := args.Arguments
	if sent == nil {
		sent = map[string]any{} // none given: what the tool ran with
	}
	call.end(ctx, sent, res, fail, err)
	return res, nil, err
}

// executeNamed resolves execute_tool's tool name and runs the tool; fail
// is as run's.
func (mt *metaTools) executeNamed(ctx context.Context, req *mcp.CallToolRequest, args ExecuteArgs, call *auditCall) (*mcp.CallToolResult, string, error) {
	mt.start.waitReady(ctx)
	if args.ToolName == "" {
		return nil, FailBadRequest, errors.New("pass tool_name; find names with discover_tools")
	}
	who := mt.scope.callerIn(ctx)
	mt.start.waitServer(ctx, who, args.ToolName)
	t, serr := mt.scope.resolveToolFor(who, mt.scope.catalogFor(who), args.ToolName)
	if serr != nil {
		return nil, FailUnknownTool, errors.New(serr.Error)
	}
	call.resolved(t)
	return mt.run(ctx, req, t, args.Arguments)
}

// run validates arguments and runs a resolved tool. Tool failures come
// back as IsError results; the error is for protocol faults and bad
// arguments (which the typed handler turns into IsError too). fail is
// the class of the failure (audit.go) when the call reached no result of
// the upstream's, "" when the upstream answered res.
func (mt *metaTools) run(ctx context.Context, req *mcp.CallToolRequest, t *index.Tool, args map[string]any) (res *mcp.CallToolResult, fail string, err error) {
	return mt.runWith(ctx, req, t, args, true)
}

// runWith is run; relayed false takes a large result whole instead of
// relaying its bytes raw (a run_code program reads it).
func (mt *metaTools) runWith(ctx context.Context, req *mcp.CallToolRequest, t *index.Tool, args map[string]any, relayed bool) (res *mcp.CallToolResult, fail string, err error) {
	res, fail, err = mt.runRefusable(ctx, req, t, args, relayed)
	if gateway.WireError(err) != nil {
		// To the model (execute_tool, run_code) the upstream's refusal is
		// a failed tool: what it says, to act on.
		return errorResult("%s failed: %v", t.QualifiedName, err), fail, nil
	}
	return res, fail, err
}

// runRefusable is runWith, but an upstream's JSON-RPC error answer
// comes back as err (gateway.WireError) for a direct call to pass on as
// it is.
func (mt *metaTools) runRefusable(ctx context.Context, req *mcp.CallToolRequest, t *index.Tool, args map[string]any, relayed bool) (res *mcp.CallToolResult, fail string, err error) {
	if t.Disabled {
		return errorResult("%s", disabledMessage(t)), FailDisabled, nil
	}
	if req != nil && req.Extra != nil && callers.ReadOnly(req.Extra.TokenInfo) && !readOnly(t) {
		return errorResult("%s does not run with this access token: its scopes let it run only the tools that say they are read-only (readOnlyHint), and %s does not. Tell the user: running it needs a token with a scope that allows running tools", t.QualifiedName, t.QualifiedName), FailScope, nil
	}
	if args == nil {
		args = map[string]any{}
	}
	if err := arguments.Validate(t, args); err != nil {
		return nil, FailInvalidArguments, err
	}
	if mt.exec == nil {
		return errorResult("%s is listed from a catalog and cannot run here: no upstream server provides it. Connect its server with --config to run it.", t.QualifiedName), FailNotExecutable, nil
	}
	// A large result comes back as a stub, its bytes in slot, and is
	// relayed as they are (server/relay).
	slot := &relay.Slot{}
	if relayed {
		ctx = relay.WithSlot(ctx, slot)
	}
	res, err = mt.exec.Execute(ctx, req, t, args)
	if err != nil {
		if errors.Is(err, gateway.ErrNotExecutable) {
			return errorResult("%s is listed from a catalog and cannot run here: no upstream server provides it.", t.QualifiedName), FailNotExecutable, nil
		}
		if ctx.Err() != nil {
			return nil, FailCanceled, ctx.Err()
		}
		if errors.Is(err, gateway.ErrHeld) {
			return errorResult("%v", err), FailHeld, nil
		}
		if gateway.WireError(err) != nil {
			return nil, FailUpstream, err
		}
		return errorResult("%s failed: %v", t.QualifiedName, err), failClass(err), nil
	}
	if res != nil && !res.IsError {
		mt.feedback.noteRun(req, t)
	}
	return slot.Mark(res), "", nil
}

// readOnly reports whether t says it does not modify its environment
// (annotations.readOnlyHint true).
func readOnly(t *index.Tool) bool {
	var a struct {
		ReadOnlyHint bool `json:"readOnlyHint"`
	}
	return len(t.Annotations()) > 0 && json.Unmarshal(t.Annotations(), &a) == nil && a.ReadOnlyHint
}
