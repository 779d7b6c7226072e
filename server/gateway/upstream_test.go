package gateway

import (
	"bufio"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
)

func TestUpstreamEnv(t *testing.T) {
	environ := []string{"PATH=/bin", "HOME=/home/u", "http_proxy=http://p:1", "LC_TIME=C", "npm_config_cache=/c",
		"TOOLSCOUT_AUTH_TOKEN=secret", "npm_config__authToken=npm-secret", "AWS_SECRET_ACCESS_KEY=aws", "=C:=C:\\", "NOEQUALS"}
	for _, tc := range []struct {
		name    string
		environ []string
		env     map[string]string
		want    []string
	}{
		{"nothing", nil, nil, []string{}},
		{"allow-list only", environ, nil, []string{"HOME=/home/u", "LC_TIME=C", "PATH=/bin", "http_proxy=http://p:1", "npm_config_cache=/c"}},
		{"config adds and overrides", environ, map[string]string{"HOME": "/srv", "GITHUB_TOKEN": "${GITHUB_TOKEN} expanded"},
			[]string{"GITHUB_TOKEN=${GITHUB_TOKEN} expanded", "HOME=/srv", "LC_TIME=C", "PATH=/bin", "http_proxy=http://p:1", "npm_config_cache=/c"}},
		{"config may pass a secret on purpose", environ, map[string]string{"TOOLSCOUT_AUTH_TOKEN": "shared"},
			[]string{"HOME=/home/u", "LC_TIME=C", "PATH=/bin", "TOOLSCOUT_AUTH_TOKEN=shared", "http_proxy=http://p:1", "npm_config_cache=/c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := upstreamEnv(tc.environ, tc.env); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("upstreamEnv(%q, %v) = %q, want %q", tc.environ, tc.env, got, tc.want)
			}
		})
	}
}

func TestToolSpecsSkipsBadNames(t *testing.T) {
	specs, skipped, _ := toolSpecs(&UpstreamConfig{Groups: map[string]string{"a": " g "}}, []*mcp.Tool{
		{Name: "a", InputSchema: map[string]any{"type": "object"}},
		{Name: "has space", InputSchema: map[string]any{"type": "object"}},
		{Name: "a", InputSchema: map[string]any{"type": "object"}},
		{Name: "b", InputSchema: map[string]any{"type": "array"}},
	})
	if len(specs) != 1 || specs[0].Group != "g" || len(skipped) != 2 {
		t.Errorf("specs %+v, skipped %v", specs, skipped)
	}
}

func TestGroupsEntryForAMissingTool(t *testing.T) {
	_, skipped, stale := toolSpecs(&UpstreamConfig{Groups: map[string]string{"create_isue": "issues", "list_issues": "issues"}}, []*mcp.Tool{
		{Name: "create_issue", InputSchema: map[string]any{"type": "object"}},
		{Name: "list_issues", InputSchema: map[string]any{"type": "object"}},
	})
	// A typo in the config is not a tool skipped (it was logged as one).
	if len(skipped) != 0 {
		t.Errorf("skipped = %q, want none: every tool the server listed was kept", skipped)
	}
	skipped = stale
	if len(skipped) != 1 || !strings.Contains(skipped[0], `groups entry "create_isue"`) || !strings.Contains(skipped[0], `did you mean "create_issue"?`) {
		t.Errorf("skipped = %q, want the stale groups entry named with a suggestion", skipped)
	}
}

// TestFrameGuard: an oversize message is replaced by an error response for
// its request, its ID found first (Go SDK) or last (TypeScript SDK); other
// messages pass through untouched.
func TestFrameGuard(t *testing.T) {
	big := strings.Repeat("x", 5000)
	in := `{"result":{"content":"` + big + `"},"jsonrpc":"2.0","id":"abc"}` + "\n" +
		`{"jsonrpc":"2.0","id":4,"result":{}}` + "\n" +
		`{"jsonrpc":"2.0","id":5,"result":{"text":"` + big + `"}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + big + `"}}` + "\n" +
		`{"jsonrpc":"2.0","id":6,"result":{}}` + "\n"
	g := &frameGuard{r: bufio.NewReaderSize(strings.NewReader(in), 16), limit: 1000}
	out, err := io.ReadAll(g)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines out, want 4 (the notification dropped): %.500s", len(lines), out)
	}
	for i, want := range []string{`"id":"abc"`, `{"jsonrpc":"2.0","id":4,"result":{}}`, `"id":5`, `{"jsonrpc":"2.0","id":6,"result":{}}`} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d = %.200s, want %s", i, lines[i], want)
		}
	}
	if !strings.Contains(lines[0], `"code":-32603`) || !strings.Contains(lines[0], "over the 1000") {
		t.Errorf("line 0 = %s, want an internal error saying the size", lines[0])
	}
}

// TestUpstreamToolState: an upstream's config turns tools off and marks
// them deprecated (entries for tools the server does not list are
// named), on the tools it lists and on those kept from its last run.
func TestUpstreamToolState(t *testing.T) {
	cfg := &UpstreamConfig{DisabledTools: []string{"crash", "crsh"}, DeprecatedTools: map[string]string{"fail": " use echo ", "add_tool": ""}}
	specs, _, skipped := toolSpecs(cfg, []*mcp.Tool{
		{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		{Name: "crash", InputSchema: map[string]any{"type": "object"}},
		{Name: "fail", InputSchema: map[string]any{"type": "object"}},
		{Name: "add_tool", InputSchema: map[string]any{"type": "object"}},
	})
	state := map[string]string{}
	for _, s := range specs {
		state[s.Name] = string(s.Deprecated)
		if s.Enabled != nil && !*s.Enabled {
			state[s.Name] = "off"
		}
	}
	if want := map[string]string{"echo": "", "crash": "off", "fail": "use echo", "add_tool": index.DeprecatedTrue}; !reflect.DeepEqual(state, want) {
		t.Errorf("states = %v, want %v", state, want)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0], `disabled_tools entry "crsh"`) || !strings.Contains(skipped[0], `did you mean "crash"?`) {
		t.Errorf("skipped = %q, want the stale entry named", skipped)
	}

}

func TestRestartBackoff(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name string
		ups  []time.Duration // how long each attempt stayed up (0: connect failed)
		want []time.Duration
	}{
		{"connect fails", []time.Duration{0, 0, 0, 0, 0, 0, 0, 0}, []time.Duration{1 * s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s, 60 * s, 60 * s}},
		{"dies after connecting", []time.Duration{s, s, s, s}, []time.Duration{1 * s, 2 * s, 4 * s, 8 * s}},
		{"stays up, then dies young", []time.Duration{0, 0, 0, 30 * s, s, 0}, []time.Duration{1 * s, 2 * s, 4 * s, 1 * s, 2 * s, 4 * s}},
		{"always stable", []time.Duration{time.Hour, 30 * s, time.Minute}, []time.Duration{1 * s, 1 * s, 1 * s}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := restartBackoff{min: s, max: time.Minute, stable: 30 * s}
			var got []time.Duration
			for _, up := range tc.ups {
				got = append(got, b.next(up))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("next(%v) = %v, want %v", tc.ups, got, tc.want)
			}
		})
	}
}
