// Package condense shortens a tool's description into the summary that a
// condensed tools/list shows (compact mode, and eager with --condense):
// at most [MaxWords] words from the description's first sentence, with
// parentheticals and trailing clauses trimmed while it is too long,
// never cut inside a word and never ending on a word that leaves it
// hanging. It is plain text work, the same every time for the same
// description: no model writes the summaries.
//
// Its place: under package server, which calls it for the tools it lists;
// get_tool_schema keeps giving the whole description. It knows nothing
// of tools, schemas or tokens.
//
//	condense.Summary("Read the complete contents of a file from the file system as text. Handles various text encodings.")
//	// "Read the complete contents of a file from the file system as text."
package condense
