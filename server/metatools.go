package server

import (
	"log/slog"

	"github.com/toolscout/toolscout/search"
)

// metaTools answers the tools a view serves of its own: discover_tools
// (discover.go), get_tool_schema (schema.go), execute_tool and the tools
// listed directly (execute.go, expose.go's callDirect), code mode's
// run_code (runcode.go), and a call of a tool the view does not list
// (unlisted.go); dynamic mode's enable_domain and disable_domain are
// dynamicTools' (mode_dynamic.go). It keeps no state of its own: it
// reads the catalog through scope, waits through start, asks expo what
// a view lists, status what the executor says of a tool (toolstatus.go)
// and decl for code mode's declarations (declarations.go).
type metaTools struct {
	eng      *search.Engine
	exec     Executor // nil: every tool is catalog-only
	log      *slog.Logger
	scope    *callerScope
	start    *startup
	expo     *exposure
	feedback *feedback  // nil: off
	audit    *auditor   // nil: off
	status   toolStatus // what the executor says of a tool
	decl     declarer   // code mode's declarations
	// structuredClients are Options.StructuredClients (structured.go).
	structuredClients structuredClients
	disabled          disabledNames
	failures          *searchFailures
	// code is code mode's (nil in the other modes): run_code is listed
	// instead of execute_tool.
	code *Code
	// schemas are the input schemas of the tools each view lists, made
	// once (toolschemas.go).
	schemas *toolSchemas
}
