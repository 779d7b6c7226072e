package server

import (
	"path"

	"github.com/toolscout/toolscout/index"
)

// ExposeCore lists the pinned tools (Exposure.Pinned: qualified names or
// globs such as "github__*").
const ExposeCore Mode = "core"

var corePolicy = modePolicy{mode: ExposeCore, list: listCore, gated: true, workflow: listedWorkflow}

// listCore lists the tools a pin matches.
func listCore(in listInput) []*index.Tool {
	var out []*index.Tool
	for _, t := range in.tools() {
		if pinned(in.expose.Pinned, t) {
			out = append(out, t)
		}
	}
	return out
}

// pinned reports whether one of pins, a qualified name or a glob, names t.
func pinned(pins []string, t *index.Tool) bool {
	for _, p := range pins {
		if ok, _ := path.Match(p, t.QualifiedName); ok || p == t.QualifiedName {
			return true
		}
	}
	return false
}
