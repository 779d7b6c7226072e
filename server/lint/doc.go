// Package lint measures what each tool of a catalog costs a model in
// tokens (name, description, input schema) and flags what makes a tool
// hard to pick or to call: descriptions and schemas over budget or
// verbose beside the catalog's, tools and parameters without a
// description, near-duplicate descriptions, operations multiplexed into
// one tool.
//
// Its place: a report on a catalog, under package server only by
// concern (what the server shows a model). cmd's `toolscout lint` and
// `toolscout tokens` print it; it reads schemas through server/arguments
// and counts tokens with o200k_base. It changes nothing and runs nothing.
//
//	rep, err := lint.Check(cat, lint.Options{})
//	if err != nil { ... }
//	fmt.Println(rep.Flagged, "tools with a problem")
package lint
