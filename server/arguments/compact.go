package arguments

import "encoding/json"

// maxCompactEnum is the most values an enum keeps in a compact schema.
const maxCompactEnum = 8

// Compact strips an input schema down to its top-level properties' types
// (and short enums) and required list: what a compact tools/list shows.
func Compact(raw json.RawMessage) map[string]any {
	full := Decode(raw)
	out := map[string]any{"type": "object"}
	props, _ := full["properties"].(map[string]any)
	if len(props) > 0 {
		small := make(map[string]any, len(props))
		for name, p := range props {
			ps, _ := p.(map[string]any)
			sp := map[string]any{}
			if typ, ok := ps["type"]; ok {
				sp["type"] = typ
			}
			if enum, ok := ps["enum"].([]any); ok && len(enum) <= maxCompactEnum {
				sp["enum"] = enum
			}
			small[name] = sp
		}
		out["properties"] = small
	}
	if req, ok := full["required"].([]any); ok && len(req) > 0 {
		out["required"] = req
	}
	return out
}
