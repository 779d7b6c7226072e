package server

import (
	"context"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server/callers"
)

// Per-caller visibility (Options.Callers): each caller has its own views
// (the one its requests get, its sessions' in dynamic mode, its
// toolsets'), and every answer of a view is made from the caller's
// subset of the catalog (catalogFor): a tool the caller may not see is
// not in it, so that resolving, suggesting, browsing and the scope
// errors answer for a hidden tool exactly what they answer for one that
// does not exist. Searches rank the whole index with the hidden tools
// excluded (search.Request.Exclude), which drops them before the top k
// is cut: a caller still gets k results. Configured servers without
// tools, named in listings, waits and errors, are filtered by
// Caller.VisibleDomain. The caller of a request is the one of its view,
// and in the request's context (callers.FromContext) for code below the
// handlers.
//
// Without callers, the views' caller is nil, which sees everything, and
// catalogFor is the whole catalog: behaviour is unchanged.

// Visibility is the one question a view asks of its caller; prompts and
// resources (or anything else relayed per domain) ask it too.
type Visibility interface {
	Visible(domain, name string) bool
}

var _ Visibility = (*callers.Caller)(nil)

// subsetEntry is a caller's view of one catalog.
type subsetEntry struct {
	full, sub *index.Catalog
	hidden    []string // qualified names of full's tools not in sub
}

// subsets caches each caller's view of the current catalog.
type subsets struct {
	mu sync.Mutex
	by map[*callers.Caller]*subsetEntry
}

// callerScope answers what each caller sees: its subset of the
// catalog, the configured servers without tools it may see, and who the
// caller of a request is. It holds no lock of the server's: the subsets
// have their own.
type callerScope struct {
	eng     *search.Engine
	exec    Executor     // asked for the servers without tools (unavailable)
	callers *callers.Set // nil: every caller sees everything
	domains []DomainSize // Options.Domains
	subsets subsets      // each caller's view of the catalog
}

// entryFor returns who's view of cat (made once per catalog).
func (c *callerScope) entryFor(who *callers.Caller, cat *index.Catalog) *subsetEntry {
	c.subsets.mu.Lock()
	defer c.subsets.mu.Unlock()
	if e := c.subsets.by[who]; e != nil && e.full == cat {
		return e
	}
	e := &subsetEntry{full: cat}
	e.sub = cat.Subset(func(t *index.Tool) bool { return who.Visible(t.Domain, t.Name) })
	for _, t := range cat.Tools() {
		if e.sub.Tool(t.QualifiedName) == nil {
			e.hidden = append(e.hidden, t.QualifiedName)
		}
	}
	e.sub.PrepareLookups()
	if c.subsets.by == nil {
		c.subsets.by = map[*callers.Caller]*subsetEntry{}
	}
	// The view of the caller's previous definition (callers.Set.Replace
	// made a new Caller when its lists changed) is not kept.
	for old := range c.subsets.by {
		if old != who && who != nil && old != nil && old.Name == who.Name {
			delete(c.subsets.by, old)
		}
	}
	c.subsets.by[who] = e
	return e
}

// catalogFor returns the catalog who sees now: the whole one for nil.
func (c *callerScope) catalogFor(who *callers.Caller) *index.Catalog {
	cat := c.eng.Catalog()
	if who == nil {
		return cat
	}
	return c.entryFor(who, cat).sub
}

// hiddenFrom returns the qualified names of cat's tools that who may not
// see (nil for nil).
func (c *callerScope) hiddenFrom(who *callers.Caller, cat *index.Catalog) []string {
	if who == nil {
		return nil
	}
	return c.entryFor(who, cat).hidden
}

// domainVisible reports whether who may see domain d: one of its tools
// when the catalog has them, else (a server that has not listed its
// tools) when its policy names the domain.
func (c *callerScope) domainVisible(who *callers.Caller, d string) bool {
	if who == nil {
		return true
	}
	e := c.entryFor(who, c.eng.Catalog())
	if e.sub.Domain(d) != nil {
		return true
	}
	return e.full.Domain(d) == nil && who.VisibleDomain(d)
}

// unavailableFor is unavailable, less the servers who may not see.
func (c *callerScope) unavailableFor(who *callers.Caller) map[string]string {
	down := c.unavailable()
	if who == nil || len(down) == 0 {
		return down
	}
	out := make(map[string]string, len(down))
	for d, why := range down {
		if c.domainVisible(who, d) {
			out[d] = why
		}
	}
	return out
}

// domainsFor is Options.Domains, less those who may not see.
func (c *callerScope) domainsFor(who *callers.Caller) []DomainSize {
	if who == nil {
		return c.domains
	}
	var out []DomainSize
	for _, d := range c.domains {
		if c.domainVisible(who, d.Name) {
			// Its size counts every tool the server listed last, the
			// hidden ones too: not known for who until the catalog is.
			out = append(out, DomainSize{Name: d.Name})
		}
	}
	return out
}

// callerIn returns the caller of the request ctx belongs to (put there
// by callerMiddleware): nil without callers configured, and one that
// sees nothing when callers are configured but ctx has none.
func (c *callerScope) callerIn(ctx context.Context) *callers.Caller {
	who := callers.FromContext(ctx)
	if who == nil && c.callers != nil {
		return callers.Nobody()
	}
	return who
}

// requestCaller returns the caller an HTTP request names (callers.Set.
// Require put it in its context): nil without callers configured.
func (c *callerScope) requestCaller(r *http.Request) *callers.Caller {
	return c.callerIn(r.Context())
}

// callerMiddleware puts v's caller in the context of each request v
// receives, for what runs below the handlers (waits naming servers).
func callerMiddleware(v *view) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if v.who != nil {
				ctx = callers.WithCaller(ctx, v.who)
			}
			return next(ctx, method, req)
		}
	}
}

// refuseUnauthenticated answers 401 when callers are configured and the
// request names none (cmd wraps the handler with callers.Set.Require;
// this is the server's own guard against a handler served unwrapped).
func (c *callerScope) refuseUnauthenticated(w http.ResponseWriter, r *http.Request) bool {
	if c.callers == nil || callers.FromContext(r.Context()) != nil {
		return false
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="toolscout", error="invalid_token"`)
	http.Error(w, "Unauthorized: send your caller's token as \"Authorization: Bearer TOKEN\"", http.StatusUnauthorized)
	return true
}

// MetricsHandler serves s's metrics (Options.Metrics). With callers, a
// scrape must name a caller (callers.Set.Require) and sees the
// upstream servers and the index counts as that caller does: no series
// names a server it may not see.
func (s *Server) MetricsHandler() http.Handler {
	if s.scope.callers == nil {
		return s.metrics.Handler()
	}
	return s.scope.callers.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who := callers.FromContext(r.Context())
		if s.scope.refuseUnauthenticated(w, r) {
			return
		}
		g := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
			fams, err := s.metrics.reg.Gather()
			return s.scope.metricsFor(who, fams), err
		})
		promhttp.HandlerFor(g, promhttp.HandlerOpts{EnableOpenMetrics: true}).ServeHTTP(w, r)
	}), s.log)
}

// metricsFor rewrites gathered metric families as who sees them: series
// of servers it may not see dropped, the index counts its own.
func (c *callerScope) metricsFor(who *callers.Caller, fams []*dto.MetricFamily) []*dto.MetricFamily {
	cat := c.catalogFor(who)
	out := fams[:0]
	for _, f := range fams {
		switch f.GetName() {
		case "toolscout_index_tools":
			setGauge(f, float64(cat.Len()))
		case "toolscout_index_domains":
			setGauge(f, float64(len(cat.Domains())))
		}
		ms := f.Metric[:0]
		for _, m := range f.Metric {
			d, ok := serverLabel(m)
			if !ok {
				ms = append(ms, m)
				continue
			}
			if !c.domainVisible(who, d) {
				continue
			}
			if dom := cat.Domain(d); dom != nil && f.GetName() == "toolscout_upstream_tools" {
				setValue(m, float64(len(dom.Tools))) // the tools it sees
			}
			ms = append(ms, m)
		}
		f.Metric = ms
		if len(ms) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// serverLabel returns the server a series names by its "server" label.
func serverLabel(m *dto.Metric) (string, bool) {
	for _, l := range m.GetLabel() {
		if l.GetName() == "server" {
			return l.GetValue(), true
		}
	}
	return "", false
}

func setGauge(f *dto.MetricFamily, v float64) {
	for _, m := range f.Metric {
		setValue(m, v)
	}
}

func setValue(m *dto.Metric, v float64) {
	if m.Gauge != nil {
		m.Gauge.Value = &v
	}
}
