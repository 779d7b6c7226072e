package server

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/codemode"
)

// Answers sent once where the protocol allows (issue 35 item 4).
//
// discover_tools and get_tool_schema answer with structuredContent, and
// the MCP specification (2025-06-18 onward, "Structured Content") says
// that a tool returning structured content SHOULD also return the
// serialized JSON in a text block, for backwards compatibility. Which
// of the two a client gives its model is the client's choice, and the
// protocol carries no capability that says it: Claude Code hands its
// model the structuredContent alone (the text is dropped), opencode,
// Open WebUI and Kimi Code the content text alone, Hermes both. The
// protocol version says only that a client knows the field, not that its
// model sees it: a short text sent to every 2025-06-18 client would leave
// the models of the second kind without the answer.
//
// So toolscout sends the full JSON text to every client, as the
// specification asks, except to clients known to read structuredContent:
// those get the same structuredContent and a one-line content text. A
// client is known by the name it gives at initialize (or in each
// request's _meta, for the stateless protocol): StructuredClients,
// "claude-code" by default; or it says so itself with the experimental
// capability StructuredCapability.

// StructuredCapability is the experimental client capability by which a
// client says that it reads structuredContent (its model sees it), and
// wants meta-tool answers' content text short.
const StructuredCapability = "io.github.toolscout/structured-content"

// DefaultStructuredClients are the clients known to hand their model a
// tool result's structuredContent (Options.StructuredClients when nil).
var DefaultStructuredClients = []string{"claude-code"}

// structuredClients name the clients (by their clientInfo name) that
// hand their model a result's structuredContent (Options.StructuredClients).
type structuredClients []string

// reads reports whether the client of req reads
// structuredContent.
func (c structuredClients) reads(req *mcp.CallToolRequest) bool {
	if req == nil {
		return false
	}
	if caps := req.ClientCapabilities(); caps != nil {
		if _, ok := caps.Experimental[StructuredCapability]; ok {
			return true
		}
	}
	info := req.ClientInfo()
	return info != nil && slices.Contains(c, info.Name)
}

// shortAnswers wraps a meta-tool's handler: for a client that reads
// structuredContent, its answer's content is one line saying what the
// structuredContent holds; for every other client it is the whole JSON,
// without the HTML escapes the go-sdk's would have ("<" as "\u003c"
// costs a model three tokens for one: TypeScript signatures are full of
// them).
func shortAnswers[In any](mt *metaTools, h mcp.ToolHandlerFor[In, any]) mcp.ToolHandlerFor[In, any] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		res, out, err := h(ctx, req, in)
		if err != nil || out == nil || (res != nil && res.Content != nil) {
			return res, out, err
		}
		text := shortText(out)
		if !mt.structuredClients.reads(req) {
			js, err := marshalUnescaped(out)
			if err != nil {
				return res, out, nil // the go-sdk's JSON, then
			}
			text = string(js)
		}
		if res == nil {
			res = &mcp.CallToolResult{}
		}
		res.Content = []mcp.Content{&mcp.TextContent{Text: text}}
		return res, out, nil
	}
}

// shortText says in a line what a structured answer holds.
func shortText(out any) string {
	const tail = " (the answer is in structuredContent)"
	names := func(n int, name func(int) string) string {
		var b []string
		for i := range min(n, 5) {
			b = append(b, name(i))
		}
		if n > 5 {
			b = append(b, fmt.Sprintf("%d more", n-5))
		}
		return strings.Join(b, ", ")
	}
	switch a := out.(type) {
	case SchemaAnswer:
		s := "Schemas of " + names(len(a.Tools), func(i int) string { return a.Tools[i].Name })
		if len(a.Errors) > 0 {
			s += fmt.Sprintf("; %d names not found", len(a.Errors))
		}
		return s + tail
	case DeclarationsAnswer:
		s := "TypeScript declarations of " + names(len(a.Tools), func(i int) string { return a.Tools[i].Name })
		if len(a.Errors) > 0 {
			s += fmt.Sprintf("; %d names not found or not declared", len(a.Errors))
		}
		return s + tail
	case *codemode.Answer:
		return runText(a) + tail
	case SearchAnswer:
		if len(a.Results) == 0 {
			return fmt.Sprintf("No tool found for %q", a.Query) + tail
		}
		return fmt.Sprintf("%d tools for %q: %s", len(a.Results), a.Query, names(len(a.Results), func(i int) string { return a.Results[i].Name })) + tail
	}
	return "Answer" + tail
}

// runText says in a line how a program ended: its result's size, its
// calls, and its error.
func runText(a *codemode.Answer) string {
	failed := 0
	for _, c := range a.Calls {
		if !c.OK {
			failed++
		}
	}
	s := fmt.Sprintf("The program made %s", plural(len(a.Calls), "call"))
	if failed > 0 {
		s += fmt.Sprintf(" (%d failed)", failed)
	}
	switch {
	case a.Error != nil:
		s += "; it failed (" + a.Error.Kind + "): " + a.Error.Message
	default:
		s += fmt.Sprintf("; its result is %d bytes of JSON", len(a.Result))
	}
	if len(a.Console) > 0 {
		s += fmt.Sprintf("; %s of console", plural(len(a.Console), "line"))
	}
	return s
}
