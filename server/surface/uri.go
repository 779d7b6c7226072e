package surface

import (
	"strings"
)

// URIScheme is the scheme of the URIs toolscout gives upstream resources
// and resource templates: an upstream's URI U of domain D is listed as
// "toolscout://D/" + U.
//
// Why a prefix, and this one (the MCP specification, 2025-11-25 and the
// 2026-07-28 draft: a resource is "uniquely identified by a URI", custom
// schemes "MUST be in accordance with RFC 3986"):
//
//   - unique: two upstreams may both list file:///README.md, or
//     templates that match the same URIs; under a prefix each is its
//     own, and a URI stays the same whichever other servers come and go
//     (keeping a URI as it is while it is unique would change it the day
//     another server lists the same one);
//   - reversible without state: the domain and the upstream's URI are
//     the text either side of the first "/" after "toolscout://", so a
//     read reaches the right upstream with its own URI on any replica,
//     and a template the client expands (toolscout://D/demo://x/{id})
//     needs no lookup;
//   - a valid absolute URI for any upstream URI: RFC 3986's path allows
//     ":" and empty segments, so "toolscout://everything/demo://a/b" is
//     a URI with host "everything" and path "/demo://a/b", and a
//     template stays an RFC 6570 template (the prefix has no braces);
//     a scheme such as "everything+demo:" would not be, for a domain
//     with "_" or an upstream URI without a scheme.
//
// An upstream's own URI still reads when exactly one upstream lists it
// (or has a template that matches it): tool results and prompts carry
// upstream URIs unchanged (a resource_link), and a client reads what
// they name.
const URIScheme = "toolscout"

const uriPrefix = URIScheme + "://"

// WrapURI returns the URI toolscout lists for the upstream URI uri of
// domain.
func WrapURI(domain, uri string) string { return uriPrefix + domain + "/" + uri }

// UnwrapURI returns the domain and upstream URI of a URI WrapURI made;
// ok is false for any other URI.
func UnwrapURI(uri string) (domain, upstream string, ok bool) {
	rest, ok := strings.CutPrefix(uri, uriPrefix)
	if !ok {
		return "", "", false
	}
	domain, upstream, ok = strings.Cut(rest, "/")
	if !ok || domain == "" || upstream == "" {
		return "", "", false
	}
	return domain, upstream, true
}

// Separator joins a domain and an upstream prompt's (or resource's)
// name, as it joins a tool's.
const Separator = "__"

// qualify returns the name listed for an upstream's name of domain.
func qualify(domain, name string) string { return domain + Separator + name }
