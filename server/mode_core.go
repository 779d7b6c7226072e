package server

import (
	"path"

	"github.com/toolscout/toolscout/index"
)

// ExposeCore lists the pinned tools (Exposure.Pinned: qualified names or
// globs such as "github__*").
const ExposeCore Mode = "core"

var corePolicy = modePolicy{mode: ExposeCore, lists: listsPinned, gated: true, workflow: listedWorkflow}

// listsPinned lists the tools a pin matches.
func listsPinned(in listInput, t *index.Tool) bool { return pinned(in.expose.Pinned, t) }

// pinned reports whether one of pins, a qualified name or a glob, names t.
func pinned(pins []string, t *index.Tool) bool {
	for _, p := range pins {
		if ok, _ := path.Match(p, t.QualifiedName); ok || p == t.QualifiedName {
			return true
		}
	}
	return false
}
