package server

import "github.com/toolscout/toolscout/index"

// ExposeEager lists every tool, under its qualified name (or the name
// tool_names gives it), as an aggregating proxy would.
const ExposeEager Mode = "eager"

var eagerPolicy = modePolicy{mode: ExposeEager, list: listEager, gated: true,
	workflow: "Every tool is listed: call it by name. discover_tools with a query finds the right one for a task."}

// listEager lists every tool the caller may see.
func listEager(in listInput) []*index.Tool { return in.tools() }
