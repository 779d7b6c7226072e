package server

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestViewsShareToolSchemas: the views of a Server (one per session in
// dynamic mode, per kept toolset, per caller) share the input schemas
// of the tools they list and the go-sdk's resolved forms of them,
// instead of each encoding, decoding and resolving its own: a view
// built that way took about 4,700 allocations in dynamic mode (3,300 in
// meta), one that shares them about 500. The limit is in allocations,
// not time, so that a loaded machine does not move it. Each view still
// lists every schema whole.
func TestViewsShareToolSchemas(t *testing.T) {
	if !inOwnProcess(t) { // testing.AllocsPerRun counts the process's allocations
		return
	}
	live := testLive(t, testCatalog, nil)
	code := &Code{}
	for _, tc := range []struct {
		name string
		mode Mode
		code *Code
		want []string // the tools a view lists
	}{
		{"meta", ExposeMeta, nil, []string{DiscoverTools, GetToolSchema, ExecuteTool}},
		{"dynamic", ExposeDynamic, nil, []string{DiscoverTools, GetToolSchema, ExecuteTool, EnableDomain, DisableDomain}},
		{"code", ExposeCode, code, []string{DiscoverTools, GetToolSchema, RunCode}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := New(Options{Live: live, Expose: Exposure{Mode: tc.mode}, Code: tc.code})
			dynamic := srv.expo.dynamic()
			const limit = 1500
			if n := testing.AllocsPerRun(20, func() { srv.expo.maker.newView(dynamic, nil) }); n > limit {
				t.Errorf("making a %s view took %.0f allocations, want at most %d: are its tools' schemas made anew for each view?", tc.mode, n, limit)
			}

			want := metaInputs(tc.code != nil)
			want[EnableDomain], want[DisableDomain] = domainInput(), domainInput()
			if tc.code != nil {
				want[RunCode] = runCodeInput(tc.code.Limits.WithDefaults())
			}
			for i := range 2 { // two views: the second lists what the first does
				v := srv.expo.maker.newView(dynamic, nil)
				st, ct := mcp.NewInMemoryTransports()
				ss, err := v.mcp.Connect(context.Background(), st, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer ss.Close()
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				res, err := cs.ListTools(context.Background(), nil)
				if err != nil {
					t.Fatal(err)
				}
				listed := map[string]string{}
				for _, tool := range res.Tools {
					b, err := json.Marshal(tool.InputSchema)
					if err != nil {
						t.Fatal(err)
					}
					listed[tool.Name] = normalize(t, string(b))
				}
				if len(listed) != len(tc.want) {
					t.Errorf("view %d lists %d tools, want %v", i, len(listed), tc.want)
				}
				for _, name := range tc.want {
					b, _ := json.Marshal(want[name])
					if got, w := listed[name], normalize(t, string(b)); got != w {
						t.Errorf("view %d: %s's input schema = %s, want %s", i, name, got, w)
					}
				}
			}
		})
	}
}
