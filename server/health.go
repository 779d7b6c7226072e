package server

import (
	"fmt"
	"net/http"

	"github.com/toolscout/toolscout/server/boot"
)

// Why a server is not ready (Ready): server/boot's, which decides
// (boot.NotReady).
var (
	ErrDraining          = boot.ErrDraining
	ErrIndexLoading      = boot.ErrIndexLoading
	ErrSemanticLoading   = boot.ErrSemanticLoading
	ErrUpstreamsStarting = boot.ErrUpstreamsStarting
)

// Drain marks the server as shutting down: from now on Ready reports
// ErrDraining, so that /readyz answers 503 and load balancers send no
// new work. Requests in flight are not touched.
func (s *Server) Drain() { s.draining.Store(true) }

// Ready returns nil when the server answers every request as it should,
// which is what a load balancer takes a 200 from /readyz to mean: its
// index is loaded (keyword and vectors) and, when it follows upstream
// servers, every one of them has finished its first connection attempt
// (answered or failed) and what they listed is indexed, or the startup
// wait has passed since the server started. Ready says nothing of
// whether the servers are up: one that failed is retried in the
// background and its calls say it is unavailable (the metrics say which
// are up). Before that, a call of a tool of a server still connecting
// would wait for it. Otherwise Ready returns why not: ErrDraining,
// ErrIndexLoading, ErrSemanticLoading or ErrUpstreamsStarting. A server
// whose index failed to load and that lists every tool directly instead
// (fallback eager) is ready.
func (s *Server) Ready() error {
	return s.start.ready.NotReady(s.draining.Load())
}

// HealthHandler answers liveness probes (/healthz): 200 "ok" for as long
// as the process serves HTTP, draining included.
func HealthHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plainText(w, http.StatusOK, "ok")
	})
}

// ReadyHandler answers readiness probes (/readyz): 200 "ready" when Ready
// returns nil, else 503 with the reason.
func (s *Server) ReadyHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.Ready(); err != nil {
			plainText(w, http.StatusServiceUnavailable, "not ready: "+err.Error())
			return
		}
		plainText(w, http.StatusOK, "ready")
	})
}

// plainText writes a short uncached text answer.
func plainText(w http.ResponseWriter, code int, text string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	fmt.Fprintln(w, text)
}
