package pin

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolscout/toolscout/index"
)

// How a definition came to be approved (Entry.By).
const (
	ByFirstSight = "first sight"
	ByApprove    = "toolscout approve"
)

// ErrNoPending is wrapped by Approve's error for a tool with no change
// waiting for approval.
var ErrNoPending = errors.New("no change waits for approval")

// Entry is one tool's pin: the definition approved for it and, when the
// server has listed another since, that one, pending.
type Entry struct {
	Domain     string     `json:"domain"`
	Tool       string     `json:"tool"`
	Hash       string     `json:"hash"`
	Definition Definition `json:"definition"`
	Approved   time.Time  `json:"approved"`
	By         string     `json:"by"`
	Pending    *Change    `json:"pending,omitempty"`
}

// Change is a definition listed that differs from the approved one.
type Change struct {
	Hash       string     `json:"hash"`
	Definition Definition `json:"definition"`
	Seen       time.Time  `json:"seen"`
}

// Book is the pins of one catalog set's upstream tools. The zero value is
// an empty book. It is not safe for concurrent use: index/store hands it
// out under a lock.
type Book struct {
	Tools []Entry `json:"tools"`
}

// Held is a tool whose listed definition is held back: the approved one
// is served in its place.
type Held struct {
	Domain, Tool string
	// Approved is what is served; Listed what the server lists now.
	Approved, Listed Definition
	// Seen is when the listed definition was first seen.
	Seen time.Time
}

// Diff returns the unified diff from the approved definition to the
// listed one.
func (h Held) Diff() string { return Diff(h.Approved, h.Listed) }

// Fields names what changed ("description", "inputSchema", ...).
func (h Held) Fields() []string { return h.Approved.Fields(h.Listed) }

// Name returns the tool's domain/tool name.
func (h Held) Name() string { return h.Domain + "/" + h.Tool }

// Result is what Check decided for one server's listing.
type Result struct {
	// Serve are the tools to serve: as listed, but a held tool's
	// approved definition in place of the listed one.
	Serve []index.ToolSpec
	// Held are the tools whose listed definition is held back.
	Held []Held
	// New names the tools pinned on first sight by this check.
	New []string
	// Changed says whether the book changed (to be saved).
	Changed bool
}

// find returns the index of domain/tool's entry, or -1.
func (b *Book) find(domain, tool string) int {
	for i := range b.Tools {
		if b.Tools[i].Domain == domain && b.Tools[i].Tool == tool {
			return i
		}
	}
	return -1
}

// Len returns the number of pinned tools.
func (b *Book) Len() int { return len(b.Tools) }

// Check compares what domain's server listed with the book: a tool never
// seen is pinned as listed; one whose definition hashes as approved is
// served as listed (a pending change it had is dropped: the server went
// back); any other is held, its listed definition recorded as pending.
// Tools the server no longer lists keep their pins: one that comes back
// changed is held too.
func (b *Book) Check(domain string, listed []index.ToolSpec, now time.Time) Result {
	var res Result
	res.Serve = make([]index.ToolSpec, 0, len(listed))
	for _, ts := range listed {
		def := Of(ts)
		h := def.Hash()
		i := b.find(domain, ts.Name)
		if i < 0 {
			b.Tools = append(b.Tools, Entry{Domain: domain, Tool: ts.Name, Hash: h, Definition: def, Approved: now.UTC(), By: ByFirstSight})
			res.New = append(res.New, ts.Name)
			res.Serve = append(res.Serve, ts)
			res.Changed = true
			continue
		}
		e := &b.Tools[i]
		if e.Hash == h {
			if e.Pending != nil {
				e.Pending = nil
				res.Changed = true
			}
			res.Serve = append(res.Serve, ts)
			continue
		}
		if e.Pending == nil || e.Pending.Hash != h {
			e.Pending = &Change{Hash: h, Definition: def, Seen: now.UTC()}
			res.Changed = true
		}
		res.Serve = append(res.Serve, e.Definition.serve(ts))
		res.Held = append(res.Held, Held{Domain: domain, Tool: ts.Name, Approved: e.Definition, Listed: def, Seen: e.Pending.Seen})
	}
	if res.Changed {
		b.sort()
	}
	return res
}

// sort orders the entries by domain and tool, so that the file is the
// same for the same pins.
func (b *Book) sort() {
	slices.SortFunc(b.Tools, func(x, y Entry) int {
		if c := strings.Compare(x.Domain, y.Domain); c != 0 {
			return c
		}
		return strings.Compare(x.Tool, y.Tool)
	})
}

// Pending returns the changes waiting for approval, by domain and tool.
func (b *Book) Pending() []Held {
	var out []Held
	for _, e := range b.Tools {
		if e.Pending != nil {
			out = append(out, Held{Domain: e.Domain, Tool: e.Tool, Approved: e.Definition, Listed: e.Pending.Definition, Seen: e.Pending.Seen})
		}
	}
	return out
}

// Approve makes domain/tool's pending definition the approved one. It
// fails, wrapping ErrNoPending, when none is pending.
func (b *Book) Approve(domain, tool string, now time.Time) error {
	i := b.find(domain, tool)
	if i < 0 || b.Tools[i].Pending == nil {
		return fmt.Errorf("%s/%s: %w", domain, tool, ErrNoPending)
	}
	e := &b.Tools[i]
	e.Hash, e.Definition, e.Approved, e.By, e.Pending = e.Pending.Hash, e.Pending.Definition, now.UTC(), ByApprove, nil
	return nil
}

// Validate checks what a file cannot be trusted to hold: every entry with
// a valid domain and a tool name, once, and hashes that match their
// definitions (a hand edit that changes a definition but not its hash
// would otherwise approve what nobody approved).
func (b *Book) Validate() error {
	seen := map[[2]string]bool{}
	for i, e := range b.Tools {
		key := [2]string{e.Domain, e.Tool}
		switch {
		case !index.ValidDomainName(e.Domain) || e.Tool == "":
			return fmt.Errorf("entry %d: domain %q, tool %q: not a valid tool", i, e.Domain, e.Tool)
		case seen[key]:
			return fmt.Errorf("entry %d: %s/%s is pinned twice", i, e.Domain, e.Tool)
		case e.Definition.Hash() != e.Hash:
			return fmt.Errorf("entry %d: %s/%s: its definition does not match its hash", i, e.Domain, e.Tool)
		case e.Pending != nil && e.Pending.Definition.Hash() != e.Pending.Hash:
			return fmt.Errorf("entry %d: %s/%s: its pending definition does not match its hash", i, e.Domain, e.Tool)
		}
		seen[key] = true
	}
	return nil
}
