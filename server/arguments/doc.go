// Package arguments owns what the model is told about a tool's arguments
// and how they are checked: validation against the tool's input schema
// with errors in plain words, nested values named by their path with an
// example of the right shape ([Validate], and [PlainErrors] for the
// go-sdk's own check of the meta-tools; nested.go), example argument objects that
// validate ([Examples], for get_tool_schema), and the compact schema a
// compact tools/list shows ([Compact]).
//
// Its place: under package server, which calls it from get_tool_schema,
// execute_tool, tools/list and its middleware, and beside server/lint,
// which reads schemas with [Decode]. It works on one tool's schema and
// arguments at a time: it knows nothing of search (no package it imports
// is search: server's layers test), sessions or upstream servers.
//
//	if err := arguments.Validate(tool, args); err != nil {
//		return err // "invalid arguments for github__create_issue: title must be at least 1 character long; you sent \"\". ..."
//	}
//	exs := arguments.Examples(tool)
package arguments
