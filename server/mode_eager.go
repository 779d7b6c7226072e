package server

import "github.com/toolscout/toolscout/index"

// ExposeEager lists every tool, under its qualified name (or the name
// tool_names gives it), as an aggregating proxy would.
const ExposeEager Mode = "eager"

var eagerPolicy = modePolicy{mode: ExposeEager, lists: listsEvery, gated: true,
	workflow: "Every tool is listed: call it by name. discover_tools with a query finds the right one for a task."}

// listsEvery lists every tool the caller may see.
func listsEvery(listInput, *index.Tool) bool { return true }
