package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
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

// pinState is one upstream's pins: what its last listing holds back,
// and which of the changes were logged.
type pinState struct {
	pinner Pinner // nil: what the server lists is served
	domain string
	log    *slog.Logger
	// order orders the pinning of listings (upstream.list, repin); it
	// guards heldLogged, the listed definitions' hashes already logged.
	order      sync.Mutex
	heldLogged map[string]string
	mu         sync.Mutex
	held       map[string]pin.Held // the tools held back, by name
}

// pin returns what to serve of what the server listed, and keeps the
// tools it holds back; it logs what is new to this gateway: tools pinned
// on first sight, changes held (with their diff), changes approved.
// p.order is held.
func (p *pinState) pin(listed []index.ToolSpec) ([]index.ToolSpec, error) {
	if p.pinner == nil {
		return listed, nil
	}
	res, err := p.pinner.Pin(p.domain, listed)
	if err != nil {
		return nil, err
	}
	if len(res.New) > 0 {
		p.log.Info("upstream tools pinned on first sight", "domain", p.domain, "tools", len(res.New))
	}
	held := map[string]pin.Held{}
	var unchecked []string // new to this gateway
	for _, h := range res.Held {
		held[h.Tool] = h
		if p.heldLogged[h.Tool] == h.Listed.Hash() {
			continue
		}
		if h.Unchecked {
			unchecked = append(unchecked, h.Tool)
			continue
		}
		p.log.Warn("upstream tool definition changed: serving the approved one, and refusing calls until the change is approved",
			"domain", p.domain, "tool", h.Tool, "changed", strings.Join(h.Fields(), ", "),
			"approve", "toolscout approve "+index.QualifiedName(p.domain, h.Tool), "diff", h.Diff())
	}
	if len(unchecked) > 0 {
		// One line for them all: without a good copy, that is every tool.
		p.log.Warn("upstream tools first seen since the pinned definitions were damaged: serving them as listed, and refusing calls until an operator reviews and approves them (toolscout approve)",
			"domain", p.domain, "tools", strings.Join(unchecked, ", "))
	}
	for name := range p.heldLogged {
		if _, ok := held[name]; !ok {
			p.log.Info("upstream tool definition approved or restored: serving it as listed", "domain", p.domain, "tool", name)
		}
	}
	p.heldLogged = map[string]string{}
	for name, h := range held {
		p.heldLogged[name] = h.Listed.Hash()
	}
	p.mu.Lock()
	p.held = held
	p.mu.Unlock()
	return res.Serve, nil
}

// get returns how tool is held back, if it is.
func (p *pinState) get(tool string) (pin.Held, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h, ok := p.held[tool]
	return h, ok
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
		for _, u := range g.fleet.ups {
			changed = u.repin() || changed
		}
		if changed {
			g.env.toolsChanged()
		}
	}
}
