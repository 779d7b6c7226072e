package server

import (
	"errors"
	"fmt"
	"strings"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/server/callers"
)

// Mode is an exposure mode: what tools/list shows besides the meta-tools.
// Its strings are those of --expose, toolscout.expose and
// TOOLSCOUT_EXPOSE.
type Mode string

// String returns the mode as --expose names it.
func (m Mode) String() string { return string(m) }

// ErrUnknownMode is wrapped by ParseMode's error for a name that is no
// mode.
var ErrUnknownMode = errors.New("unknown exposure mode")

// ParseMode returns the mode named s, one of ExposeModes.
func ParseMode(s string) (Mode, error) {
	if p := registeredPolicy(Mode(s)); p != nil {
		return p.mode, nil
	}
	names := make([]string, len(ExposeModes))
	for i, m := range ExposeModes {
		names[i] = string(m)
	}
	return "", fmt.Errorf("%w %.100q: use one of %s", ErrUnknownMode, s, strings.Join(names, ", "))
}

// A mode is a policy (modePolicy: what the mode lists, decided by a pure
// function of the catalog, the caller and its enabled domains) over a
// mechanism (exposure and viewTable: the views, kept in step with the
// policy's answer). Each mode's policy is in the mode's own file; adding
// a mode is its file and a line of modePolicies.

// modePolicies registers the modes, in the order ExposeModes lists
// them (toolscout tokens reports them so).
var modePolicies = []*modePolicy{
	&metaPolicy,    // mode_meta.go
	&eagerPolicy,   // mode_eager.go
	&corePolicy,    // mode_core.go
	&dynamicPolicy, // mode_dynamic.go
	&autoPolicy,    // auto.go
	&compactPolicy, // compact.go
	&codePolicy,    // runcode.go
}

// ExposeModes lists the valid modes.
var ExposeModes = func() []Mode {
	out := make([]Mode, len(modePolicies))
	for i, p := range modePolicies {
		out[i] = p.mode
	}
	return out
}()

// modePolicy is what one exposure mode decides.
type modePolicy struct {
	mode Mode
	// lists reports whether the mode lists t directly (besides
	// toolscout's own) to the caller in: a pure function of its
	// arguments, asked only of a tool that is enabled and that the
	// caller may see (listInput.candidate). Mode.lists filters the
	// catalog with it.
	lists func(in listInput, t *index.Tool) bool
	// gated says that the mode lists catalog tools from the start, so
	// that tools/list waits for the start to settle (startup.go).
	gated bool
	// dynamic says that views get enable_domain and disable_domain.
	dynamic bool
	// workflow ends the instructions: how the model gets at the tools.
	workflow string
}

// registeredPolicy returns the policy of m, nil when m is no mode.
func registeredPolicy(m Mode) *modePolicy {
	for _, p := range modePolicies {
		if p.mode == m {
			return p
		}
	}
	return nil
}

// policyOf returns the policy of m: meta's for "" (Exposure's zero
// value) or an unknown mode, which list nothing.
func policyOf(m Mode) *modePolicy {
	if p := registeredPolicy(m); p != nil {
		return p
	}
	return &metaPolicy
}

// listInput is what a mode's list decides from.
type listInput struct {
	// cat is the catalog the caller sees (callerScope.catalogFor).
	cat *index.Catalog
	// who is the caller (nil: no callers configured).
	who *callers.Caller
	// enabled holds dynamic mode's enabled domains and groups
	// ("domain" or "domain/group") of the view or toolset.
	enabled map[string]bool
	// expose is the exposure: its pins (core) and budget (auto).
	expose Exposure
	// fits reports whether a catalog's listing costs fewer tokens than
	// auto mode's budget; nil counts them (Exposure.fits). The mechanism
	// passes one that decides once per catalog (autoMode).
	fits func(cat *index.Catalog) bool
}

// candidate reports whether a list may show t at all: t is enabled and
// the caller may see it.
func (in listInput) candidate(t *index.Tool) bool {
	return !t.Disabled && in.who.Visible(t.Domain, t.Name)
}

// lists returns the tools mode m lists directly to in, in catalog order.
func (m Mode) lists(in listInput) []*index.Tool {
	p := policyOf(m)
	if in.fits == nil {
		in.fits = in.expose.fits
	}
	in.fits = once(in.fits) // auto mode asks of each tool: counted once
	var out []*index.Tool
	for _, t := range in.cat.Tools() {
		if in.candidate(t) && p.lists(in, t) {
			out = append(out, t)
		}
	}
	return out
}

// listsTool reports whether mode m lists t directly to in: one tool of
// lists' answer, decided without the others.
func (m Mode) listsTool(in listInput, t *index.Tool) bool {
	return in.candidate(t) && policyOf(m).lists(in, t)
}

// once returns fits answering the catalog last asked about once.
func once(fits func(*index.Catalog) bool) func(*index.Catalog) bool {
	var (
		asked *index.Catalog
		ans   bool
	)
	return func(cat *index.Catalog) bool {
		if asked != cat {
			asked, ans = cat, fits(cat)
		}
		return ans
	}
}
