package main

import "context"

// checkUpstreams checks each upstream server of --config.
func (g *globalFlags) checkUpstreams(ctx context.Context) []check {
	if len(g.configs) == 0 {
		return nil
	}
	return []check{{name: "config", detail: "upstream servers are not supported yet", fix: "remove --config"}}
}
