package index

import "strings"

// documentTextVersion is part of every tool's content hash: change it when
// DocumentText changes, so that stored vectors are rebuilt.
const documentTextVersion = "2"

// DocumentText is the text embedded for a tool in the vector index: domain,
// name words, title, description and parameter names. It is built here and
// only here, so that every embedder sees the same text.
func DocumentText(t *Tool) string {
	parts := []string{NameWords(t.Domain) + ": " + NameWords(t.Name)}
	if t.Title != "" {
		parts = append(parts, t.Title)
	}
	if t.Description != "" {
		parts = append(parts, t.Description)
	}
	if params := t.Params(); len(params) > 0 {
		names := make([]string, len(params))
		for i, p := range params {
			names[i] = NameWords(p.Name)
		}
		parts = append(parts, "Parameters: "+strings.Join(names, ", "))
	}
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p)
		if !strings.HasSuffix(p, ".") && !strings.HasSuffix(p, "?") && !strings.HasSuffix(p, "!") {
			b.WriteByte('.')
		}
	}
	return b.String()
}
