package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestGatewayCommonWordDoesNotOutrankMeaning: behind the gateway with the
// reference servers, every filesystem tool's description says it "only
// works within allowed directories". A request that uses "works" in
// another sense must not be answered with filesystem tools as if they fit:
// the keyword list's best match is that one common word, a weak list
// however min-max normalisation stretches it, so the memory server's
// tools (the semantic list's best) come first. Under rank fusion, and under min-max fusion at full keyword weight, the
// filesystem tools took the top places.
func TestGatewayCommonWordDoesNotOutrankMeaning(t *testing.T) {
	t.Parallel()
	env := referenceGateway(t, Exposure{Mode: ExposeMeta})
	works := 0
	for _, tool := range env.srv.eng.Catalog().Tools() {
		if tool.Domain == "filesystem" && strings.Contains(strings.ToLower(tool.Description), "works") {
			works++
		}
	}
	if works < 5 {
		t.Fatalf("%d filesystem tools say \"works\": the reference server changed, this test no longer tests anything", works)
	}
	discover := func(q string) SearchAnswer {
		t.Helper()
		res := call(t, env.cs, DiscoverTools, map[string]any{"query": q, "limit": 5})
		var ans SearchAnswer
		if err := json.Unmarshal([]byte(text(res)), &ans); err != nil || len(ans.Results) == 0 {
			t.Fatalf("discover %q: %v: %s", q, err, text(res))
		}
		return ans
	}
	names := func(ans SearchAnswer) (all []string, memory int) {
		for _, r := range ans.Results {
			all = append(all, r.Name)
			if strings.HasPrefix(r.Name, "memory__") {
				memory++
			}
		}
		return all, memory
	}
	for _, q := range []string{"record the fact that Alice works at Acme", "store in memory that Alice works at Acme"} {
		ans := discover(q)
		all, memory := names(ans)
		if !strings.HasPrefix(all[0], "memory__") || memory < 3 {
			t.Errorf("discover %q = %v, want a memory tool first and 3 of the top 5", q, all)
		}
		if ans.Results[0].Confidence == nil {
			t.Errorf("discover %q: the first result has no confidence", q)
		}
	}
	// The issue's own wording, where one common word ("works") is the
	// keyword list's best match: the memory tools come first too.
	q := "remember that Alice works at Acme"
	ans := discover(q)
	if all, _ := names(ans); !strings.HasPrefix(all[0], "memory__") {
		t.Errorf("discover %q = %v with confidence %v, want a memory tool first", q, all, *ans.Results[0].Confidence)
	}
}
