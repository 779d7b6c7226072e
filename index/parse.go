package index

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolscout/toolscout/internal/text"
)

// ParseCatalog parses one catalog.json document into its domains (the
// tools are checked when a catalog is built from them: NewCatalog). file
// labels errors.
func ParseCatalog(file string, data []byte) ([]DomainSpec, error) {
	// One decoding pass when the document is well formed; the pass below,
	// domain by domain and tool by tool, only runs to locate an error.
	var fast struct {
		Domains []struct {
			Name        string     `json:"name"`
			Description string     `json:"description"`
			Tools       []ToolSpec `json:"tools"`
		} `json:"domains"`
	}
	if err := json.Unmarshal(data, &fast); err == nil && fast.Domains != nil {
		specs := make([]DomainSpec, len(fast.Domains))
		for i, d := range fast.Domains {
			specs[i] = DomainSpec{Name: d.Name, Description: d.Description, Source: file, Tools: d.Tools}
		}
		return specs, nil
	}
	var top struct {
		Domains []json.RawMessage `json:"domains"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, jsonError(file, "", data, err)
	}
	if top.Domains == nil {
		return nil, &CatalogError{File: file, Path: "domains", Reason: `missing: a catalog is {"domains": [...]}`}
	}
	specs := make([]DomainSpec, 0, len(top.Domains))
	for i, raw := range top.Domains {
		path := fmt.Sprintf("domains[%d]", i)
		var d struct {
			Name        string            `json:"name"`
			Description string            `json:"description"`
			Tools       []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, jsonError(file, path, raw, err)
		}
		spec := DomainSpec{Name: d.Name, Description: d.Description, Source: file}
		for j, rawTool := range d.Tools {
			var ts ToolSpec
			if err := json.Unmarshal(rawTool, &ts); err != nil {
				return nil, jsonError(file, fmt.Sprintf("%s.tools[%d]", path, j), rawTool, err)
			}
			spec.Tools = append(spec.Tools, ts)
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

func jsonError(file, path string, data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := lineCol(data, syn.Offset)
		reason := fmt.Sprintf("invalid JSON at line %d, column %d: %v", line, col, syn)
		return &CatalogError{File: file, Path: path, Reason: reason}
	case errors.As(err, &typ):
		p := path
		if typ.Field != "" {
			if p != "" {
				p += "."
			}
			p += typ.Field
		}
		return &CatalogError{File: file, Path: p, Reason: fmt.Sprintf("expected %s, found JSON %s", text.JSONKind(typ.Type), typ.Value)}
	default:
		return &CatalogError{File: file, Path: path, Reason: err.Error()}
	}
}

func lineCol(data []byte, offset int64) (int, int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// LoadCatalogFiles reads, parses and validates catalog files. Either every
// file loads or an error names the first problem; nothing is half-loaded.
func LoadCatalogFiles(paths []string) (*Catalog, error) {
	src, err := ReadCatalogSource(paths)
	if err != nil {
		return nil, err
	}
	specs, err := src.Specs()
	if err != nil {
		return nil, err
	}
	return NewCatalog(specs)
}
