package server

import (
	"context"
	"reflect"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A view's directly listed tools change one AddTool or RemoveTools at a
// time, and the go-sdk announces tools/list_changed 10 ms after the last
// of them: a change of hundreds of tools that pauses longer than that
// (a busy machine, a GC) announced itself mid-way, and a client that
// listed then got part of the list. listSync makes each change whole to
// clients: tools/list waits while one is made, and a notification that
// falls inside it is held, then sent once the change is done, at most one
// per session and change, and none to a session that listed the tools
// since the change or is listing them (a client whose first tools/list
// waited for the catalog to load needs no notice that it loaded), nor to
// one that never listed them: it has no list to refresh.

const notificationToolListChanged = "notifications/tools/list_changed"

// listSync is a view's side of that: see the comment above.
type listSync struct {
	// lists is held for writing while the view's tools change, and for
	// reading by each tools/list.
	lists sync.RWMutex

	mu       sync.Mutex
	changing bool
	gen      uint64 // completed changes
	// current is the gen each session is known to have seen: it listed
	// the tools after that change, or was told of it.
	current map[*mcp.ServerSession]uint64
	// listing counts each session's tools/list requests not answered
	// yet: they answer with the tools of the current change, or a later.
	listing map[*mcp.ServerSession]int
	held    []heldNotice // notifications that fell inside a change
	// srv is the view's server, whose Sessions are the live ones; keep is
	// the size of current after its last pruning.
	srv  *mcp.Server
	keep int
}

// heldNotice is a tools/list_changed notification to send later: the
// handler it was on its way to, and the request (session and params) as
// the go-sdk made it.
type heldNotice struct {
	next mcp.MethodHandler
	req  mcp.Request
}

// begin starts a change of the view's tools.
func (l *listSync) begin() {
	l.lists.Lock()
	l.mu.Lock()
	l.changing = true
	l.mu.Unlock()
}

// end finishes the change begun by begin; changed says whether the tools
// changed. Held notifications are sent (in the background: a slow client
// must not hold up the change), to each session that was not told of
// this change yet.
func (l *listSync) end(changed bool, srv *mcp.Server) {
	defer l.lists.Unlock() // after gen moved: a list is of one gen
	l.mu.Lock()
	l.changing = false
	if changed {
		l.gen++
	}
	var send []heldNotice
	for _, h := range l.held {
		if l.tell(h.req) {
			send = append(send, h)
		}
	}
	l.held = nil
	l.srv = srv
	l.prune()
	l.mu.Unlock()
	if len(send) == 0 {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, h := range send {
			_, _ = h.next(ctx, notificationToolListChanged, h.req)
		}
	}()
}

// tell reports whether the session of req is to be told of the current
// change, and records that it is. l.mu is held.
func (l *listSync) tell(req mcp.Request) bool {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	n, listed := l.current[ss]
	switch {
	case listed && n == l.gen:
		return false // told, or listed since
	case !listed && !subscribed(req):
		return false // it has no list to refresh
	}
	l.seen(ss)
	return l.listing[ss] == 0
}

// subscribed reports whether a notification goes to a
// subscriptions/listen stream (a client of the stateless protocol, which
// lists tools on other requests than the one it listens on).
func subscribed(req mcp.Request) bool {
	p := req.GetParams()
	if p == nil || reflect.ValueOf(p).IsNil() {
		return false
	}
	_, ok := p.GetMeta()[mcp.MetaKeySubscriptionID]
	return ok
}

// seen records that ss has seen the current change. l.mu is held. Every
// session that lists is recorded, each stateless request's too, and
// sessions end without telling: once current has doubled since it was
// last pruned, the sessions that ended are forgotten (a cost of one scan
// per doubling, so memory follows the sessions open).
func (l *listSync) seen(ss *mcp.ServerSession) {
	if l.current == nil {
		l.current = map[*mcp.ServerSession]uint64{}
	}
	l.current[ss] = l.gen
	if len(l.current) >= max(2*l.keep, 64) {
		l.prune()
	}
}

// prune forgets the sessions of current that ended. l.mu is held.
func (l *listSync) prune() {
	if l.srv == nil || len(l.current) == 0 {
		l.keep = len(l.current)
		return
	}
	alive := map[*mcp.ServerSession]bool{}
	for ss := range l.srv.Sessions() {
		alive[ss] = true
	}
	for ss := range l.current {
		if !alive[ss] {
			delete(l.current, ss)
		}
	}
	l.keep = len(l.current)
}

// list answers a tools/list: after wait (the start settling), through
// next between two changes, recording that its session has seen the
// current one.
func (l *listSync) list(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request, wait func()) (mcp.Result, error) {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	l.mu.Lock()
	if l.listing == nil {
		l.listing = map[*mcp.ServerSession]int{}
	}
	l.listing[ss]++
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		if l.listing[ss]--; l.listing[ss] <= 0 {
			delete(l.listing, ss)
		}
		l.mu.Unlock()
	}()
	wait()
	l.lists.RLock()
	defer l.lists.RUnlock()
	res, err := next(ctx, method, req)
	if err == nil {
		l.mu.Lock()
		l.seen(ss)
		l.mu.Unlock()
	}
	return res, err
}

// middleware is the view's sending middleware: it holds the go-sdk's
// tools/list_changed notifications during a change and drops those of a
// change the session was told of already.
func (l *listSync) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != notificationToolListChanged {
			return next(ctx, method, req)
		}
		l.mu.Lock()
		if l.changing {
			l.held = append(l.held, heldNotice{next: next, req: req})
			l.mu.Unlock()
			return nil, nil
		}
		tell := l.tell(req)
		l.mu.Unlock()
		if !tell {
			return nil, nil
		}
		return next(ctx, method, req)
	}
}
