package surface

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/gateway"
)

// Subscriptions: a client subscribes to a URI (resources/subscribe, or a
// subscriptions/listen with resourceSubscriptions in the 2026-07-28
// protocol; the go-sdk calls subscribe for each); the go-sdk keeps which
// of its sessions want which URI, and toolscout subscribes on the
// upstream once for every client of the same upstream resource. When
// the upstream says the resource changed, every attached server tells
// its sessions subscribed to it, under each URI they used (listed, or
// the upstream's own). The last client to unsubscribe ends the
// upstream's subscription; a session that ends without unsubscribing is
// noticed at the resource's next update.

// upstreamURI is a resource as its upstream names it.
type upstreamURI struct{ domain, uri string }

// clientSub is one session's subscription, by the URI it used.
type clientSub struct {
	ss  *mcp.ServerSession
	uri string
}

// subscribe is the go-sdk's SubscribeHandler.
func (s *Surface) subscribe(ctx context.Context, req *mcp.SubscribeRequest, vis Visibility) error {
	if req.Params == nil || req.Params.URI == "" {
		return invalidParams("resources/subscribe needs a uri", map[string]any{})
	}
	uri := req.Params.URI
	st := s.st.Load()
	domain, origin, candidates := st.resolveResource(uri)
	if domain != "" && !st.resourceVisible(vis, domain, origin) {
		domain, candidates = "", nil
	}
	if domain == "" {
		return unknownResource(vis, st, uri, candidates)
	}
	key := upstreamURI{domain, origin}
	s.mu.Lock()
	if len(s.subs) >= max(2*s.subsKept, 64) || len(s.subs) >= maxSubscriptions {
		s.pruneLocked()
	}
	if len(s.subs[key]) == 0 && len(s.subs) >= maxSubscriptions {
		s.mu.Unlock()
		return invalidParams(fmt.Sprintf("resource %s: toolscout holds %d subscriptions, the most it keeps; unsubscribe from resources you no longer follow", quote(uri), maxSubscriptions), map[string]any{"uri": uri})
	}
	first := len(s.subs[key]) == 0
	if s.subs[key] == nil {
		s.subs[key] = map[clientSub]bool{}
	}
	s.subs[key][clientSub{req.Session, uri}] = true
	s.mu.Unlock()
	if !first {
		return nil
	}
	if err := s.sub.SubscribeResource(ctx, domain, origin); err != nil {
		s.mu.Lock()
		delete(s.subs[key], clientSub{req.Session, uri})
		if len(s.subs[key]) == 0 {
			delete(s.subs, key)
		}
		s.mu.Unlock()
		if errors.Is(err, gateway.ErrNoSubscriptions) {
			return invalidParams(fmt.Sprintf("resource %s: server %q does not support subscriptions; read it again to see changes", quote(uri), domain), map[string]any{"uri": uri})
		}
		return upstreamError(err, fmt.Sprintf("subscribing to resource %s", quote(uri)), map[string]any{"uri": uri})
	}
	return nil
}

// maxSubscriptions bounds the upstream resources subscribed to at once,
// for all clients together: a client that subscribes to every expansion
// of a template would otherwise grow them without end. A var so that
// tests can lower it.
var maxSubscriptions = 10000

// pruneLocked forgets the subscriptions of sessions that ended without
// unsubscribing, and ends the upstream subscriptions no session holds
// any more (in the background). s.mu is held. It runs when the
// subscriptions have doubled since it last ran, so that its scan costs
// little per subscription.
func (s *Surface) pruneLocked() {
	alive := map[*mcp.ServerSession]bool{}
	for srv := range s.mirrors {
		for ss := range srv.Sessions() {
			alive[ss] = true
		}
	}
	var ended []upstreamURI
	for key, cs := range s.subs {
		for c := range cs {
			if !alive[c.ss] {
				delete(cs, c)
			}
		}
		if len(cs) == 0 {
			delete(s.subs, key)
			ended = append(ended, key)
		}
	}
	s.subsKept = len(s.subs)
	if len(ended) == 0 {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, key := range ended {
			if err := s.sub.UnsubscribeResource(ctx, key.domain, key.uri); err != nil {
				s.log.Warn("unsubscribing from an upstream resource failed", "domain", key.domain, "uri", clip(key.uri), "err", err)
			}
		}
	}()
}

// unsubscribe is the go-sdk's UnsubscribeHandler.
func (s *Surface) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	if req.Params == nil {
		return nil
	}
	uri := req.Params.URI
	domain, origin, _ := s.st.Load().resolveResource(uri)
	if domain == "" {
		return nil // never subscribed: nothing to do
	}
	key := upstreamURI{domain, origin}
	s.mu.Lock()
	delete(s.subs[key], clientSub{req.Session, uri})
	last := s.subs[key] != nil && len(s.subs[key]) == 0
	if last {
		delete(s.subs, key)
	}
	s.mu.Unlock()
	if last {
		if err := s.sub.UnsubscribeResource(context.WithoutCancel(ctx), domain, origin); err != nil {
			s.log.Warn("unsubscribing from an upstream resource failed", "domain", domain, "uri", clip(origin), "err", err)
		}
	}
	return nil
}

// updated relays an upstream's notifications/resources/updated to the
// sessions subscribed to it, and ends the upstream's subscription when
// they have all gone.
func (s *Surface) updated(domain, uri string) {
	key := upstreamURI{domain, uri}
	s.mu.Lock()
	owner := map[*mcp.ServerSession]*mcp.Server{}
	for srv := range s.mirrors {
		for ss := range srv.Sessions() {
			owner[ss] = srv
		}
	}
	type send struct {
		srv *mcp.Server
		uri string
	}
	sends := map[send]bool{}
	for c := range s.subs[key] {
		if srv := owner[c.ss]; srv != nil {
			sends[send{srv, c.uri}] = true
		} else {
			delete(s.subs[key], c)
		}
	}
	gone := s.subs[key] != nil && len(s.subs[key]) == 0
	if gone {
		delete(s.subs, key)
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if gone {
		if err := s.sub.UnsubscribeResource(ctx, domain, uri); err != nil {
			s.log.Warn("unsubscribing from an upstream resource failed", "domain", domain, "uri", clip(uri), "err", err)
		}
		return
	}
	// Each server tells its sessions subscribed to the URI.
	for x := range sends {
		_ = x.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: x.uri})
	}
}
