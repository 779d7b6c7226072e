package tsdecl

import (
	"bytes"
	"strings"
)

// DefaultMaxSignature bounds one signature's text (Signatures): a tool
// whose signature is longer gets none, and its declaration is asked for
// (get_tool_schema) instead.
const DefaultMaxSignature = 600

// Signatures returns, for each tool, its call on one line without
// comments, the form a model can write a program against once it has
// found the tool:
//
//	tools.memory.open_nodes(args: { names: string[] }): Promise<{ entities: Array<{ name: string; ... }> }>
//
// The types are those Declare gives (the promise's type unknown without
// an output schema); what Declare says in comments (descriptions,
// defaults, examples, notes) is left out. A signature longer than
// maxBytes (DefaultMaxSignature when 0) is "", as is one of a tool that
// cannot be declared within opts.MaxDepth. opts.Names is as for Declare,
// so that a signature names the tool the sandbox calls by it.
func Signatures(tools []Tool, opts Options, maxBytes int) []string {
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxSignature
	}
	domainIDs, toolIDs := identifiers(tools, opts.Names)
	out := make([]string, len(tools))
	for i, t := range tools {
		var b strings.Builder
		b.WriteString("tools." + domainIDs[t.Domain] + "." + toolIDs[t.Domain][t.Name] + "(args")
		args := typeOf(t.InputSchema, opts.MaxDepth)
		if optionalArgs(args) {
			b.WriteString("?")
		}
		b.WriteString(": ")
		if !oneLine(&b, args, maxBytes) {
			continue
		}
		b.WriteString("): Promise<")
		if len(bytes.TrimSpace(t.OutputSchema)) == 0 {
			b.WriteString("unknown")
		} else if !oneLine(&b, typeOf(t.OutputSchema, opts.MaxDepth), maxBytes) {
			continue
		}
		b.WriteString(">")
		if b.Len() <= maxBytes {
			out[i] = b.String()
		}
	}
	return out
}

// oneLine writes t on one line, without its comments, unless b would
// pass limit bytes.
func oneLine(b *strings.Builder, t *tsType, limit int) bool {
	return inlineTo(b, t, limit, false)
}
