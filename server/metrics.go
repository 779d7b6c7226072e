package server

import (
	"context"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/toolscout/toolscout/server/boot"
	"github.com/toolscout/toolscout/server/gateway"
)

// Metrics are a server's Prometheus metrics: the MCP requests it answers
// (counted by a receiving middleware on every view), the index, the
// sessions and the upstream servers. They live on a registry of their
// own, never the global one, so that two servers in one process (tests)
// do not collide. A Metrics serves one Server: pass it in Options (a
// second Server would register the same metrics again, and panic).
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	errs     *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// generation counts the catalogs swapped into the index.
	generation atomic.Int64
}

// otherTool is the tool label of a call to any tool but toolscout's own
// (an upstream tool listed directly, a name that does not exist): a
// catalog of 100k tools must not make 100k series.
const otherTool = "other"

// metaToolNames are the meta-tools: their series exist from the start.
var metaToolNames = []string{DiscoverTools, GetToolSchema, ExecuteTool}

// requestBuckets bound request latencies from a millisecond (a keyword
// search) to a minute (an upstream tool at its default timeout).
var requestBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// NewMetrics returns empty metrics with the Go runtime and process
// collectors registered; New adds the server's.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolscout_requests_total",
			Help: "MCP requests and notifications handled, by method and, for tools/call, tool (toolscout's own tools by name, others as \"other\").",
		}, []string{"method", "tool"}),
		errs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolscout_request_errors_total",
			Help: "MCP requests that failed, by method, tool and kind: \"jsonrpc\" (answered with a JSON-RPC error) or \"tool\" (a tool result with isError).",
		}, []string{"method", "tool", "kind"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toolscout_request_duration_seconds",
			Help:    "Time to answer an MCP request, by method and tool.",
			Buckets: requestBuckets,
		}, []string{"method", "tool"}),
	}
	m.reg.MustRegister(m.requests, m.errs, m.duration,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// The meta-tools' series exist from the start, at zero, so that
	// dashboards and alerts find them before the first call.
	for _, name := range metaToolNames {
		m.requests.WithLabelValues("tools/call", name)
		m.duration.WithLabelValues("tools/call", name)
	}
	return m
}

// Handler serves the metrics in the Prometheus text format (or
// OpenMetrics, when the scraper asks for it).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true})
}

// StatusReporter is implemented by executors that keep upstream servers
// (the gateway): their state becomes toolscout_upstream_up.
type StatusReporter interface {
	// Status reports every upstream server.
	Status() []gateway.UpstreamStatus
}

var _ StatusReporter = (*gateway.Upstreams)(nil)

// watch registers the metrics that s knows: the index, the sessions,
// readiness, the build, and the upstreams when s's executor reports them.
func (m *Metrics) watch(s *Server) {
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	s.live.Subscribe(func() { m.generation.Add(1) })
	if s.start.ready.State() >= boot.Loaded {
		// Loaded before the server was made (a test, an embedding
		// program): that load is the first generation.
		m.generation.CompareAndSwap(0, 1)
	}
	m.reg.MustRegister(
		gauge("toolscout_index_tools", "Tools in the index being served.", func() float64 { return float64(s.eng.Catalog().Len()) }),
		gauge("toolscout_index_domains", "Domains in the index being served.", func() float64 { return float64(len(s.eng.Catalog().Domains())) }),
		gauge("toolscout_index_generation", "Catalogs swapped into the index since the process started (1 after the first load; each upstream change adds one).", func() float64 { return float64(m.generation.Load()) }),
		gauge("toolscout_sessions_open", "Open MCP client sessions.", func() float64 { return float64(s.SessionCount()) }),
		gauge("toolscout_ready", "1 when /readyz answers 200, else 0.", func() float64 {
			if s.Ready() != nil {
				return 0
			}
			return 1
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "toolscout_build_info",
			Help:        "Always 1; the version label says which toolscout serves.",
			ConstLabels: prometheus.Labels{"version": s.impl.Version},
		}, func() float64 { return 1 }),
	)
	if r, ok := ability[StatusReporter](s.exec); ok {
		m.reg.MustRegister(newUpstreamCollector(r))
	}
}

// middleware counts and times every request a view receives. Its method
// is one the SDK knows (it answers others itself, before middleware), so
// the method label is bounded too.
func (m *Metrics) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		tool := ""
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p != nil {
			tool = toolLabel(p.Name)
		}
		start := time.Now()
		res, err := next(ctx, method, req)
		m.duration.WithLabelValues(method, tool).Observe(time.Since(start).Seconds())
		m.requests.WithLabelValues(method, tool).Inc()
		if err != nil {
			m.errs.WithLabelValues(method, tool, "jsonrpc").Inc()
		} else if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError {
			m.errs.WithLabelValues(method, tool, "tool").Inc()
		}
		return res, err
	}
}

// toolLabel returns the tool label of a call to name.
func toolLabel(name string) string {
	if slices.Contains(metaToolNames, name) || name == EnableDomain || name == DisableDomain {
		return name
	}
	return otherTool
}

// upstreamCollector reports each upstream server's state at scrape time:
// its series come and go with the configured servers, which the config
// bounds.
type upstreamCollector struct {
	r         StatusReporter
	up, tools *prometheus.Desc
}

var _ prometheus.Collector = (*upstreamCollector)(nil)

func newUpstreamCollector(r StatusReporter) *upstreamCollector {
	return &upstreamCollector{r: r,
		up: prometheus.NewDesc("toolscout_upstream_up",
			"1 while toolscout has a session to the upstream server, 0 while it is connecting or down.", []string{"server"}, nil),
		tools: prometheus.NewDesc("toolscout_upstream_tools",
			"Tools the upstream server listed last (kept while it is down).", []string{"server"}, nil),
	}
}

// Describe sends the descriptors of the upstream metrics.
func (c *upstreamCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.up
	ch <- c.tools
}

// Collect sends each upstream server's state and tool count.
func (c *upstreamCollector) Collect(ch chan<- prometheus.Metric) {
	for _, st := range c.r.Status() {
		up := 0.0
		if st.State == "up" {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, up, st.Domain)
		ch <- prometheus.MustNewConstMetric(c.tools, prometheus.GaugeValue, float64(st.Tools), st.Domain)
	}
}
