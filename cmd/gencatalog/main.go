// Command gencatalog turns the compact source of the built-in catalog
// (index/builtin/catalog.src) into catalog.json, the format users write.
//
//	go run ./cmd/gencatalog -in index/builtin/catalog.src -out index/builtin/catalog.json
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
)

type property struct {
	Type        string   `json:"type"`
	Description string   `json:"description,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	Items       *item    `json:"items,omitempty"`
}

type item struct {
	Type string `json:"type"`
}

type schema struct {
	Type       string               `json:"type"`
	Properties map[string]*property `json:"properties"`
	Required   []string             `json:"required,omitempty"`
}

type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema schema          `json:"inputSchema"`
	Annotations map[string]bool `json:"annotations,omitempty"`
	Group       string          `json:"group,omitempty"`
}

type domain struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Tools       []*tool `json:"tools"`
}

func main() {
	in := flag.String("in", "index/builtin/catalog.src", "source file")
	out := flag.String("out", "index/builtin/catalog.json", "output file")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gencatalog:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	var domains []*domain
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "@") {
			name, desc, _ := strings.Cut(line[1:], "|")
			domains = append(domains, &domain{Name: strings.TrimSpace(name), Description: strings.TrimSpace(desc)})
			continue
		}
		if len(domains) == 0 {
			return fmt.Errorf("%s:%d: tool before any @domain", in, n)
		}
		t, err := parseTool(line)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", in, n, err)
		}
		d := domains[len(domains)-1]
		d.Tools = append(d.Tools, t)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", " ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"domains": domains}); err != nil {
		return err
	}
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

func parseTool(line string) (*tool, error) {
	parts := strings.SplitN(line, "|", 3)
	if len(parts) < 2 {
		return nil, fmt.Errorf("want name [group] {ann} | description | params")
	}
	head := strings.TrimSpace(parts[0])
	t := &tool{Description: strings.TrimSpace(parts[1]), InputSchema: schema{Type: "object", Properties: map[string]*property{}}}
	if i := strings.Index(head, "{"); i >= 0 {
		j := strings.Index(head, "}")
		for _, a := range strings.Fields(head[i+1 : j]) {
			if t.Annotations == nil {
				t.Annotations = map[string]bool{}
			}
			switch a {
			case "ro":
				t.Annotations["readOnlyHint"] = true
			case "destructive":
				t.Annotations["destructiveHint"] = true
			default:
				return nil, fmt.Errorf("unknown annotation %q", a)
			}
		}
		head = head[:i] + head[j+1:]
	}
	if i := strings.Index(head, "["); i >= 0 {
		j := strings.Index(head, "]")
		t.Group = head[i+1 : j]
		head = head[:i] + head[j+1:]
	}
	t.Name = strings.TrimSpace(head)
	if t.Annotations == nil || !t.Annotations["readOnlyHint"] {
		if t.Annotations == nil {
			t.Annotations = map[string]bool{}
		}
		t.Annotations["readOnlyHint"] = false
	}
	if len(parts) == 3 {
		for _, p := range strings.Split(parts[2], ";") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			fs := strings.SplitN(p, ":", 3)
			if len(fs) < 2 {
				return nil, fmt.Errorf("parameter %q: want name:type:description", p)
			}
			name, typ := fs[0], fs[1]
			prop := &property{}
			if len(fs) == 3 {
				prop.Description = fs[2]
			}
			if strings.HasSuffix(typ, "!") {
				typ = strings.TrimSuffix(typ, "!")
				t.InputSchema.Required = append(t.InputSchema.Required, name)
			}
			if i := strings.Index(typ, "{"); i >= 0 {
				prop.Enum = strings.Split(strings.TrimSuffix(typ[i+1:], "}"), ",")
				typ = typ[:i]
			}
			switch typ {
			case "string", "integer", "number", "boolean", "object":
			case "array":
				prop.Items = &item{Type: "string"}
				if name == "values" || name == "files" || name == "edits" || name == "entities" || name == "relations" || name == "observations" || name == "deletions" || name == "fields" || name == "children" || name == "sorts" || name == "rules" {
					prop.Items = &item{Type: "object"}
				}
			default:
				return nil, fmt.Errorf("parameter %q: unknown type %q", name, typ)
			}
			prop.Type = typ
			t.InputSchema.Properties[name] = prop
		}
	}
	return t, nil
}
