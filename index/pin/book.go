package pin

import (
	"errors"
	"fmt"
	"reflect"
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
// server has listed another since, that one, pending. An entry with no
// approved definition (Hash "", Definition zero: Unchecked) is a tool
// first seen while the book is under Review: its listed definition waits
// for approval like a change.
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

// Unchecked reports whether e has no approved definition: its tool was
// first seen while the book was under Review.
func (e *Entry) Unchecked() bool { return e.Hash == "" }

// Book is the pins of one catalog set's upstream tools. The zero value is
// an empty book. It is not safe for concurrent use: index/store hands it
// out under a lock.
type Book struct {
	Tools []Entry `json:"tools"`
	// Review is set when the book was rebuilt after its file was found
	// damaged (index/store): see Review.
	Review *Review `json:"review,omitempty"`
}

// Review is the state of a book rebuilt after damage, from an older
// copy or from nothing. A tool it does not know may be one the lost
// copy had pinned, with another definition: trusting it on first sight
// would approve whatever the server lists now, so while a review lasts
// Check holds such a tool (an Unchecked entry) instead of pinning it.
// EndReview ends it once every server has listed since and no tool so
// held waits.
type Review struct {
	// Since is when the damage was found; Cause says what was damaged and
	// what the book was rebuilt from.
	Since time.Time `json:"since"`
	Cause string    `json:"cause"`
	// Listed are the domains whose server listed its tools since.
	Listed []string `json:"listed,omitempty"`
}

// StartReview puts b under review (see Review), keeping a review already
// under way.
func (b *Book) StartReview(cause string, now time.Time) {
	if b.Review == nil {
		b.Review = &Review{Since: now.UTC(), Cause: cause}
	}
}

// EndReview ends b's review when every domain of domains (the servers
// of the config) has listed since it started and no Unchecked tool
// waits for approval; it reports whether it did, and else the domains
// not listed yet.
func (b *Book) EndReview(domains []string) (ended bool, unlisted []string) {
	if b.Review == nil {
		return false, nil
	}
	unlisted = b.Review.Unlisted(domains)
	if len(unlisted) > 0 || slices.ContainsFunc(b.Tools, func(e Entry) bool { return e.Unchecked() }) {
		return false, unlisted
	}
	b.Review = nil
	return true, nil
}

// Unlisted returns the domains of domains whose server has not listed
// its tools since the review started.
func (r *Review) Unlisted(domains []string) []string {
	var out []string
	for _, d := range domains {
		if !slices.Contains(r.Listed, d) {
			out = append(out, d)
		}
	}
	return out
}

// Held is a tool whose listed definition is held back: the approved one
// is served in its place.
type Held struct {
	Domain, Tool string
	// Approved is what is served; Listed what the server lists now.
	Approved, Listed Definition
	// Seen is when the listed definition was first seen.
	Seen time.Time
	// Unchecked is set for a tool first seen under Review: Approved is
	// zero, and Listed is served (there is nothing else to serve) but not
	// run.
	Unchecked bool
}

// Diff returns the unified diff from the approved definition to the
// listed one; for an Unchecked tool, the listed definition.
func (h Held) Diff() string {
	if h.Unchecked {
		return h.Listed.Text()
	}
	return Diff(h.Approved, h.Listed)
}

// Fields names what changed ("description", "inputSchema", ...); for an
// Unchecked tool, nothing (there is nothing to compare with).
func (h Held) Fields() []string {
	if h.Unchecked {
		return nil
	}
	return h.Approved.Fields(h.Listed)
}

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
// seen is pinned as listed (under Review, held as Unchecked instead);
// one whose definition hashes as approved is served as listed (a
// pending change it had is dropped: the server went back); any other is
// held, its listed definition recorded as pending. Tools the server no
// longer lists keep their pins: one that comes back changed is held too.
func (b *Book) Check(domain string, listed []index.ToolSpec, now time.Time) Result {
	var res Result
	res.Serve = make([]index.ToolSpec, 0, len(listed))
	if b.Review != nil && !slices.Contains(b.Review.Listed, domain) {
		b.Review.Listed = append(b.Review.Listed, domain)
		slices.Sort(b.Review.Listed)
		res.Changed = true
	}
	for _, ts := range listed {
		def := Of(ts)
		h := def.Hash()
		i := b.find(domain, ts.Name)
		if i < 0 && b.Review != nil {
			b.Tools = append(b.Tools, Entry{Domain: domain, Tool: ts.Name, Pending: &Change{Hash: h, Definition: def, Seen: now.UTC()}})
			i = len(b.Tools) - 1
			res.Changed = true
		}
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
		if e.Unchecked() {
			res.Serve = append(res.Serve, ts)
		} else {
			res.Serve = append(res.Serve, e.Definition.serve(ts))
		}
		res.Held = append(res.Held, Held{Domain: domain, Tool: ts.Name, Approved: e.Definition, Listed: def, Seen: e.Pending.Seen, Unchecked: e.Unchecked()})
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
			out = append(out, Held{Domain: e.Domain, Tool: e.Tool, Approved: e.Definition, Listed: e.Pending.Definition, Seen: e.Pending.Seen, Unchecked: e.Unchecked()})
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
		case e.Unchecked() && (e.Pending == nil || !reflect.DeepEqual(e.Definition, Definition{})):
			return fmt.Errorf("entry %d: %s/%s: no definition approved, and none pending", i, e.Domain, e.Tool)
		case !e.Unchecked() && e.Definition.Hash() != e.Hash:
			return fmt.Errorf("entry %d: %s/%s: its definition does not match its hash", i, e.Domain, e.Tool)
		case e.Pending != nil && e.Pending.Definition.Hash() != e.Pending.Hash:
			return fmt.Errorf("entry %d: %s/%s: its pending definition does not match its hash", i, e.Domain, e.Tool)
		}
		seen[key] = true
	}
	if r := b.Review; r != nil {
		for i, d := range r.Listed {
			if !index.ValidDomainName(d) || i > 0 && r.Listed[i-1] >= d {
				return fmt.Errorf("review: listed domains %q: not valid domains in order, once", r.Listed)
			}
		}
	}
	return nil
}
