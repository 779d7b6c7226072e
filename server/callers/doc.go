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
// With OAuthOptions, toolscout is an OAuth 2.1 protected resource, as
// the MCP authorization specification asks of an HTTP server: Require
// answers 401 with a challenge naming the protected resource metadata
// (RFC 9728; MetadataHandler serves it at MetadataPaths) and the scopes,
// and access tokens are checked as JWTs against the issuer's keys
// (RemoteKeys: found through its RFC 8414 or OpenID Connect metadata,
// cached, fetched again for an unknown kid at most every MinRefresh) or,
// opaque, by introspection (Introspector, RFC 7662); their audience must
// be the resource. Their claims name callers as a JWT's do; a token with
// only read scopes is marked read-only (ReadOnly), and the server runs
// only tools that say readOnlyHint for it.
//
//	set, err := callers.New(callers.Options{
//		OAuth: &callers.OAuthOptions{Issuer: iss, Resource: "https://toolscout.example/mcp",
//			Scopes: []string{"tools.read", "tools.run"}, ReadScopes: []string{"tools.read"},
//			Keys: callers.NewRemoteKeys(callers.RemoteKeysOptions{Issuer: iss})},
//		Callers: []callers.Config{{Name: "alice", Claims: map[string]string{"sub": "alice"}, Allow: []string{"*"}}},
//	})
//
// A Set's definitions change at run time with Replace (cmd re-reads the
// token and key files when they change): each request sees the old or
// the new ones whole, and a caller whose lists did not change stays the
// same *Caller.
//
// Its place: below server (which picks a view per caller) and cmd (which
// reads the config, the token files and the key file, and passes their
// contents here); it knows nothing of the catalog or the index. JWTs are
// checked with go-jose (signature against the JWKS by "kid", issuer,
// audience, expiry required, public-key algorithms only). Require also
// hands the go-sdk the caller as the token's user, so that an MCP session
// answers only the caller that opened it.
package callers
