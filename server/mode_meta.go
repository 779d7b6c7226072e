package server

import "github.com/toolscout/toolscout/index"

// ExposeMeta lists the meta-tools and nothing else: the model finds
// tools with discover_tools and runs them with execute_tool.
const ExposeMeta Mode = "meta"

var metaPolicy = modePolicy{mode: ExposeMeta, list: listMeta, workflow: metaWorkflow}

// listMeta lists no tool directly.
func listMeta(listInput) []*index.Tool { return nil }
