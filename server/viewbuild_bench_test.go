package server

import (
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/server/codemode"
)

// BenchmarkNewView measures what making one session's view costs (an MCP
// server with the meta-tools, and in dynamic mode enable_domain and
// disable_domain): in dynamic mode each Streamable HTTP session and each
// kept toolset gets one, so a gateway with many sessions pays it per
// session.
func BenchmarkNewView(b *testing.B) {
	for _, tc := range []struct {
		name string
		mode Mode
		code *Code
	}{
		{"meta", ExposeMeta, nil},
		{"dynamic", ExposeDynamic, nil},
		{"code", ExposeCode, &Code{Limits: codemode.Limits{}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cat, err := index.BuiltinCatalog()
			if err != nil {
				b.Fatal(err)
			}
			live := benchLive(b, cat, nil)
			srv := New(Options{Live: live, Expose: Exposure{Mode: tc.mode}, Code: tc.code})
			dynamic := srv.expo.dynamic()
			b.ReportAllocs()
			for b.Loop() {
				srv.expo.maker.newView(dynamic, nil)
			}
		})
	}
}
