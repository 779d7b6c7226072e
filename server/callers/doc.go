// Package callers says who sends a request to toolscout and what that
// caller may see. A gateway in front of a team's MCP servers serves many
// agents; each is a caller of the config's toolscout.callers, named by a
// bearer token (one of its token files: several while one is rotated) or
// by the claims of a JWT that a configured issuer signed (toolscout.jwt:
// a JWKS file or a PEM key, the issuer and the audience). Each caller has
// allow and deny lists of domains and domain__tool globs (Policy).
//
// The one question the rest of toolscout asks is [Caller.Visible]: may
// this caller see this tool (or prompt, or resource) of this domain? The
// server answers every surface from it alike (tools/list in every
// exposure mode, discover_tools, get_tool_schema, execute_tool, direct
// calls, suggestions, related tools, /metrics), so that a hidden tool is
// answered exactly as one that does not exist. A nil *Caller sees
// everything: that is a server without callers configured.
//
//	set, err := callers.New(callers.Options{Callers: []callers.Config{
//		{Name: "ops", Tokens: []string{tok}, Allow: []string{"memory", "filesystem__read_*"}},
//	}})
//	h = set.Require(h, log) // 401 without a caller's credential
//	...
//	c := callers.FromContext(r.Context())
//	if c.Visible("memory", "read_graph") { ... }
//
// Its place: below server (which picks a view per caller) and cmd (which
// reads the config, the token files and the key file, and passes their
// contents here); it knows nothing of the catalog or the index. JWTs are
// checked with go-jose (signature against the JWKS by "kid", issuer,
// audience, expiry required, public-key algorithms only). Require also
// hands the go-sdk the caller as the token's user, so that an MCP session
// answers only the caller that opened it.
package callers
