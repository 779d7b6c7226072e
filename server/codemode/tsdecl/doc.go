// Package tsdecl writes TypeScript declarations of tools from their JSON
// Schemas, the types a model writes a code-mode program against
// (get_tool_schema with format "typescript", discover_tools with detail
// "typescript"): a function a tool, in a namespace a domain, as the
// sandbox calls them, await tools.<domain>.<tool>(args).
//
//	text, omitted := tsdecl.Declare([]tsdecl.Tool{{
//		Domain: "memory", Name: "open_nodes", QualifiedName: "memory__open_nodes",
//		Description: "Open specific nodes in the knowledge graph by their names",
//		InputSchema: json.RawMessage(`{"type":"object","properties":{"names":{"type":"array","items":{"type":"string"}}},"required":["names"]}`),
//	}}, tsdecl.Options{})
//	// declare namespace tools.memory {
//	//   /** Open specific nodes in the knowledge graph by their names */
//	//   function open_nodes(args: { names: string[] }): Promise<unknown>;
//	// }
//
// From a schema it declares: types (integer as number, a type array as a
// union), enum and const as literals, required and optional (?)
// properties in the schema's order, keys that are not identifiers quoted,
// additionalProperties and patternProperties as index signatures, items
// and prefixItems (arrays, tuples), anyOf and oneOf as unions, allOf as
// an intersection, nullable, local $refs ($defs, definitions, any JSON
// Pointer in the document) expanded in place, descriptions and defaults
// as comments. The rest (formats, bounds, patterns, conditionals) is
// left to the validation of the call; what cannot be said, unknown.
//
// Everything is bounded, whatever the schema: nesting ([DefaultMaxDepth]),
// the schemas expanded per document (a $ref met again inside itself, and
// any past a few thousand, are unknown), and the text
// ([DefaultMaxBytes]: tools that do not fit are named in a closing note
// and returned).
//
// Names become identifiers by [Ident], and two names that would make the
// same one are told apart by [Idents], which the sandbox uses to resolve
// an identifier back to its tool.
//
// Its place: under server/codemode, called by package server's
// meta-tools. It knows nothing of catalogs, callers or MCP: it is text
// from schemas.
package tsdecl
