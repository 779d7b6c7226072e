package server

import "github.com/toolscout/toolscout/index"

// ExposeMeta lists the meta-tools and nothing else: the model finds
// tools with discover_tools and runs them with execute_tool.
const ExposeMeta Mode = "meta"

var metaPolicy = modePolicy{mode: ExposeMeta, lists: listsNone, workflow: metaWorkflow}

// listsNone lists no tool directly.
func listsNone(listInput, *index.Tool) bool { return false }
