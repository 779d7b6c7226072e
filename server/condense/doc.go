// Package condense shortens a tool's description into the summary that a
// condensed tools/list shows (compact mode, and eager with --condense):
// a headline of at most [MaxWords] words from the main clause of the
// description's first sentence, without parentheticals, the detail after
// a colon, a semicolon or a trailing comma, articles and possessive
// determiners, and the tool's domain where the name already says it;
// cut at a clause or phrase boundary while it is too long, never inside
// a word, a list or a quotation, and never ending on a word that leaves
// it hanging. It is plain text work, the same every time for the same
// description: no model writes the summaries.
//
// Its place: under package server, which calls it for the tools it lists;
// get_tool_schema keeps giving the whole description. It knows nothing
// of tools, schemas or tokens.
//
//	condense.Summary("Read the complete contents of a file from the file system as text. Handles various text encodings.")
//	// "Read complete contents of file from file system."
package condense
