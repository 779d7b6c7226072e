package callers

import (
	"fmt"
	"path"
	"strings"
)

// A pattern is one entry of a caller's allow or deny list: a domain glob
// ("memory", "git*", "*"), which covers every tool of the domains it
// matches, or a "domain__tool" glob ("filesystem__read_*"), whose part
// before the first "__" matches the domain and the rest the tool's name
// inside it. Globs are path.Match's: * ? [a-z] and \ to escape.
type pattern struct {
	text         string // as written
	domain, tool string // tool "" for a domain glob
}

// parsePattern checks one list entry.
func parsePattern(s string) (pattern, error) {
	if strings.TrimSpace(s) != s || s == "" {
		return pattern{}, fmt.Errorf("%q: an entry is a domain (\"memory\") or a domain__tool glob (\"filesystem__read_*\"), without spaces", s)
	}
	p := pattern{text: s}
	p.domain, p.tool, _ = strings.Cut(s, "__")
	if p.domain == "" {
		return pattern{}, fmt.Errorf("%q: the domain part (before __) is empty: write \"*__%s\" to match the tool in every domain", s, p.tool)
	}
	if strings.Contains(s, "__") && p.tool == "" {
		return pattern{}, fmt.Errorf("%q: the tool part (after __) is empty: write %q for the whole domain", s, p.domain)
	}
	for _, part := range []string{p.domain, p.tool} {
		if _, err := path.Match(part, ""); err != nil {
			return pattern{}, fmt.Errorf("%q: %v (globs are * ? [a-z], \\ escapes)", s, err)
		}
	}
	return p, nil
}

// matchesDomain reports whether p's domain glob matches domain.
func (p pattern) matchesDomain(domain string) bool {
	ok, _ := path.Match(p.domain, domain)
	return ok
}

// matches reports whether p covers the tool named tool in domain.
func (p pattern) matches(domain, tool string) bool {
	if !p.matchesDomain(domain) {
		return false
	}
	if p.tool == "" {
		return true
	}
	ok, _ := path.Match(p.tool, tool)
	return ok
}

// wholeDomain reports whether p covers every tool of the domains it
// matches.
func (p pattern) wholeDomain() bool { return p.tool == "" || p.tool == "*" }

// Policy is what one caller may see: the tools an allow entry covers and
// no deny entry does. The zero Policy sees nothing; a nil *Policy sees
// everything (no callers configured).
type Policy struct {
	allow, deny []pattern
}

// NewPolicy checks allow and deny lists. An empty allow list is an
// error: such a caller would see nothing.
func NewPolicy(allow, deny []string) (*Policy, error) {
	if len(allow) == 0 {
		return nil, &ConfigError{Key: "allow", Reason: `empty: list the domains ("memory") or domain__tool globs ("filesystem__read_*") it may see; "*" for every tool`}
	}
	p := &Policy{}
	for i, s := range allow {
		pt, err := parsePattern(s)
		if err != nil {
			return nil, &ConfigError{Key: fmt.Sprintf("allow[%d]", i), Reason: err.Error()}
		}
		p.allow = append(p.allow, pt)
	}
	for i, s := range deny {
		pt, err := parsePattern(s)
		if err != nil {
			return nil, &ConfigError{Key: fmt.Sprintf("deny[%d]", i), Reason: err.Error()}
		}
		p.deny = append(p.deny, pt)
	}
	return p, nil
}

// Visible reports whether the tool (or prompt, or resource) named name
// of domain may be seen: listed, found, described and run. A nil Policy
// sees everything.
func (p *Policy) Visible(domain, name string) bool {
	if p == nil {
		return true
	}
	allowed := false
	for _, a := range p.allow {
		if a.matches(domain, name) {
			allowed = true
			break
		}
	}
	if !allowed {
		return false
	}
	for _, d := range p.deny {
		if d.matches(domain, name) {
			return false
		}
	}
	return true
}

// VisibleDomain reports whether some tool of domain may be visible: an
// allow entry names the domain and no deny entry takes all of it. It
// decides for a domain whose tools are not known yet (a server still
// connecting, or down); a domain whose tools are known is visible when
// one of them is.
func (p *Policy) VisibleDomain(domain string) bool {
	if p == nil {
		return true
	}
	allowed := false
	for _, a := range p.allow {
		if a.matchesDomain(domain) {
			allowed = true
			break
		}
	}
	if !allowed {
		return false
	}
	for _, d := range p.deny {
		if d.wholeDomain() && d.matchesDomain(domain) {
			return false
		}
	}
	return true
}

// Tool is a tool's domain and name, for Unmatched.
type Tool struct{ Domain, Name string }

// Unmatched returns the entries of the allow and deny lists that match
// none of tools nor any of domains (configured servers whose tools are
// not known): most likely a typo, which doctor and the log warn about.
func (p *Policy) Unmatched(tools []Tool, domains []string) []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, list := range [][]pattern{p.allow, p.deny} {
	entries:
		for _, pt := range list {
			for _, t := range tools {
				if pt.matches(t.Domain, t.Name) {
					continue entries
				}
			}
			for _, d := range domains {
				if pt.matchesDomain(d) {
					continue entries
				}
			}
			out = append(out, pt.text)
		}
	}
	return out
}
