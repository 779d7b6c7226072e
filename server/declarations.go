package server

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/server/codemode/tsdecl"
)

// TypeScript declarations of tools for code mode (issue 44, item 2):
// get_tool_schema with format "typescript" and discover_tools with
// detail "typescript" declare the tools they name as a code-mode
// program calls them, await tools.<domain>.<tool>(args), with the types
// of their arguments and, where the tool has an output schema, of its
// structured result (server/codemode/tsdecl writes them).
//
// Identifiers are chosen among every tool of each domain the caller
// sees (codeNames), not only those declared, so that a declaration
// names the tool the sandbox calls by that identifier.
//
// The text goes to the model as it is, not as a JSON string (whose
// escaped quotes and newlines cost tokens and read badly): to clients
// that read the content text, get_tool_schema's content is the
// declarations, and discover_tools' content is its JSON answer without
// the declarations, then the declarations in a second text block. The
// structuredContent has them in its "typescript" field.

// Formats of get_tool_schema's answer.
const (
	FormatJSON       = "json"
	FormatTypeScript = "typescript"
)

// Details of discover_tools' entries.
const (
	DetailSummary    = "summary"
	DetailTypeScript = "typescript"
)

// DeclarationsBudget is what the declarations in one discover_tools
// answer should stay within, in o200k_base tokens: about ten tools at
// get_tool_schema's SchemaBudget. Tools past it are left out of the
// declarations whole, in ranking or listing order, and named in
// typescript_note.
const DeclarationsBudget = 4000

// declarationsBudgetBytes is DeclarationsBudget in bytes of text, at 3
// bytes a token: the declarations of the reference servers run at 4.1
// to 4.5, but without repeated comments, those of many tools that share
// their properties' descriptions are mostly code, as dense as 3.3
// (TestDiscoverTypeScriptBudget's records).
const declarationsBudgetBytes = DeclarationsBudget * 3

// DeclaredTool is a tool get_tool_schema declared.
type DeclaredTool struct {
	Name   string `json:"name"`
	Domain string `json:"domain"`
	// Call is how a code-mode program calls the tool:
	// tools.<domain>.<tool>, both made identifiers (tsdecl.Idents).
	Call string `json:"call"`
	// Warnings, Deprecated, Disabled and Held are as in ToolSchema; the
	// declarations' comments say them too.
	Warnings   []string          `json:"warnings,omitempty"`
	Deprecated index.Deprecation `json:"deprecated,omitempty"`
	Disabled   bool              `json:"disabled,omitempty"`
	Held       string            `json:"held,omitempty"`
}

// DeclarationsAnswer is get_tool_schema's answer with format
// "typescript".
type DeclarationsAnswer struct {
	// TypeScript declares the tools.
	TypeScript string         `json:"typescript"`
	Tools      []DeclaredTool `json:"tools"`
	Errors     []SchemaError  `json:"errors,omitempty"`
}

// addCodeInputs offers get_tool_schema's format in the meta-tools'
// input schemas: in code mode only. Every mode accepts it, and
// discover_tools' detail (schemaFormat and discoverDetail check them),
// but listing them costs about 30 tokens each, which issue 23's 420 for
// the meta tools/list (TestTokenBudget, 415 without them) has no room
// for, for arguments that only code mode's programs need. Code mode
// lists format alone: its searches give each result's signature
// (signListed), which is what detail "typescript" was listed for, at
// 30 tokens of every client's context.
func addCodeInputs(inputs map[string]map[string]any) {
	inputs[GetToolSchema]["properties"].(map[string]any)["format"] = map[string]any{"type": "string", "enum": []string{FormatJSON, FormatTypeScript},
		"description": "json (default): schemas; typescript: declarations for code mode"}
}

// schemaFormat checks get_tool_schema's format.
func schemaFormat(f string) error {
	switch f {
	case "", FormatJSON, FormatTypeScript:
		return nil
	}
	return fmt.Errorf("format %q: use %q (the default: JSON Schemas) or %q (TypeScript declarations for code mode)", f, FormatJSON, FormatTypeScript)
}

// discoverDetail checks discover_tools' detail against what it lists.
func discoverDetail(args DiscoverArgs) error {
	switch args.Detail {
	case "", DetailSummary:
		return nil
	case DetailTypeScript:
		if args.Query == "" && args.Domain == "" {
			return fmt.Errorf("detail %q declares the tools of a search or of a domain: pass query or domain", DetailTypeScript)
		}
		return nil
	}
	return fmt.Errorf("detail %q: use %q (the default: a one-line summary a tool) or %q (also TypeScript declarations for code mode)", args.Detail, DetailSummary, DetailTypeScript)
}

// codeNames returns the names identifiers are chosen among: every
// domain of cat, and every tool of the domains of tools.
func codeNames(cat *index.Catalog, tools []*index.Tool) map[string][]string {
	names := make(map[string][]string, len(cat.Domains()))
	for _, d := range cat.Domains() {
		names[d.Name] = nil
	}
	for _, t := range tools {
		if names[t.Domain] != nil {
			continue
		}
		if d := cat.Domain(t.Domain); d != nil {
			ns := make([]string, len(d.Tools))
			for i, dt := range d.Tools {
				ns[i] = dt.Name
			}
			names[t.Domain] = ns
		}
	}
	return names
}

// callPath is how a code-mode program calls t: tools.<domain>.<tool>.
func callPath(t *index.Tool, names map[string][]string) string {
	domains := make([]string, 0, len(names)+1)
	for d := range names {
		domains = append(domains, d)
	}
	return "tools." + tsdecl.Idents(append(domains, t.Domain))[t.Domain] + "." + tsdecl.Idents(append(names[t.Domain], t.Name))[t.Name]
}

// declarer declares tools in TypeScript for code mode's answers
// (tsdecl), with what the executor says of each.
type declarer struct {
	status toolStatus
}

// declaredTool is t as tsdecl declares it, its comment saying what
// get_tool_schema's fields would: warnings, held, disabled, deprecated,
// and, with examples, its examples' arguments.
func (dc declarer) declaredTool(t *index.Tool, examples bool) tsdecl.Tool {
	d := tsdecl.Tool{Domain: t.Domain, Name: t.Name, QualifiedName: t.QualifiedName, Description: t.Description,
		InputSchema: t.InputSchema(), OutputSchema: t.OutputSchema(), Deprecated: t.Deprecated}
	for _, w := range t.Warnings() {
		d.Notes = append(d.Notes, "Warning: "+w)
	}
	if dc.status.held(t) {
		d.Notes = append(d.Notes, "Held: "+dc.status.heldNote(t))
	}
	if t.Disabled {
		d.Notes = append(d.Notes, "Disabled: it does not run.")
	}
	if examples {
		for _, ex := range dc.status.examples(t) {
			if b, err := json.Marshal(ex.Arguments); err == nil {
				d.Examples = append(d.Examples, b)
			}
		}
	}
	return d
}

// declareSchemas is get_tool_schema with format "typescript": the
// declarations of the tools resolved, each with its examples unless
// examples is false or they take its declaration over
// schemaBudgetBytes (as fitBudget keeps a JSON answer within
// SchemaBudget, the definition is never cut).
func (dc declarer) declareSchemas(cat *index.Catalog, tools []*index.Tool, errs []SchemaError, examples bool) DeclarationsAnswer {
	names := codeNames(cat, tools)
	out := DeclarationsAnswer{Tools: []DeclaredTool{}, Errors: errs}
	decls := make([]tsdecl.Tool, 0, len(tools))
	for _, t := range tools {
		d := dc.declaredTool(t, examples)
		if len(d.Examples) > 0 {
			if one, _ := tsdecl.Declare([]tsdecl.Tool{d}, tsdecl.Options{Names: names}); len(one) > schemaBudgetBytes {
				d.Examples = nil
			}
		}
		decls = append(decls, d)
		dt := DeclaredTool{Name: t.QualifiedName, Domain: t.Domain, Call: callPath(t, names),
			Warnings: t.Warnings(), Deprecated: index.Deprecation(t.Deprecated), Disabled: t.Disabled}
		if dc.status.held(t) {
			dt.Held = dc.status.heldNote(t)
		}
		out.Tools = append(out.Tools, dt)
	}
	text, omitted := tsdecl.Declare(decls, tsdecl.Options{Names: names})
	for _, name := range omitted {
		out.Errors = append(out.Errors, SchemaError{ToolName: name,
			Error: fmt.Sprintf("%s's declaration does not fit in one answer (%d bytes): ask for it alone, or with format %q", name, tsdecl.DefaultMaxBytes, FormatJSON)})
	}
	out.TypeScript = text
	return out
}

// declarationsText is what a client that reads the content text gets
// of a DeclarationsAnswer: the declarations, then each name not
// resolved as a comment.
func declarationsText(a DeclarationsAnswer) string {
	var b strings.Builder
	b.WriteString(a.TypeScript)
	for _, e := range a.Errors {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("// " + strings.ReplaceAll(e.Error, "\n", " "))
	}
	return b.String()
}

// declareListed returns the declarations of the tools a discover_tools
// answer lists, within declarationsBudgetBytes, and a note naming those
// left out ("" when none).
func (dc declarer) declareListed(cat *index.Catalog, tools []*index.Tool) (text, note string) {
	names := codeNames(cat, tools)
	decls := make([]tsdecl.Tool, len(tools))
	for i, t := range tools {
		decls[i] = dc.declaredTool(t, false)
	}
	text, omitted := tsdecl.Declare(decls, tsdecl.Options{Names: names, MaxBytes: declarationsBudgetBytes})
	if len(omitted) > 0 {
		note = fmt.Sprintf("%d of the %d tools listed are not declared, to keep the answer within about %d tokens: %s; get_tool_schema with format %q declares them",
			len(omitted), len(tools), DeclarationsBudget, strings.Join(omitted, ", "), FormatTypeScript)
	}
	return text, note
}

// ExecutableReporter is an Executor that knows, before a call, which
// domains it can run tools of (the gateway: those of a configured
// server; a catalog's other domains are listed, not run).
type ExecutableReporter interface {
	Executable(domain string) bool
}

// signListed gives each entry of a search's answer in code mode its
// signature (tsdecl.Signatures), so that a program can be written after
// the search alone: in ranking order, each within
// tsdecl.DefaultMaxSignature bytes and all within
// declarationsBudgetBytes; an entry past either has none, and
// get_tool_schema declares it. A tool a program cannot call (listed
// from a catalog, with no server to run it; disabled; held) has none
// either (get_tool_schema says why it does not run):
// its signature would cost tokens to invite a call that fails. cat is
// the caller's catalog, full the whole one the entries were found in.
func (dc declarer) signListed(cat, full *index.Catalog, entries []ToolEntry) {
	tools := make([]*index.Tool, len(entries))
	var found []*index.Tool
	for i, e := range entries {
		if t := full.Tool(e.Name); t != nil && dc.status.runnable(t) {
			tools[i] = t
			found = append(found, t)
		}
	}
	decls := make([]tsdecl.Tool, len(found))
	for i, t := range found {
		decls[i] = tsdecl.Tool{Domain: t.Domain, Name: t.Name, InputSchema: t.InputSchema(), OutputSchema: t.OutputSchema()}
	}
	sigs := tsdecl.Signatures(decls, tsdecl.Options{Names: codeNames(cat, found)}, 0)
	left := declarationsBudgetBytes
	for i, t := range tools {
		if t == nil {
			continue
		}
		sig := sigs[0]
		sigs = sigs[1:]
		if sig == "" || len(sig) > left {
			continue
		}
		entries[i].Signature = sig
		left -= len(sig)
	}
}

// withDeclarations sets the content of a discover_tools answer that
// carries declarations, for a client that reads the content text: the
// JSON answer without them, then the declarations as they are.
// structured says that the client reads structuredContent.
func withDeclarations(res *mcp.CallToolResult, out any, structured bool) (*mcp.CallToolResult, error) {
	var rest any
	var ts string
	switch a := out.(type) {
	case SearchAnswer:
		ts, a.TypeScript = a.TypeScript, ""
		rest = a
	case DomainListing:
		ts, a.TypeScript = a.TypeScript, ""
		rest = a
	default:
		return res, nil
	}
	if ts == "" || structured {
		return res, nil
	}
	js, err := marshalUnescaped(rest)
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = &mcp.CallToolResult{}
	}
	res.Content = []mcp.Content{&mcp.TextContent{Text: string(js)}, &mcp.TextContent{Text: ts}}
	return res, nil
}

// entryTools returns the tools of a discover_tools answer's entries,
// in their order.
func entryTools(cat *index.Catalog, entries []ToolEntry) []*index.Tool {
	out := make([]*index.Tool, 0, len(entries))
	for _, e := range entries {
		if t := cat.Tool(e.Name); t != nil {
			out = append(out, t)
		}
	}
	return out
}
