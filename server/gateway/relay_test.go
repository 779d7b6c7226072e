package gateway

import (
	"context"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/internal/redact"
	"github.com/toolscout/toolscout/server/relay"
)

// TestLargeResultRelayed: a stdio server's result over relay.MinSize,
// called with a relay slot, is kept as the server's bytes for the answer
// (the go-sdk decodes a stub); one that holds a configured secret is not
// kept raw but decoded and redacted; a small one takes the go-sdk's path.
func TestLargeResultRelayed(t *testing.T) {
	t.Parallel()
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", "")}, Redactor: redact.New("s3cret-value")})
	g.WaitReady(context.Background())
	for _, tc := range []struct {
		name     string
		n        int
		tail     string
		relayed  bool
		inResult string // in the decoded result's text
	}{
		{"large", relay.MinSize + 1000, "END", true, ""},
		{"large with a secret", relay.MinSize + 1000, "s3cret-value", false, "bbbb"},
		{"small", 100, "END", false, "bEND"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slot := &relay.Slot{}
			res, err := g.Execute(relay.WithSlot(context.Background(), slot), nil, testTool("big"), map[string]any{"n": tc.n, "tail": tc.tail})
			if err != nil {
				t.Fatal(err)
			}
			out := relayedJSON(t, slot)
			if got := len(out) > tc.n; got != tc.relayed {
				t.Errorf("relayed raw: %v (%d bytes), want %v", got, len(out), tc.relayed)
			}
			if tc.relayed && !strings.Contains(out, strings.Repeat("b", 100)+"END") {
				t.Errorf("the relayed answer is not the server's result: %.80s", out)
			}
			text := resultText(res)
			if !strings.Contains(text, tc.inResult) || strings.Contains(text, "s3cret-value") || strings.Contains(out, "s3cret-value") {
				t.Errorf("decoded result %.60q... (%d bytes), want %q in it and no secret anywhere", text, len(text), tc.inResult)
			}
		})
	}
}
