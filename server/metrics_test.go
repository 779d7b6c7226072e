package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/search"
)

// diskLive indexes the catalog js in a data dir on disk, vectors of the
// built-in embedder too.
func diskLive(t *testing.T, js string) *search.Live {
	t.Helper()
	return testLiveIn(t, t.TempDir(), js, embed.NewBuiltin(embed.BuiltinOptions{}))
}

// connectHTTP serves srv's Streamable HTTP handler and connects a go-sdk
// client to it.
func connectHTTP(t *testing.T, srv *Server) *mcp.ClientSession {
	t.Helper()
	hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "metrics-test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: hs.URL}, sessionOpts) // a session: initialize and sessions_open are counted
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() }) // before hs.Close, which waits for the session's stream
	return cs
}

// scrape reads the metrics as a Prometheus server does: GET, text
// format. It fails the test on any problem promlint finds in the names,
// types, units or help texts.
func scrape(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	problems, err := promlint.New(strings.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "toolscout_") {
			t.Errorf("promlint: %s: %s", p.Metric, p.Text)
		}
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return fams
}

// sample returns the value of the series of family name whose labels are
// labels ("k=v,k=v"; "" for none): a counter's or gauge's value, a
// histogram's sample count. ok is false when there is no such series.
func sample(fams map[string]*dto.MetricFamily, name, labels string) (v float64, ok bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		var got []string
		for _, l := range m.GetLabel() {
			got = append(got, l.GetName()+"="+l.GetValue())
		}
		if strings.Join(got, ",") != labels {
			continue
		}
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			return m.GetCounter().GetValue(), true
		case dto.MetricType_GAUGE:
			return m.GetGauge().GetValue(), true
		case dto.MetricType_HISTOGRAM:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// TestMetricsCountRequests: a go-sdk client over Streamable HTTP makes a
// discover_tools call, an execute_tool call that fails as a tool and a
// call of a tool that does not exist; the scrape counts each by method
// and tool, with its errors and latency, and reports the index, the
// session and readiness.
func TestMetricsCountRequests(t *testing.T) {
	t.Parallel()
	m := NewMetrics()
	srv := New(Options{Live: diskLive(t, testCatalog), Metrics: m, Version: "9.9.9"})
	before := scrape(t, m)
	for _, tool := range []string{DiscoverTools, GetToolSchema, ExecuteTool} {
		if v, ok := sample(before, "toolscout_requests_total", "method=tools/call,tool="+tool); !ok || v != 0 {
			t.Errorf("before any call: toolscout_requests_total{tools/call,%s} = %v (present %v), want 0", tool, v, ok)
		}
	}
	cs := connectHTTP(t, srv)
	if res := call(t, cs, DiscoverTools, map[string]any{"query": "forecast for a city"}); res.IsError || !strings.Contains(text(res), "weather__get_forecast") {
		t.Fatalf("discover_tools = %s", text(res))
	}
	if res := call(t, cs, ExecuteTool, map[string]any{"tool_name": "weather__get_forecast", "arguments": map[string]any{"city": "Oslo"}}); !res.IsError {
		t.Fatalf("execute_tool of a catalog tool = %s, want a tool error (no upstream)", text(res))
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "github__create_issue_typo"}); err == nil {
		t.Fatal("a call of an unknown tool succeeded")
	}
	// A catalog tool called by name in meta mode is answered before the
	// tool handlers (startup.middleware): counted all the same.
	if res := call(t, cs, "weather__get_forecast", map[string]any{"city": "Oslo"}); !res.IsError {
		t.Fatalf("direct call of an unlisted tool = %s, want the execute_tool hint", text(res))
	}
	after := scrape(t, m)
	tests := []struct {
		name, metric, labels string
		want                 float64
	}{
		{"discover counted", "toolscout_requests_total", "method=tools/call,tool=discover_tools", 1},
		{"discover timed", "toolscout_request_duration_seconds", "method=tools/call,tool=discover_tools", 1},
		{"discover no error", "toolscout_request_errors_total", "kind=tool,method=tools/call,tool=discover_tools", -1},
		{"execute counted", "toolscout_requests_total", "method=tools/call,tool=execute_tool", 1},
		{"execute failed as a tool", "toolscout_request_errors_total", "kind=tool,method=tools/call,tool=execute_tool", 1},
		{"unknown and unlisted tools as other", "toolscout_requests_total", "method=tools/call,tool=other", 2},
		{"unlisted tool failed as a tool", "toolscout_request_errors_total", "kind=tool,method=tools/call,tool=other", 1},
		{"unknown tool failed", "toolscout_request_errors_total", "kind=jsonrpc,method=tools/call,tool=other", 1},
		{"schema not called", "toolscout_requests_total", "method=tools/call,tool=get_tool_schema", 0},
		{"initialize", "toolscout_requests_total", "method=initialize,tool=", 1},
		{"index tools", "toolscout_index_tools", "", 5},
		{"index domains", "toolscout_index_domains", "", 3},
		{"generation", "toolscout_index_generation", "", 1},
		{"session", "toolscout_sessions_open", "", 1},
		{"ready", "toolscout_ready", "", 1},
		{"build", "toolscout_build_info", "version=9.9.9", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, ok := sample(after, tc.metric, tc.labels)
			if tc.want < 0 {
				if ok {
					t.Errorf("%s{%s} = %v, want no such series", tc.metric, tc.labels, v)
				}
				return
			}
			if !ok || v != tc.want {
				t.Errorf("%s{%s} = %v (present %v), want %v", tc.metric, tc.labels, v, ok, tc.want)
			}
		})
	}
	// A client of the stateless protocol is counted the same way.
	hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
	defer hs.Close()
	stateless, err := mcp.NewClient(&mcp.Implementation{Name: "metrics-test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: hs.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	call(t, stateless, DiscoverTools, map[string]any{"query": "forecast for a city"})
	stateless.Close()
	if v, ok := sample(scrape(t, m), "toolscout_requests_total", "method=tools/call,tool=discover_tools"); !ok || v != 2 {
		t.Errorf("after a stateless discover_tools: toolscout_requests_total{tools/call,discover_tools} = %v (present %v), want 2", v, ok)
	}
	if _, ok := after["go_goroutines"]; !ok {
		t.Error("no Go runtime metrics (go_goroutines)")
	}
}

// TestMetricsToolLabelIsBounded: the tool label keeps toolscout's own
// tool names and folds every other name into "other", so that neither a
// catalog of 100k tools listed directly nor a client making up names can
// grow the series without bound.
func TestMetricsToolLabelIsBounded(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, want string }{
		{DiscoverTools, DiscoverTools},
		{GetToolSchema, GetToolSchema},
		{ExecuteTool, ExecuteTool},
		{EnableDomain, EnableDomain},
		{DisableDomain, DisableDomain},
		{"github__create_issue", otherTool},
		{strings.Repeat("x", 10000), otherTool},
		{"", otherTool},
	}
	for _, tc := range tests {
		if got := toolLabel(tc.name); got != tc.want {
			t.Errorf("toolLabel(%.20q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestMetricsHandlerServesText: a scraper without an Accept header gets
// the Prometheus text format.
func TestMetricsHandlerServesText(t *testing.T) {
	t.Parallel()
	m := NewMetrics()
	New(Options{Live: diskLive(t, testCatalog), Metrics: m})
	hs := httptest.NewServer(m.Handler())
	t.Cleanup(hs.Close)
	resp, err := http.Get(hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type = %q, want text/plain (the text format)", ct)
	}
	if !strings.Contains(string(body), "# TYPE toolscout_request_duration_seconds histogram") {
		t.Errorf("no histogram toolscout_request_duration_seconds in:\n%.1000s", body)
	}
}

// BenchmarkMetricsMiddleware measures what counting adds to each request:
// the middleware around a handler that does nothing.
func BenchmarkMetricsMiddleware(b *testing.B) {
	m := NewMetrics()
	h := m.middleware(func(context.Context, string, mcp.Request) (mcp.Result, error) { return &mcp.CallToolResult{}, nil })
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: DiscoverTools}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		h(ctx, "tools/call", req)
	}
}
