package gateway

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/pin"
)

// Pinned tool definitions (index/pin): with Options.Pins, what a server
// lists goes through the Pinner before it is served. A tool whose
// definition changed since it was approved is served as approved
// (listed, found, described by its approved definition) and is not run:
// Execute refuses it with ErrHeld until the change is approved. Running
// it would run the changed tool (what it now does, what it does with its
// arguments) under the description and schema the model was shown, which
// is the attack pinning is for; a tool that is both listed and refused
// tells the model why, and the operator what to review.

// Pinner decides what to serve of a server's listing (pin.Guard).
type Pinner interface {
	Pin(domain string, listed []index.ToolSpec) (pin.Result, error)
}

var _ Pinner = (*pin.Guard)(nil)

// stamper is a Pinner whose approvals can change from outside: the
// gateway looks at Stamp every Options.PinPoll and checks the servers'
// last listings again when it changed.
type stamper interface {
	Stamp() string
}

// ErrHeld is wrapped by Execute's error for a tool whose definition
// changed upstream and waits for approval.
var ErrHeld = errors.New("tool definition changed upstream, waiting for approval")

// pinned returns what to serve of what u's server listed, and the tools
// held back by name; it logs what is new to this gateway: tools pinned on
// first sight, changes held (with their diff), changes approved. u.pinMu
// is held.
func (g *Gateway) pinned(u *upstream, listed []index.ToolSpec) ([]index.ToolSpec, map[string]pin.Held, error) {
	if g.opts.Pins == nil {
		return listed, nil, nil
	}
	res, err := g.opts.Pins.Pin(u.cfg.Domain, listed)
	if err != nil {
		return nil, nil, err
	}
	if len(res.New) > 0 {
		g.log.Info("upstream tools pinned on first sight", "domain", u.cfg.Domain, "tools", len(res.New))
	}
	held := map[string]pin.Held{}
	var unchecked []string // new to this gateway
	for _, h := range res.Held {
		held[h.Tool] = h
		if u.heldLogged[h.Tool] == h.Listed.Hash() {
			continue
		}
		if h.Unchecked {
			unchecked = append(unchecked, h.Tool)
			continue
		}
		g.log.Warn("upstream tool definition changed: serving the approved one, and refusing calls until the change is approved",
			"domain", u.cfg.Domain, "tool", h.Tool, "changed", strings.Join(h.Fields(), ", "),
			"approve", "toolscout approve "+index.QualifiedName(u.cfg.Domain, h.Tool), "diff", h.Diff())
	}
	if len(unchecked) > 0 {
		// One line for them all: without a good copy, that is every tool.
		g.log.Warn("upstream tools first seen since the pinned definitions were damaged: serving them as listed, and refusing calls until an operator reviews and approves them (toolscout approve)",
			"domain", u.cfg.Domain, "tools", strings.Join(unchecked, ", "))
	}
	for name := range u.heldLogged {
		if _, ok := held[name]; !ok {
			g.log.Info("upstream tool definition approved or restored: serving it as listed", "domain", u.cfg.Domain, "tool", name)
		}
	}
	u.heldLogged = map[string]string{}
	for name, h := range held {
		u.heldLogged[name] = h.Listed.Hash()
	}
	return res.Serve, held, nil
}

// heldError says why t does not run.
func heldError(t *index.Tool, h pin.Held) error {
	if h.Unchecked {
		return classed(ErrHeld, fmt.Errorf("%s does not run: toolscout's record of the approved tool definitions was damaged, so it cannot check that server %q still lists the definition that was approved, and it holds the tool back until an operator reviews and approves it (`toolscout approve %s`). Tell the user",
			t.QualifiedName, t.Domain, t.QualifiedName))
	}
	return classed(ErrHeld, fmt.Errorf("%s does not run: server %q changed the tool's definition (%s) since it was approved, and toolscout holds a changed tool back until an operator reviews and approves the change (`toolscout approve %s`); the description and schema you see are the approved ones. Tell the user; other tools work",
		t.QualifiedName, t.Domain, strings.Join(h.Fields(), ", "), t.QualifiedName))
}

// watchPins checks every server's last listing again whenever the
// Pinner's stamp changes (an approval from another process), until ctx
// is done.
func (g *Gateway) watchPins(ctx context.Context, st stamper) {
	every := g.opts.PinPoll
	if every <= 0 {
		every = 2 * time.Second
	}
	last := st.Stamp()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		s := st.Stamp()
		if s == last {
			continue
		}
		last = s
		changed := false
		for _, u := range g.ups {
			changed = g.repin(u) || changed
		}
		if changed {
			g.keepListed()
			g.notify()
		}
	}
}

// repin checks u's last listing against the pins again; it reports
// whether what u serves changed.
func (g *Gateway) repin(u *upstream) bool {
	u.pinMu.Lock()
	defer u.pinMu.Unlock()
	u.mu.Lock()
	listed := u.listed
	u.mu.Unlock()
	if listed == nil {
		return false
	}
	served, held, err := g.pinned(u, listed)
	if err != nil {
		g.log.Warn("could not check the upstream tools against their pinned definitions; serving what was served", "domain", u.cfg.Domain, "err", err)
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	same := reflect.DeepEqual(u.tools, served)
	u.tools, u.held = served, held
	return !same
}

// Held reports whether the upstream tool (its name on its server) is held
// back: its definition changed since it was approved, and Execute refuses
// it until the change is.
func (g *Gateway) Held(domain, tool string) bool {
	u := g.byDom[domain]
	if u == nil {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	_, held := u.held[tool]
	return held
}

// Unchecked reports whether the upstream tool is held because it was
// first seen after the pinned definitions were damaged (pin.Review):
// there is no approved definition to serve, so the listed one is, and
// Execute refuses it until it is approved.
func (g *Gateway) Unchecked(domain, tool string) bool {
	u := g.byDom[domain]
	if u == nil {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.held[tool].Unchecked
}
