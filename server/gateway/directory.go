package gateway

import (
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/toolscout/toolscout/index"
)

// Directory answers what the upstreams serve and say of themselves
// (Gateway.Directory): the domains to index and their catalog, why a
// server is unavailable, its title and instructions; and keeps every
// upstream's tools for the next start.
type Directory struct {
	f    *Upstreams
	base []index.DomainSpec
	wf   WordFrequency
	keep func([]index.ListedTools) error // Options.Keep
	// keepMu makes one save at a time, in the order of the listings.
	keepMu sync.Mutex
	log    *slog.Logger
}

// Specs returns the domains to index: the base catalog's, then every
// upstream's last known tools (the last run's until it lists them, and
// kept while a server is down, so that they stay discoverable).
func (d *Directory) Specs() []index.DomainSpec {
	specs := append([]index.DomainSpec{}, d.base...)
	for _, u := range d.f.ups {
		l, _ := u.snapshot()
		if l.tools == nil {
			continue
		}
		desc, about := u.cfg.Description, ""
		if desc == "" {
			desc = describeUpstream(l.title, l.instr, l.tools, d.wf)
		} else {
			// What the derived description would have said of the
			// server itself still counts in ranking.
			about = describeUpstream(l.title, l.instr, nil, nil)
		}
		specs = append(specs, index.DomainSpec{Name: u.cfg.Domain, Description: desc, About: about, Tools: l.tools, Source: "upstream " + u.cfg.Domain})
	}
	return specs
}

// Catalog returns the catalog of with's domains, then of Specs': what
// the upstream servers list now (their last known tools), for a look at
// them without an index (doctor's); with the domains of catalog files,
// what a client's first session would find.
func (d *Directory) Catalog(with ...index.DomainSpec) (*index.Catalog, error) {
	return index.NewCatalog(append(slices.Clone(with), d.Specs()...))
}

// save hands every upstream's last tools to Options.Keep.
func (d *Directory) save() {
	if d.keep == nil {
		return
	}
	d.keepMu.Lock()
	defer d.keepMu.Unlock()
	var all []index.ListedTools
	for _, u := range d.f.ups {
		if l, _ := u.snapshot(); l.tools != nil {
			all = append(all, index.ListedTools{Domain: u.cfg.Domain, Title: l.title, Instructions: l.instr, Tools: l.tools})
		}
	}
	if err := d.keep(all); err != nil {
		d.log.Warn("could not keep the upstream servers' tools in the data dir; the next start waits for the servers to list them", "err", err)
	}
}

// StillConnecting is Unavailable's reason for a server whose first
// connection attempt has not ended.
const StillConnecting = "still connecting"

// Unavailable returns, for each upstream that is not connected, why:
// StillConnecting, or down with its last error.
func (d *Directory) Unavailable() map[string]string {
	out := map[string]string{}
	for _, u := range d.f.ups {
		if why, ok := u.unavailable(); ok {
			out[u.cfg.Domain] = why
		}
	}
	return out
}

// ConfiguredDescriptions returns, for every upstream, the description
// its config gives ("" when none): what the server's instructions say a
// server is for, before what the gateway derives for ranking.
func (d *Directory) ConfiguredDescriptions() map[string]string {
	out := make(map[string]string, len(d.f.ups))
	for _, u := range d.f.ups {
		out[u.cfg.Domain] = u.cfg.Description
	}
	return out
}

// Titles returns each upstream's title for itself (its serverInfo title,
// else its name; from its initialize answer, or the last run's until it
// connects), for the servers that gave one.
func (d *Directory) Titles() map[string]string {
	return d.each(func(l toolList) string { return l.title })
}

// Instructions returns each upstream's own instructions (from its
// initialize answer, or the last run's until it connects), for the
// servers that gave any.
func (d *Directory) Instructions() map[string]string {
	return d.each(func(l toolList) string { return l.instr })
}

// each returns of(what each upstream serves), trimmed, by domain, for
// the upstreams where it is not empty.
func (d *Directory) each(of func(toolList) string) map[string]string {
	out := map[string]string{}
	for _, u := range d.f.ups {
		l, _ := u.snapshot()
		if s := strings.TrimSpace(of(l)); s != "" {
			out[u.cfg.Domain] = s
		}
	}
	return out
}
