package server

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server/gateway"
)

// TestDiscoverWithNoToolIndexed: past the startup wait, with every
// upstream server still connecting or down, discover_tools with a query
// answers the same in every mode: an empty result list, not an error,
// with a notice saying that no tool is indexed yet and which servers are
// still connecting or unavailable. Keyword and hybrid answered isError
// with Bleve's "keyword search: field stat for bm25 not present name",
// semantic an empty list without a word (issue 34, defect 2).
func TestDiscoverWithNoToolIndexed(t *testing.T) {
	t.Parallel()
	late := fakeConfig(t, "late", "ok")
	late.Env["TOOLSCOUT_FAKE_DELAY"] = "60s"
	gone := gateway.UpstreamConfig{Domain: "gone", Command: "/nonexistent/toolscout-test-server"}
	env := startGatewayServer(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{late, gone}, MinBackoff: time.Minute},
		Options{Expose: Exposure{Mode: ExposeMeta}, StartupWait: 300 * time.Millisecond})
	for _, mode := range []string{"keyword", "semantic", "hybrid", ""} {
		t.Run("mode "+mode, func(t *testing.T) {
			args := map[string]any{"query": "send a message to a channel"}
			if mode != "" {
				args["search_mode"] = mode
			}
			res := call(t, env.cs, DiscoverTools, args)
			var got SearchAnswer
			if res.IsError || json.Unmarshal([]byte(structured(t, res)), &got) != nil {
				t.Fatalf("discover_tools %v with no tool indexed = %s, want an answer", args, text(res))
			}
			if got.Results == nil || len(got.Results) != 0 || !strings.HasPrefix(got.Notice, search.NoToolsNotice+"; ") ||
				!strings.Contains(got.Notice, "still connecting: late") || !strings.Contains(got.Notice, "unavailable: gone (") ||
				strings.Contains(got.Notice, "bm25") {
				t.Errorf("discover_tools %v with no tool indexed = %s, want no results and a notice naming late as connecting and gone as unavailable", args, text(res))
			}
		})
	}
}
