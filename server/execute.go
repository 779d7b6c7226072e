package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/server/relay"

	"github.com/toolscout/toolscout/server/gateway"
)

// ExecuteArgs are execute_tool's arguments.
type ExecuteArgs struct {
	ToolName  string         `json:"tool_name"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

func (s *Server) execute(ctx context.Context, req *mcp.CallToolRequest, args ExecuteArgs) (*mcp.CallToolResult, any, error) {
	s.waitReady(ctx)
	if args.ToolName == "" {
		return nil, nil, errors.New("pass tool_name; find names with discover_tools")
	}
	t, serr := s.resolveTool(s.eng.Catalog(), args.ToolName)
	if serr != nil {
		return nil, nil, errors.New(serr.Error)
	}
	res, err := s.run(ctx, req, t, args.Arguments)
	return res, nil, err
}

// run validates arguments and runs a resolved tool. Tool failures come
// back as IsError results; the error is for protocol faults and bad
// arguments (which the typed handler turns into IsError too).
func (s *Server) run(ctx context.Context, req *mcp.CallToolRequest, t *index.Tool, args map[string]any) (*mcp.CallToolResult, error) {
	if t.Disabled {
		return errorResult("%s", disabledMessage(t)), nil
	}
	if args == nil {
		args = map[string]any{}
	}
	if err := ValidateArguments(t, args); err != nil {
		return nil, err
	}
	if s.exec == nil {
		return errorResult("%s is listed from a catalog and cannot run here: no upstream server provides it. Connect its server with --config to run it.", t.QualifiedName), nil
	}
	// A large result comes back as a stub, its bytes in slot, and is
	// relayed as they are (server/relay).
	slot := &relay.Slot{}
	res, err := s.exec.Execute(relay.WithSlot(ctx, slot), req, t, args)
	if err != nil {
		if errors.Is(err, gateway.ErrNotExecutable) {
			return errorResult("%s is listed from a catalog and cannot run here: no upstream server provides it.", t.QualifiedName), nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return errorResult("%s failed: %v", t.QualifiedName, err), nil
	}
	return slot.Mark(res), nil
}

// ValidateArguments checks args against the tool's input schema and says
// which field is wrong and why. Schemas the validator cannot read (another
// JSON Schema draft, remote references) are not enforced: the upstream
// server still validates.
func ValidateArguments(t *index.Tool, args map[string]any) error {
	rs, err := resolvedSchema(t)
	if err != nil || rs == nil {
		return nil
	}
	if err := rs.Validate(args); err != nil {
		msg := plainArgumentError(decodedSchema(t.InputSchema), decodedArgs(args))
		if msg == "" {
			msg = boundText(err.Error(), 300)
		}
		return fmt.Errorf("invalid arguments for %s: %s. Call get_tool_schema for its schema", t.QualifiedName, msg)
	}
	return nil
}

func resolvedSchema(t *index.Tool) (*jsonschema.Resolved, error) {
	var raw map[string]any
	if err := json.Unmarshal(t.InputSchema, &raw); err != nil {
		return nil, err
	}
	delete(raw, "$schema") // draft-07 schemas validate the same for tool arguments
	data, _ := json.Marshal(raw)
	var sch jsonschema.Schema
	if err := json.Unmarshal(data, &sch); err != nil {
		return nil, err
	}
	return sch.Resolve(nil)
}

// decodedArgs returns args as decoded JSON (float64 numbers, []any).
func decodedArgs(args map[string]any) map[string]any {
	if d := decodedSchema(args); d != nil {
		return d
	}
	return args
}
