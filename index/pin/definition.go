package pin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/toolscout/toolscout/index"
)

// Definition is what an upstream server says a tool is: what a model
// reads to decide to call it and how. Its JSON values are canonical
// (object keys sorted, no insignificant space), so that the same
// definition always hashes the same.
type Definition struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
}

// Of returns the definition of ts: its upstream's fields, not the
// config's (group, tags, enabled, deprecated).
func Of(ts index.ToolSpec) Definition {
	return Definition{Name: ts.Name, Title: ts.Title, Description: ts.Description,
		InputSchema: canonical(ts.InputSchema), OutputSchema: canonical(ts.OutputSchema), Annotations: canonical(ts.Annotations)}
}

// canonical re-encodes raw with sorted keys and no insignificant space
// (numbers kept as written); raw that is not JSON is kept as it is, and
// null or empty is dropped.
func canonical(raw json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return append(json.RawMessage(nil), t...)
	}
	out, err := marshal(v, "")
	if err != nil {
		return append(json.RawMessage(nil), t...)
	}
	return out
}

// marshal encodes v without HTML escaping (a description's "<" stays
// "<" in a diff), indented by indent when it is not "".
func marshal(v any, indent string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// Hash returns the hex SHA-256 of the definition's canonical JSON (its
// JSON values made canonical again: the hash of a definition read back
// from a file does not depend on how the file escaped it).
func (d Definition) Hash() string {
	d.InputSchema, d.OutputSchema, d.Annotations = canonical(d.InputSchema), canonical(d.OutputSchema), canonical(d.Annotations)
	b, _ := marshal(d, "")
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Text returns the definition as indented JSON, one schema property a
// line: the form diffs are made of.
func (d Definition) Text() string {
	d.InputSchema, d.OutputSchema, d.Annotations = canonical(d.InputSchema), canonical(d.OutputSchema), canonical(d.Annotations)
	out, _ := marshal(d, "  ")
	return string(out) + "\n"
}

// Fields names the parts of the definition that differ between d and
// other ("description", "inputSchema", ...).
func (d Definition) Fields(other Definition) []string {
	var out []string
	add := func(name string, differ bool) {
		if differ {
			out = append(out, name)
		}
	}
	add("name", d.Name != other.Name)
	add("title", d.Title != other.Title)
	add("description", d.Description != other.Description)
	add("inputSchema", !bytes.Equal(d.InputSchema, other.InputSchema))
	add("outputSchema", !bytes.Equal(d.OutputSchema, other.OutputSchema))
	add("annotations", !bytes.Equal(d.Annotations, other.Annotations))
	return out
}

// Diff returns the unified diff from the approved definition to the
// listed one, with three lines of context, labelled so.
func Diff(approved, listed Definition) string {
	s, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(approved.Text()), B: difflib.SplitLines(listed.Text()),
		FromFile: "approved", ToFile: "listed now", Context: 3,
	})
	if err != nil {
		return ""
	}
	return strings.TrimRight(s, "\n")
}

// serve returns ts with d's definition: what the config says of the tool
// (ts's group, tags, state) over what was approved.
func (d Definition) serve(ts index.ToolSpec) index.ToolSpec {
	ts.Name, ts.Title, ts.Description = d.Name, d.Title, d.Description
	ts.InputSchema, ts.OutputSchema, ts.Annotations = d.InputSchema, d.OutputSchema, d.Annotations
	return ts
}
