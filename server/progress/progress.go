package progress

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// noticeAfter is how long a wait goes unreported: most are shorter.
const noticeAfter = time.Second

// noticeEvery is how often a wait sends a progress notification; a log
// line without a progress token goes out every logEvery.
const (
	noticeEvery = time.Second
	logEvery    = 10 * time.Second
)

// callKey is the context key of the request a wait reports to.
type callKey struct{}

// clientCall is a client request being answered: where its waits send
// progress.
type clientCall struct {
	req   mcp.Request
	start time.Time
	mu    sync.Mutex
	last  float64 // the last progress sent: each must be larger
}

// WithCall returns ctx carrying req, the client request a Wait made with
// ctx reports to, unless it carries a request already: the waits of one
// request (for the index, then for an upstream server) send it one rising
// series of progress notifications.
func WithCall(ctx context.Context, req mcp.Request) context.Context {
	if _, ok := ctx.Value(callKey{}).(*clientCall); ok {
		return ctx
	}
	return context.WithValue(ctx, callKey{}, &clientCall{req: req, start: time.Now()})
}

// progressTarget returns the session and progress token of req, or nil
// when the client asked for no progress.
func progressTarget(req mcp.Request) (*mcp.ServerSession, any) {
	if req == nil || reflect.ValueOf(req).IsNil() {
		return nil, nil
	}
	ss, ok := req.GetSession().(*mcp.ServerSession)
	p, pok := req.GetParams().(interface{ GetProgressToken() any })
	if !ok || ss == nil || !pok || reflect.ValueOf(p).IsNil() {
		return nil, nil
	}
	tok := p.GetProgressToken()
	if tok == nil {
		return nil, nil
	}
	return ss, tok
}

// Wait waits until ready closes or ctx ends, and reports whether ready
// closed. A wait longer than noticeAfter is told to the client of the
// request in ctx (WithCall; else req) as progress notifications
// every noticeEvery, with what() as their message, when it sent a
// progress token, and logged otherwise, as label ("tools/list waits").
func Wait(ctx context.Context, log *slog.Logger, req mcp.Request, ready <-chan struct{}, label string, what func() string) bool {
	select {
	case <-ready:
		return true
	default:
	}
	c, ok := ctx.Value(callKey{}).(*clientCall)
	if !ok {
		c = &clientCall{req: req, start: time.Now()}
	}
	ss, token := progressTarget(c.req)
	start := time.Now()
	tick := time.NewTicker(noticeEvery)
	defer tick.Stop()
	var logged time.Time
	for {
		select {
		case <-ready:
			if !logged.IsZero() {
				log.Info(label+": done waiting", "waited", time.Since(start).Round(time.Millisecond))
			}
			return true
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				log.Warn(label+": stopped waiting", "for", what(), "waited", time.Since(start).Round(time.Millisecond))
			}
			return false
		case now := <-tick.C:
			if now.Sub(start) < noticeAfter {
				continue
			}
			if token != nil {
				c.mu.Lock()
				p := max(now.Sub(c.start).Seconds(), c.last+0.001)
				c.last = p
				c.mu.Unlock()
				_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: p, Message: what()})
			} else if logged.IsZero() || now.Sub(logged) >= logEvery {
				logged = now
				log.Info(label, "for", what(), "waiting", now.Sub(start).Round(time.Second))
			}
		}
	}
}
