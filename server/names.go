package server

import (
	"regexp"
	"slices"
	"strings"

	"github.com/toolscout/toolscout/index"
)

// Tool names: what the modes that list tools directly (eager, core,
// dynamic, auto, compact, the eager fallback) call each tool in
// tools/list, and what prompts/list calls each prompt.
const (
	// ToolNamesQualified lists every tool as domain__tool, its qualified
	// name (the default).
	ToolNamesQualified = "qualified"
	// ToolNamesServer lists every tool under the name its server gives
	// it, and as domain__tool only where that name collides (ownName).
	ToolNamesServer = "server"
)

// ToolNamesModes lists the valid tool_names settings.
var ToolNamesModes = []string{ToolNamesQualified, ToolNamesServer}

// strictToolName is what the strictest clients accept as a tool name
// (the qualified names are made to match it too).
var strictToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ownName reports whether t is listed under its own name (t.Name) in
// ToolNamesServer mode, in cat (the catalog its caller sees): when no
// other enabled tool of cat has that name, no tool of cat has it as its
// qualified name, it is not one of toolscout's own tools, and the
// strictest clients accept it. Otherwise t is listed as its qualified
// name: every tool of a colliding name is, so the rule depends on the
// catalog alone, not on which server connected first, and a server added
// later changes only the names it shares.
func ownName(cat *index.Catalog, t *index.Tool) bool {
	if t.Name == t.QualifiedName || reservedName(t.Name) || !strictToolName.MatchString(t.Name) {
		return false
	}
	if o := cat.Tool(t.Name); o != nil && o != t {
		return false
	}
	for _, o := range cat.ToolsWithName(t.Name) {
		if o != t && !o.Disabled {
			return false
		}
	}
	return true
}

// listedName is what t is listed as under the tool_names setting mode.
func listedName(cat *index.Catalog, t *index.Tool, mode string) string {
	if mode == ToolNamesServer && ownName(cat, t) {
		return t.Name
	}
	return t.QualifiedName
}

// reservedName reports whether name is one of toolscout's own tools, in
// any mode: an upstream's tool is never listed under it.
func reservedName(name string) bool {
	return ownTool(name) || name == RunCode
}

// ownNamed returns the enabled tools of cat whose own name is name.
func ownNamed(cat *index.Catalog, name string) []*index.Tool {
	var out []*index.Tool
	for _, t := range cat.ToolsWithName(name) {
		if !t.Disabled {
			out = append(out, t)
		}
	}
	return out
}

// candidateNames lists ts's qualified names, sorted, for an error.
func candidateNames(ts []*index.Tool) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.QualifiedName
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
