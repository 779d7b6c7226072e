package arguments

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/toolscout/toolscout/index"
)

// Validate checks args against the tool's input schema and says
// which field is wrong and why. Schemas the validator cannot read (another
// JSON Schema draft, remote references) are not enforced: the upstream
// server still validates.
func Validate(t *index.Tool, args map[string]any) error {
	rs, err := resolvedSchema(t)
	if err != nil || rs == nil {
		return nil
	}
	if err := rs.Validate(args); err != nil {
		msg := plainArgumentError(Decode(t.InputSchema()), decodedArgs(args), index.SplitIdentifier(t.Name)...)
		if msg == "" {
			msg = plainValidatorError(err.Error())
		}
		return fmt.Errorf("invalid arguments for %s: %s. Call get_tool_schema for its schema", t.QualifiedName, msg)
	}
	return nil
}

func resolvedSchema(t *index.Tool) (*jsonschema.Resolved, error) {
	var raw map[string]any
	if err := json.Unmarshal(t.InputSchema(), &raw); err != nil {
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
	if d := Decode(args); d != nil {
		return d
	}
	return args
}
