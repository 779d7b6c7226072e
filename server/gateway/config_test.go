package gateway

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAttempts: the ways to connect, in order, for each kind of server:
// a command over stdio at 2025-11-25; a remote over Streamable HTTP at
// the newest protocol, then at 2025-11-25 (a retry), then over SSE, or
// only the transport its config names.
func TestAttempts(t *testing.T) {
	t.Parallel()
	kind := func(a attempt) string {
		var s string
		switch a.tr.(type) {
		case *commandTransport:
			s = "stdio"
		case *mcp.StreamableClientTransport:
			s = "http"
		case *mcp.SSEClientTransport:
			s = "sse"
		default:
			s = "?"
		}
		if a.protocol != "" {
			s += "@" + a.protocol
		}
		if a.retry {
			s += "(retry)"
		}
		return s
	}
	for _, tc := range []struct {
		name string
		cfg  UpstreamConfig
		want string
	}{
		{"command", UpstreamConfig{Command: "server"}, "stdio@2025-11-25"},
		{"remote", UpstreamConfig{URL: "http://h/mcp"}, "http http@2025-11-25(retry) sse@2025-11-25"},
		{"remote http", UpstreamConfig{URL: "http://h/mcp", Transport: "http"}, "http http@2025-11-25(retry)"},
		{"remote sse", UpstreamConfig{URL: "http://h/sse", Transport: "sse"}, "sse@2025-11-25"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, a := range tc.cfg.attempts(nil, nil, MaxUpstreamMessage, nil) {
				got = append(got, kind(a))
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("attempts(%+v) = %q, want %q", tc.cfg, strings.Join(got, " "), tc.want)
			}
		})
	}
}

// TestTimeouts: a server's call and connect timeouts, configured or the
// defaults.
func TestTimeouts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg              UpstreamConfig
		call, connecting time.Duration
	}{
		{UpstreamConfig{}, 60 * time.Second, DefaultConnectTimeout},
		{UpstreamConfig{Timeout: time.Second, ConnectTimeout: 2 * time.Second}, time.Second, 2 * time.Second},
		{UpstreamConfig{Timeout: -time.Second, ConnectTimeout: -time.Second}, 60 * time.Second, DefaultConnectTimeout},
	} {
		if got, got2 := tc.cfg.timeout(), tc.cfg.connectTimeout(); got != tc.call || got2 != tc.connecting {
			t.Errorf("%+v: timeout %v, connect timeout %v; want %v, %v", tc.cfg, got, got2, tc.call, tc.connecting)
		}
	}
}

// TestToolSpecsKeepWhatTheServerSays: a listed tool's title (or its
// annotations' title), output schema and annotations reach the catalog;
// a missing input schema is an empty object schema; an output schema
// that is no object schema is dropped, not the tool; a nil tool or one
// without a name is left out.
func TestToolSpecsKeepWhatTheServerSays(t *testing.T) {
	t.Parallel()
	ro := true
	specs, skipped, _ := toolSpecs(&UpstreamConfig{}, []*mcp.Tool{
		nil,
		{Name: ""},
		{Name: "titled", Title: "Own title", Annotations: &mcp.ToolAnnotations{Title: "Annotated", ReadOnlyHint: ro}, InputSchema: map[string]any{"type": "object"}},
		{Name: "annotated", Annotations: &mcp.ToolAnnotations{Title: "From annotations"}},
		{Name: "typed", InputSchema: map[string]any{"type": "object"}, OutputSchema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "number"}}}},
		{Name: "badout", InputSchema: map[string]any{"type": "object"}, OutputSchema: map[string]any{"type": "array"}},
	})
	if len(skipped) != 0 {
		t.Errorf("skipped = %q, want none", skipped)
	}
	got := map[string]string{}
	for _, s := range specs {
		var in map[string]any
		if err := json.Unmarshal(s.InputSchema, &in); err != nil || in["type"] != "object" {
			t.Errorf("%s: input schema %s, want an object schema", s.Name, s.InputSchema)
		}
		got[s.Name] = s.Title + "|" + string(s.OutputSchema) + "|" + string(s.Annotations)
	}
	if len(got) != 4 {
		t.Fatalf("specs = %v, want the four named tools", got)
	}
	if !strings.HasPrefix(got["titled"], "Own title||") || !strings.Contains(got["titled"], `"readOnlyHint":true`) {
		t.Errorf("titled = %q, want its own title and its annotations", got["titled"])
	}
	if !strings.HasPrefix(got["annotated"], "From annotations|") {
		t.Errorf("annotated = %q, want the annotations' title", got["annotated"])
	}
	if !strings.Contains(got["typed"], `"n"`) {
		t.Errorf("typed = %q, want its output schema", got["typed"])
	}
	if strings.Split(got["badout"], "|")[1] != "" {
		t.Errorf("badout = %q, want its output schema dropped", got["badout"])
	}
}
