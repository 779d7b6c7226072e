package index

import (
	"bytes"
	"encoding/json"
	"errors"
)

// A tool's state beside its content: a catalog file (or an upstream's
// config entry) may turn a tool off ("enabled": false) or mark it
// deprecated ("deprecated": true, or a string saying what to use
// instead). Neither changes what is indexed.

// MaxDeprecatedBytes bounds a deprecation message.
const MaxDeprecatedBytes = 300

// DeprecatedTrue is the deprecation message of a tool whose catalog said
// "deprecated": true.
const DeprecatedTrue = "deprecated"

// Deprecation is the "deprecated" field of a catalog tool: "" when the
// tool is not deprecated, else why, or what to use instead. In JSON it
// is true, false or a string.
type Deprecation string

// UnmarshalJSON reads true (DeprecatedTrue), false or null (not
// deprecated), or a string.
func (d *Deprecation) UnmarshalJSON(b []byte) error {
	switch b = bytes.TrimSpace(b); string(b) {
	case "true":
		*d = DeprecatedTrue
		return nil
	case "false", "null":
		*d = ""
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New(`"deprecated" must be true, false or a string saying what to use instead`)
	}
	*d = Deprecation(s)
	return nil
}

// MarshalJSON writes true for DeprecatedTrue, else the message.
func (d Deprecation) MarshalJSON() ([]byte, error) {
	if d == DeprecatedTrue {
		return []byte("true"), nil
	}
	return json.Marshal(string(d))
}

// toolState is the enabled field of ts in a digest: "" unset, "1" true,
// "0" false.
func toolState(ts ToolSpec) string {
	switch {
	case ts.Enabled == nil:
		return ""
	case *ts.Enabled:
		return "1"
	}
	return "0"
}
