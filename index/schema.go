package index

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// MaxToolNameBytes is the longest tool name a catalog or an upstream
// server may use.
const MaxToolNameBytes = 128

// CheckToolName checks the one rule for tool names, from catalog files
// and upstream servers alike: at most MaxToolNameBytes, no white space.
func CheckToolName(name string) error {
	if len(name) > MaxToolNameBytes || strings.ContainsAny(name, " \t\r\n") {
		return fmt.Errorf("invalid tool name %q: at most %d characters, no white space", name, MaxToolNameBytes)
	}
	return nil
}

// NormalizeObjectSchema makes an upstream server's schema a catalog
// schema: a missing one becomes {"type": "object"}, one with no type gets
// "type": "object"; any other type is an error. The result then passes
// the catalog's own check.
func NormalizeObjectSchema(raw json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, errors.New("is not a JSON object")
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	out := mustMarshal(m)
	if _, _, _, err := checkObjectSchema(out); err != nil {
		return nil, err
	}
	return out, nil
}

// checkObjectSchema checks that raw is a JSON object schema ("type":
// "object") and returns it re-encoded canonically (sorted keys, compact)
// together with its top-level parameters and its decoded value.
func checkObjectSchema(raw json.RawMessage) (json.RawMessage, []Param, any, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		return nil, nil, nil, errors.New(`missing: every tool needs an object schema such as {"type": "object"}`)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, nil, fmt.Errorf("not a JSON object schema: %v", err)
	}
	typ, ok := m["type"]
	if !ok {
		return nil, nil, nil, errors.New(`not an object schema: "type" is missing (want "object")`)
	}
	if typ != "object" {
		return nil, nil, nil, fmt.Errorf(`not an object schema: "type" is %s (want "object")`, compactJSON(mustMarshal(typ)))
	}
	var params []Param
	if props, ok := m["properties"]; ok {
		pm, ok := props.(map[string]any)
		if !ok {
			return nil, nil, nil, errors.New(`"properties" must be an object`)
		}
		required := map[string]bool{}
		if req, ok := m["required"].([]any); ok {
			for _, r := range req {
				if s, ok := r.(string); ok {
					required[s] = true
				}
			}
		}
		for name, p := range pm {
			desc := ""
			if ps, ok := p.(map[string]any); ok {
				desc, _ = ps["description"].(string)
			}
			params = append(params, Param{Name: name, Description: desc, Required: required[name]})
		}
		sort.Slice(params, func(i, j int) bool { return params[i].Name < params[j].Name })
	}
	return mustMarshal(m), params, m, nil
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // values decoded from JSON always encode again
	}
	return b
}

func compactJSON(raw []byte) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return buf.Bytes()
}
