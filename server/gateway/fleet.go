package gateway

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// Upstreams are a gateway's upstream servers in the order of the config,
// found by domain (Gateway.Upstreams): what is asked of one server's
// state by name (whether it may run a tool, whether it has started, its
// folders, its held tools), its status, and what is waited for on all of
// them.
type Upstreams struct {
	ups   []*upstream
	byDom map[string]*upstream
}

// get returns domain's upstream, or an error naming the domain.
func (f *Upstreams) get(domain string) (*upstream, error) {
	if u := f.byDom[domain]; u != nil {
		return u, nil
	}
	return nil, fmt.Errorf("no server %q", domain)
}

// WaitReady waits until every upstream has finished its first connection
// attempt (successful or not) or ctx is done.
func (f *Upstreams) WaitReady(ctx context.Context) {
	f.waitEach(ctx, func(u *upstream) <-chan struct{} { return u.ready })
}

// WaitKnown waits until every upstream's tools are known (listed on its
// last run, or now, or it failed its first connection attempt) or ctx is
// done.
func (f *Upstreams) WaitKnown(ctx context.Context) {
	f.waitEach(ctx, func(u *upstream) <-chan struct{} { return u.known })
}

// waitEach waits until ch(u) is closed for every upstream u, or ctx is
// done.
func (f *Upstreams) waitEach(ctx context.Context, ch func(u *upstream) <-chan struct{}) {
	for _, u := range f.ups {
		select {
		case <-ch(u):
		case <-ctx.Done():
			return
		}
	}
}

// Connecting returns the domains whose servers have not finished their
// first connection attempt, for what a wait says it waits for.
func (f *Upstreams) Connecting() []string {
	var out []string
	for _, u := range f.ups {
		select {
		case <-u.ready:
		default:
			out = append(out, u.cfg.Domain)
		}
	}
	return out
}

// Started returns a channel closed once domain's server has finished
// its first connection attempt (successful or not), nil when domain
// names none of the gateway's servers.
func (f *Upstreams) Started(domain string) <-chan struct{} {
	if u := f.byDom[domain]; u != nil {
		return u.ready
	}
	return nil
}

// Executable reports whether Execute can run tools of domain: it is a
// configured server's (connected or not yet), not only a catalog's.
func (f *Upstreams) Executable(domain string) bool { return f.byDom[domain] != nil }

// Folders returns the folders domain's server was given on its command
// line: the arguments that are absolute paths of existing directories
// (the filesystem server's allowed directories), cleaned. None for a
// remote server or an unknown domain.
func (f *Upstreams) Folders(domain string) []string {
	u := f.byDom[domain]
	if u == nil || u.cfg.Command == "" {
		return nil
	}
	var out []string
	for _, a := range u.cfg.Args {
		if !filepath.IsAbs(a) {
			continue
		}
		if fi, err := os.Stat(a); err == nil && fi.IsDir() {
			out = append(out, filepath.Clean(a))
		}
	}
	return out
}

// Held reports whether the upstream tool (its name on its server) is held
// back: its definition changed since it was approved, and Execute refuses
// it until the change is.
func (f *Upstreams) Held(domain, tool string) bool {
	u := f.byDom[domain]
	if u == nil {
		return false
	}
	_, held := u.pins.get(tool)
	return held
}

// Unchecked reports whether the upstream tool is held because it was
// first seen after the pinned definitions were damaged (pin.Review):
// there is no approved definition to serve, so the listed one is, and
// Execute refuses it until it is approved.
func (f *Upstreams) Unchecked(domain, tool string) bool {
	u := f.byDom[domain]
	if u == nil {
		return false
	}
	h, _ := u.pins.get(tool)
	return h.Unchecked
}

// Status reports every upstream.
func (f *Upstreams) Status() []UpstreamStatus {
	out := make([]UpstreamStatus, 0, len(f.ups))
	for _, u := range f.ups {
		_, st := u.snapshot()
		out = append(out, st)
	}
	return out
}
