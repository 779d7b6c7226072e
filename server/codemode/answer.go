package codemode

import "encoding/json"

// Answer is what run_code returns: the program's result, what it
// logged, the tool calls it made, and how it failed, if it did.
type Answer struct {
	// Result is the program's value as JSON (null when it returned
	// nothing or failed).
	Result json.RawMessage `json:"result"`
	// Console holds what console.log and its kin printed, a line each,
	// within Limits.Console; ConsoleDropped counts the lines past it.
	Console        []string `json:"console,omitempty"`
	ConsoleDropped int      `json:"console_dropped,omitempty"`
	// Calls are the tool calls and searches, in order.
	Calls []Call `json:"calls"`
	// Truncated says what was cut to fit the answer, and how.
	Truncated string `json:"truncated,omitempty"`
	// Error is why the program failed; nil when it ran to its end.
	Error *ProgramError `json:"error,omitempty"`
}

// Call is one tool call (or toolscout.search) a program made.
type Call struct {
	// Tool is the tool's qualified name (domain__tool), as resolved, or
	// as the program wrote it when it names no tool; "toolscout.search"
	// for a search.
	Tool string `json:"tool"`
	// Ms is how long it took, in milliseconds.
	Ms float64 `json:"ms"`
	OK bool    `json:"ok"`
	// Error is its error message, when it failed.
	Error string `json:"error,omitempty"`
}

// The kinds of ProgramError.
const (
	KindLimit   = "limit"   // a limit ended it (ProgramError.Limit says which)
	KindSyntax  = "syntax"  // it does not parse
	KindRuntime = "runtime" // it threw, or its promise never settled
	KindTool    = "tool"    // a tool's error was not caught
)

// ProgramError is why a program failed.
type ProgramError struct {
	Kind    string `json:"kind"`
	Limit   string `json:"limit,omitempty"`
	Message string `json:"message"`
	// Tool names the tool whose error ended the program (KindTool).
	Tool string `json:"tool,omitempty"`
}
