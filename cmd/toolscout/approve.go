package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/pin"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server/gateway"
)

// Pinned tool definitions (index/pin): serve, index, search, tokens and
// doctor with --config pin each upstream tool on first sight and hold a
// changed definition back; approve shows what waits and approves it.

const approveUsage = `approve [flags] [TOOL... | --all]

Approves upstream tools whose definition (name, title, description, input
and output schemas, annotations) changed since it was first seen or last
approved. Until then toolscout serves the approved definition and refuses
to run the tool. Without TOOL, lists the changes waiting, each as a
unified diff from the approved definition to the one listed now; with
TOOL (domain__tool, domain/tool, or a tool name one server has), approves
its change; --all approves every one. Tools first seen after the pins file
was damaged wait the same way, each shown with its whole definition.
Pass the same --config (and --catalog) files and --data-dir as serve: the
pins belong to that set of files. A running serve takes an approval in
within 2 seconds.`

func runApprove(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var g globalFlags
	fs := newFlagSet("approve", approveUsage, stderr)
	g.register(fs, "warn")
	all := fs.Bool("all", false, "approve every change waiting for approval")
	names, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(g.configs) == 0 {
		return usagef("approve works on the upstream servers of a config: pass the --config files (and --catalog files) that serve uses")
	}
	if *all && len(names) > 0 {
		return usagef("give tool names or --all, not both")
	}
	log, err := g.logger(stderr)
	if err != nil {
		return err
	}
	gc, err := g.gatewayConfig()
	if err != nil {
		return err
	}
	domains := make([]string, 0, len(gc.Upstreams))
	for _, u := range gc.Upstreams {
		domains = append(domains, u.Domain)
	}
	// The pins only: a serve running beside keeps its indexes.
	st, err := g.openStore(g.dataDir, store.Options{Set: g.set(), NoIndexes: true, Logger: log})
	if errors.Is(err, index.ErrNoIndex) {
		fmt.Fprintf(stdout, "no upstream tool of these files is pinned yet in %s: serve, index or doctor with the same --config pins each tool when it first sees it\n", g.dataDir)
		return nil
	}
	if err != nil {
		return err
	}
	defer st.Close()
	pins := st.Pins()
	// Each run, listing or approving, is an update: it rebuilds a damaged
	// file (as serve would) and ends a review that is over.
	var (
		book     *pin.Book
		approved []pin.Held
		nameErr  error
		ended    bool
	)
	list := !*all && len(names) == 0
	err = pins.Update(func(b *pin.Book) bool {
		book = b
		if !list {
			approved, nameErr = approveNames(b, names, *all, time.Now())
			if nameErr != nil {
				return false
			}
		}
		ended, _ = b.EndReview(domains)
		return ended || len(approved) > 0
	})
	if err != nil {
		return err
	}
	if nameErr != nil {
		return nameErr
	}
	if list {
		printPending(stdout, book, g.configs)
	} else if len(approved) == 0 {
		fmt.Fprintln(stdout, "no change waits for approval")
	}
	for _, h := range approved {
		what := strings.Join(h.Fields(), ", ") + " changed"
		if h.Unchecked {
			what = "first seen after the pins file was damaged"
		}
		fmt.Fprintf(stdout, "approved %s (%s)\n", index.QualifiedName(h.Domain, h.Tool), what)
	}
	if len(approved) > 0 {
		fmt.Fprintln(stdout, "a running toolscout serve serves and runs them within 2 s; index, search and doctor use them from their next run")
	}
	switch {
	case ended:
		fmt.Fprintln(stdout, "the review after the damaged pins file is over: a tool never seen is pinned on first sight again")
	case book.Review != nil:
		fmt.Fprintln(stdout, reviewNote(book, domains))
	}
	return nil
}

// reviewNote says why b is still under review (pin.Review) and what ends
// it: the servers of domains to list since, the tools held for it to be
// approved, or only the next toolscout approve.
func reviewNote(b *pin.Book, domains []string) string {
	msg := fmt.Sprintf("under review since %s (%s): a tool never seen is held until approved, not pinned on first sight", b.Review.Since.Format(time.RFC3339), b.Review.Cause)
	unchecked := slices.ContainsFunc(b.Pending(), func(h pin.Held) bool { return h.Unchecked })
	switch unlisted := b.Review.Unlisted(domains); {
	case len(unlisted) > 0:
		return msg + fmt.Sprintf("; the review ends once the servers %s have listed their tools since (serve, index or doctor lists them) and every tool so held is approved", strings.Join(unlisted, ", "))
	case unchecked:
		return msg + "; the review ends once every tool so held is approved"
	default:
		return msg + "; the next toolscout approve ends it"
	}
}

// approveNames approves the pending changes of names (all of them with
// all) in b; it approves nothing when a name is not pending.
func approveNames(b *pin.Book, names []string, all bool, now time.Time) ([]pin.Held, error) {
	pending := b.Pending()
	var pick []pin.Held
	if all {
		pick = pending
	}
	for _, name := range names {
		h, err := findPending(b, pending, name)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(pick, func(p pin.Held) bool { return p.Name() == h.Name() }) {
			pick = append(pick, h)
		}
	}
	for _, h := range pick {
		if err := b.Approve(h.Domain, h.Tool, now); err != nil {
			return nil, err
		}
	}
	return pick, nil
}

// findPending finds name (domain__tool, domain/tool or a bare tool name)
// among the pending changes, or says what is pending.
func findPending(b *pin.Book, pending []pin.Held, name string) (pin.Held, error) {
	var hits []pin.Held
	for _, h := range pending {
		if name == index.QualifiedName(h.Domain, h.Tool) || name == h.Name() || name == h.Tool {
			hits = append(hits, h)
		}
	}
	switch {
	case len(hits) == 1:
		return hits[0], nil
	case len(hits) > 1:
		var qn []string
		for _, h := range hits {
			qn = append(qn, index.QualifiedName(h.Domain, h.Tool))
		}
		return pin.Held{}, usagef("%q names a changed tool of several servers: %s; give one", name, strings.Join(qn, ", "))
	}
	for _, e := range b.Tools {
		if name == index.QualifiedName(e.Domain, e.Tool) || name == e.Domain+"/"+e.Tool || name == e.Tool {
			return pin.Held{}, fmt.Errorf("%s: its definition is the approved one (%s, %s): %w", name, e.By, e.Approved.Format(time.DateOnly), pin.ErrNoPending)
		}
	}
	if len(pending) == 0 {
		return pin.Held{}, fmt.Errorf("%s: %w (no tool of that name is pinned)", name, pin.ErrNoPending)
	}
	var qn []string
	for _, h := range pending {
		qn = append(qn, index.QualifiedName(h.Domain, h.Tool))
	}
	msg := fmt.Sprintf("%s: no such tool waits for approval; waiting: %s", name, strings.Join(qn, ", "))
	if s := search.Closest(name, qn, 1); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %q?)", s[0])
	}
	return pin.Held{}, usagef("%s", msg)
}

// printPending lists the changes waiting for approval with their diffs,
// and the tools first seen after the pins file was damaged with their
// definitions.
func printPending(w io.Writer, b *pin.Book, configs []string) {
	var changed, unchecked []pin.Held
	for _, h := range b.Pending() {
		if h.Unchecked {
			unchecked = append(unchecked, h)
		} else {
			changed = append(changed, h)
		}
	}
	if len(changed)+len(unchecked) == 0 {
		fmt.Fprintf(w, "no change waits for approval (%s pinned)\n", plural(b.Len(), "upstream tool"))
		return
	}
	if len(changed) > 0 {
		fmt.Fprintf(w, "%s changed upstream since approved; each is served as approved and not run until approved:\n\n", plural(len(changed), "tool"))
		for _, h := range changed {
			fmt.Fprintf(w, "%s (%s changed; seen %s)\n%s\n\n", index.QualifiedName(h.Domain, h.Tool), strings.Join(h.Fields(), ", "), h.Seen.Format(time.RFC3339), h.Diff())
		}
	}
	if len(unchecked) > 0 {
		fmt.Fprintf(w, "%s first seen after the pins file was damaged, with no approved definition to check against; each is served as listed and not run until approved:\n\n", plural(len(unchecked), "tool"))
		for _, h := range unchecked {
			fmt.Fprintf(w, "%s (seen %s)\n%s\n\n", index.QualifiedName(h.Domain, h.Tool), h.Seen.Format(time.RFC3339), h.Diff())
		}
	}
	cmd := "toolscout approve"
	for _, c := range configs {
		cmd += " --config " + c
	}
	fmt.Fprintf(w, "approve one with `%s TOOL`, or all with `%s --all`\n", cmd, cmd)
}

// pinner returns the gateway's Pinner for st's set: nil with
// toolscout.pin off, and for a read-only store (which serves what its
// build holds).
func (a *app) pinner(st *store.Store) gateway.Pinner {
	if a.gc == nil || a.gc.Pin == "off" || st.ReadOnly() {
		return nil
	}
	return pin.NewGuard(st.Pins())
}

// doctorPins returns the pins of the flags' set for doctor's gateway
// (which pins what it sees first, as serve would), or nil with
// toolscout.pin off or a data dir doctor cannot use (its own check says
// why).
func (g *globalFlags) doctorPins(gc *gatewayConfig) *store.Pins {
	if gc.Pin == "off" {
		return nil
	}
	// The set's folder made as serve makes it; the pins outlive the
	// store, which doctor opens again for its data dir check.
	st, err := g.openStore(g.dataDir, store.Options{Set: g.set(), CheckWritable: true})
	if err != nil {
		return nil
	}
	defer st.Close()
	return st.Pins()
}

// pinChecks are doctor's lines on the pinned definitions: one per change
// waiting for approval, with its diff (a failure: the tool does not
// run), what was healed, or that none waits.
func pinChecks(pins *store.Pins, gc *gatewayConfig, configs []string) []check {
	if pins == nil {
		if gc.Pin == "off" {
			return []check{{name: "pins", detail: "off (toolscout.pin): upstream tools are served as listed, a changed definition at once"}}
		}
		return nil
	}
	var out []check
	for _, h := range pins.Healed() {
		out = append(out, check{name: "pins", detail: h, fix: "review the tools held for it (toolscout approve lists them)", note: true})
	}
	book, err := pins.Read()
	if err != nil {
		return append(out, check{name: "pins", detail: err.Error(), fix: "run toolscout approve (or serve, index) with this --config: it rebuilds the book from pins.bin.prev, or holds every tool for review"})
	}
	pending := book.Pending()
	cmd := "toolscout approve"
	for _, c := range configs {
		cmd += " --config " + c
	}
	if book.Review != nil {
		domains := make([]string, 0, len(gc.Upstreams))
		for _, u := range gc.Upstreams {
			domains = append(domains, u.Domain)
		}
		out = append(out, check{name: "pins", detail: reviewNote(book, domains), fix: fmt.Sprintf("`%s` lists what is held, and ends the review once it is over", cmd), note: true})
	}
	if len(pending) == 0 && book.Review == nil {
		return append(out, check{name: "pins", detail: fmt.Sprintf("%s pinned; no definition changed since approved", plural(book.Len(), "upstream tool"))})
	}
	for _, h := range pending {
		qn := index.QualifiedName(h.Domain, h.Tool)
		diff := "      " + strings.ReplaceAll(h.Diff(), "\n", "\n      ")
		if h.Unchecked {
			out = append(out, check{name: "pins", detail: fmt.Sprintf("%s: first seen after the pins file was damaged, with no approved definition to check it against; served as listed and not run until approved:\n%s", qn, diff),
				fix: fmt.Sprintf("review the definition; if it is the one you trust, `%s %s` (or --all)", cmd, qn)})
			continue
		}
		out = append(out, check{name: "pins", detail: fmt.Sprintf("%s: its definition changed upstream (%s) since it was approved; served as approved and not run until approved:\n%s", qn, strings.Join(h.Fields(), ", "), diff),
			fix: fmt.Sprintf("review the diff; if the change is wanted, `%s %s` (or --all)", cmd, qn)})
	}
	return out
}
