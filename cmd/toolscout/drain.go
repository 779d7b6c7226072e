package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// inFlight counts the MCP requests being answered, so that a drain knows
// when the last one is done. GET requests are not counted: a GET /mcp is
// an event stream that a client holds open, and never ends by itself.
type inFlight struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0, made while n > 0
	last time.Time     // when the last request ended
}

// count wraps h so that its non-GET requests are counted while they run.
func (f *inFlight) count(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			h.ServeHTTP(w, r)
			return
		}
		f.mu.Lock()
		f.n++
		f.mu.Unlock()
		defer f.done()
		h.ServeHTTP(w, r)
	})
}

func (f *inFlight) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	f.last = time.Now()
	if f.n == 0 && f.idle != nil {
		close(f.idle)
		f.idle = nil
	}
}

// wait returns a channel closed once no request is in flight, how many
// are now, and when the last one ended.
func (f *inFlight) wait() (<-chan struct{}, int, time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		ch := make(chan struct{})
		close(ch)
		return ch, 0, f.last
	}
	if f.idle == nil {
		f.idle = make(chan struct{})
	}
	return f.idle, f.n, f.last
}

// streamGrace is how long the requests must have been done before a
// drain ends the event streams: a client reads the answer to its last
// call on that call's response while its event stream (GET /mcp) is
// still open. The go-sdk client fails its session, the answer it has
// not read yet included, as soon as its event stream ends and cannot be
// reopened (the listener is closed by then).
const streamGrace = time.Second

// drain shuts hs down gracefully: it stops accepting connections at
// once, lets the requests in flight finish for at most timeout (a
// SIGINT or SIGTERM meanwhile cuts it short), then, once none has run for
// streamGrace, ends the event streams that clients hold open (endStreams
// cancels their requests' context) and closes every connection left.
func drain(hs *http.Server, calls *inFlight, endStreams context.CancelFunc, timeout time.Duration, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	go func() {
		select {
		case <-again:
			log.Warn("second signal: not waiting for the requests in flight")
			cancel()
		case <-ctx.Done():
		}
	}()
	start := time.Now()
	shut := make(chan error, 1)
	go func() { shut <- hs.Shutdown(ctx) }()
	_, n, _ := calls.wait()
	log.Info("draining: no new connections, waiting for the requests in flight", "in_flight", n, "drain_timeout", timeout)
	calls.quiet(ctx, streamGrace)
	_, left, _ := calls.wait()
	endStreams()
	if err := <-shut; err != nil {
		hs.Close()
	}
	if left > 0 {
		log.Warn("drain cut requests short", "in_flight", left, "after", time.Since(start).Round(time.Millisecond))
		return
	}
	log.Info("drained", "in", time.Since(start).Round(time.Millisecond))
}

// quiet returns once no request is in flight and none has ended for
// grace, or when ctx ends.
func (f *inFlight) quiet(ctx context.Context, grace time.Duration) {
	for {
		idle, _, _ := f.wait()
		select {
		case <-idle:
		case <-ctx.Done():
			return
		}
		_, n, last := f.wait()
		wait := time.Until(last.Add(grace))
		if n == 0 && wait <= 0 {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
}

// notReadyFor keeps serving for d after /readyz turned 503, so that a
// load balancer sees the server go and sends it nothing new before it
// stops accepting connections: without it, a request sent in the instant
// of the SIGTERM on a connection the server is closing gets no answer,
// and the balancer cannot retry it. A second signal ends the wait.
func notReadyFor(d time.Duration, log *slog.Logger) {
	if d <= 0 {
		return
	}
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	log.Info("draining: /readyz answers 503; still serving until load balancers see it", "drain_delay", d)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-again:
		log.Warn("second signal: not waiting for load balancers")
	}
}
