package server

import "github.com/toolscout/toolscout/index"

// ExposeDynamic lists the tools of the domains (and groups) the model
// enabled with enable_domain, per session (or per toolset).
const ExposeDynamic Mode = "dynamic"

var dynamicPolicy = modePolicy{mode: ExposeDynamic, list: listDynamic, dynamic: true,
	workflow: metaWorkflow + " enable_domain lists a domain's tools directly."}

// listDynamic lists the tools of the enabled domains and groups.
func listDynamic(in listInput) []*index.Tool {
	var out []*index.Tool
	for _, t := range in.tools() {
		if enabledIn(in.enabled, t) {
			out = append(out, t)
		}
	}
	return out
}

// enabledIn reports whether the set keys (a view's or a toolset's)
// enables t's domain or group.
func enabledIn(keys map[string]bool, t *index.Tool) bool {
	return keys[t.Domain] || t.Group != "" && keys[t.Domain+"/"+t.Group]
}
