package server

import (
	"log/slog"

	"github.com/toolscout/toolscout/search"
)

// metaTools answers the tools a view serves of its own: discover_tools
// (discover.go), get_tool_schema (schema.go), execute_tool and the tools
// listed directly (execute.go, expose.go's callDirect), dynamic mode's
// enable_domain and disable_domain (mode_dynamic.go's setEnabled), and a call
// of a tool the view does not list (unlisted.go). It keeps no state of
// its own: it reads the catalog through scope, waits through start, and
// asks expo what a view lists.
type metaTools struct {
	eng      *search.Engine
	exec     Executor // nil: every tool is catalog-only
	log      *slog.Logger
	scope    *callerScope
	start    *startup
	expo     *exposure
	feedback *feedback // nil: off
	audit    *auditor  // nil: off
	// structuredClients are Options.StructuredClients (structured.go).
	structuredClients []string
	disabled          disabledNames
	failures          *searchFailures
	// code is code mode's (nil in the other modes): run_code is listed
	// instead of execute_tool.
	code *Code
}
