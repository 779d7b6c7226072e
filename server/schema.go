package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server/arguments"
	"github.com/toolscout/toolscout/server/callers"
)

// SchemaArgs are get_tool_schema's arguments.
type SchemaArgs struct {
	ToolName  string   `json:"tool_name,omitempty"`
	ToolNames []string `json:"tool_names,omitempty"`
	// IncludeExamples false leaves the examples out (nil: included).
	IncludeExamples *bool `json:"include_examples,omitempty"`
	// Format is "json" (the default: JSON Schemas, a SchemaAnswer) or
	// "typescript" (declarations for code mode, a DeclarationsAnswer:
	// declarations.go).
	Format string `json:"format,omitempty"`
}

// ToolSchema is one tool's full description.
type ToolSchema struct {
	Name         string          `json:"name"`
	Domain       string          `json:"domain"`
	Group        string          `json:"group,omitempty"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	// Warnings are the tool's poisoning flags, when it has any.
	Warnings []string `json:"warnings,omitempty"`
	// Deprecated is true, or says what to use instead, for a deprecated
	// tool; Disabled marks a tool that does not run.
	Deprecated index.Deprecation `json:"deprecated,omitempty"`
	Disabled   bool              `json:"disabled,omitempty"`
	// Held says, for a tool whose server changed its definition since it
	// was approved (pinned definitions, index/pin), that it does not run
	// until an operator approves the change: the description and schema
	// shown are the approved ones. An agent learns it before it calls.
	Held string `json:"held,omitempty"`
	// Examples are argument objects valid against InputSchema (Examples).
	Examples []arguments.Example `json:"examples,omitempty"`
	// RelatedTools are the nearest tools of the same domain.
	RelatedTools []RelatedTool `json:"related_tools,omitempty"`
}

// HeldReporter is an Executor that holds tools back whose definition
// changed upstream (the gateway, with pinned definitions).
type HeldReporter interface {
	Held(domain, tool string) bool
}

// UncheckedReporter is a HeldReporter that also holds tools first seen
// after its pinned definitions were damaged: there is no approved
// definition to show, so the listed one is (the gateway).
type UncheckedReporter interface {
	Unchecked(domain, tool string) bool
}

// SchemaError is a name get_tool_schema could not resolve.
type SchemaError struct {
	ToolName   string   `json:"tool_name"`
	Error      string   `json:"error"`
	Candidates []string `json:"candidates,omitempty"`
}

// SchemaAnswer is get_tool_schema's answer.
type SchemaAnswer struct {
	Tools  []ToolSchema  `json:"tools"`
	Errors []SchemaError `json:"errors,omitempty"`
}

// MaxBatch is the most tools one get_tool_schema call describes.
const MaxBatch = 20

func (mt *metaTools) getSchema(ctx context.Context, req *mcp.CallToolRequest, args SchemaArgs) (*mcp.CallToolResult, any, error) {
	mt.start.waitReady(ctx)
	names := args.ToolNames
	if args.ToolName != "" {
		names = append([]string{args.ToolName}, names...)
	}
	if len(names) == 0 {
		return nil, nil, errors.New("pass tool_name (one tool) or tool_names (several); find names with discover_tools")
	}
	if len(names) > MaxBatch {
		return nil, nil, fmt.Errorf("%d tool names: ask for at most %d at a time", len(names), MaxBatch)
	}
	if err := schemaFormat(args.Format); err != nil {
		return nil, nil, err
	}
	examples := args.IncludeExamples == nil || *args.IncludeExamples
	who := mt.scope.callerIn(ctx)
	cat := mt.scope.catalogFor(who)
	out := SchemaAnswer{Tools: []ToolSchema{}}
	var resolved []*index.Tool
	for _, name := range names {
		t, serr := mt.scope.resolveToolFor(who, cat, name)
		if serr != nil {
			out.Errors = append(out.Errors, *serr)
			continue
		}
		if args.Format == FormatTypeScript {
			resolved = append(resolved, t)
			continue
		}
		related, err := mt.related(ctx, who, cat, t)
		if err != nil {
			mt.log.Warn("related tools unavailable", "tool", t.QualifiedName, "err", err)
		}
		ts := ToolSchema{
			Name: t.QualifiedName, Domain: t.Domain, Group: t.Group, Title: t.Title,
			Description: t.Description, InputSchema: shownInput(t.InputSchema()), OutputSchema: shownOutput(t.OutputSchema()), Annotations: t.Annotations(),
			Warnings: t.Warnings(), Deprecated: index.Deprecation(t.Deprecated), Disabled: t.Disabled, RelatedTools: relatedEntries(related),
		}
		if mt.status.held(t) {
			ts.Held = mt.status.heldNote(t)
		}
		if examples {
			ts.Examples = mt.status.examples(t)
		}
		fitBudget(&ts, t.Name)
		out.Tools = append(out.Tools, ts)
	}
	if len(out.Tools) == 0 && len(resolved) == 0 {
		msgs := make([]string, len(out.Errors))
		for i, e := range out.Errors {
			msgs[i] = e.Error
		}
		return nil, nil, errors.New(strings.Join(msgs, "\n"))
	}
	if args.Format == FormatTypeScript {
		a := mt.decl.declareSchemas(cat, resolved, out.Errors, examples)
		if mt.structuredClients.reads(req) {
			return nil, a, nil // shortAnswers says it in a line
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: declarationsText(a)}}}, a, nil
	}
	return nil, out, nil
}

// resolve finds a tool by qualified name, domain/tool or unique bare name,
// or says why not: did-you-mean names for unknown ones, the qualified
// candidates for ambiguous ones.
func resolve(cat *index.Catalog, name string) (*index.Tool, *SchemaError) {
	if len(name) > search.MaxNameBytes {
		// No tool has such a name: say so without echoing it whole or
		// comparing it with every tool name.
		return nil, &SchemaError{ToolName: search.Quote(name, 100), Error: fmt.Sprintf("unknown tool %s: tool names are at most 64 characters; find names with discover_tools", search.Quote(name, 100))}
	}
	t, err := cat.Resolve(name)
	if err == nil {
		return t, nil
	}
	var amb *index.AmbiguousError
	if errors.As(err, &amb) {
		var cands []string
		for _, c := range amb.Candidates {
			cands = append(cands, c.QualifiedName)
		}
		return nil, &SchemaError{ToolName: name, Candidates: cands,
			Error: fmt.Sprintf("tool %q exists in %d domains: use one of %s", name, len(cands), strings.Join(cands, ", "))}
	}
	sugg := search.Suggest(cat, name, 3)
	msg := fmt.Sprintf("unknown tool %q", name)
	if len(sugg) > 0 {
		msg += fmt.Sprintf("; did you mean %s?", strings.Join(sugg, ", "))
	}
	msg += " Search with discover_tools and a query to find tools."
	return nil, &SchemaError{ToolName: name, Error: msg, Candidates: sugg}
}

// related returns the tools near t that who sees: the index is asked for
// as many more as t's domain hides from who, so that hiding cuts none of
// the maxRelated.
func (mt *metaTools) related(ctx context.Context, who *callers.Caller, cat *index.Catalog, t *index.Tool) ([]*index.Tool, error) {
	if who == nil {
		return mt.eng.Related(ctx, t, maxRelated)
	}
	hidden := 0
	if d := mt.eng.Catalog().Domain(t.Domain); d != nil {
		if own := cat.Domain(t.Domain); own != nil {
			hidden = len(d.Tools) - len(own.Tools)
		}
	}
	all, err := mt.eng.Related(ctx, t, maxRelated+hidden)
	var out []*index.Tool
	for _, r := range all {
		if cat.Tool(r.QualifiedName) == r && len(out) < maxRelated {
			out = append(out, r)
		}
	}
	return out, err
}

// RelatedTool is a tool near another: same domain, nearest by the index.
type RelatedTool struct {
	Name    string `json:"name"`
	Summary string `json:"summary,omitempty"`
	// Warnings are the tool's poisoning flags, as discover_tools gives
	// them: a flagged tool is not offered as a harmless alternative.
	Warnings []string `json:"warnings,omitempty"`
}

// maxRelated is the most related tools get_tool_schema returns per tool.
const maxRelated = 3

// relatedEntries lists the related tools that are not disabled.
func relatedEntries(tools []*index.Tool) []RelatedTool {
	out := make([]RelatedTool, 0, len(tools))
	for _, t := range tools {
		if !t.Disabled {
			out = append(out, RelatedTool{Name: t.QualifiedName, Summary: t.Summary, Warnings: t.Warnings()})
		}
	}
	return out
}

// FolderReporter is implemented by executors that know the folders a
// server may touch (the gateway, from a server's command line: the
// filesystem server's allowed directories): the examples of its tools
// use paths inside them.
type FolderReporter interface {
	// Folders returns the folders of domain's server (none when unknown).
	Folders(domain string) []string
}
