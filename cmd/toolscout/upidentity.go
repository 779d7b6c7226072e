package main

import (
	"encoding/json"
	"fmt"

	"github.com/toolscout/toolscout/server/gateway"
)

// The identity an OAuth upstream's tool calls are made with (issue 45,
// item 1): toolscout's own sign-in (the default), or each caller's
// ("identity": "caller"), its bearer token forwarded as it came
// ("mode": "forward").

// upstreamIdentityKeys are the keys of an upstream's "auth" that say
// whose identity its tool calls carry.
var upstreamIdentityKeys = []string{"identity", "mode"}

// parseUpstreamIdentity reads the identity keys of raw, the "auth" at
// path at of file: "" for toolscout's own identity, else the gateway's
// CallerIdentity.
func parseUpstreamIdentity(file, at string, raw json.RawMessage) (string, error) {
	var a struct {
		Identity *string `json:"identity"`
		Mode     *string `json:"mode"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return "", &ConfigError{File: file, Path: at, Reason: `"identity" and "mode" are strings: {"identity": "caller", "mode": "forward"}`}
	}
	identity, mode := "toolscout", ""
	if a.Identity != nil {
		identity = *a.Identity
	}
	if a.Mode != nil {
		mode = *a.Mode
	}
	switch identity {
	case "toolscout":
		if a.Mode != nil {
			return "", &ConfigError{File: file, Path: at + ".mode", Reason: `a mode says how a caller's identity reaches the server: it goes with "identity": "caller"`}
		}
		return "", nil
	case "caller":
	default:
		return "", &ConfigError{File: file, Path: at + ".identity", Reason: fmt.Sprintf(`%q: "toolscout" (the default: every call uses toolscout's sign-in) or "caller" (each caller's own token)`, identity)}
	}
	switch mode {
	case "forward":
		return gateway.IdentityForward, nil
	case "exchange":
		return "", &ConfigError{File: file, Path: at + ".mode", Reason: `"exchange" (RFC 8693 token exchange) is not built yet: use "forward", where the server accepts the tokens of toolscout's callers`}
	case "":
		return "", &ConfigError{File: file, Path: at, Reason: `"identity": "caller" needs a "mode": "forward" (the caller's own token sent as it came)`}
	default:
		return "", &ConfigError{File: file, Path: at + ".mode", Reason: fmt.Sprintf(`%q: the one mode is "forward" (the caller's own token sent as it came)`, mode)}
	}
}

// checkCallerIdentity refuses a server acting with its callers' identity
// when toolscout's own callers do not sign in with tokens of an identity
// provider (toolscout.jwt or toolscout.oauth): their tokens are what is
// forwarded, and toolscout's static caller tokens are no server's.
func checkCallerIdentity(gc *gatewayConfig) error {
	if gc == nil {
		return nil
	}
	for _, u := range gc.Upstreams {
		if u.CallerIdentity == "" {
			continue
		}
		if gc.Callers == nil || (gc.Callers.JWT == nil && gc.Callers.OAuth == nil) {
			return fmt.Errorf(`config: mcpServers.%s.auth.identity: "caller" sends each caller's own token to the server, and toolscout's callers have none it could accept: configure toolscout.oauth or toolscout.jwt (callers signing in with an identity provider's tokens), or remove "identity"`, u.Domain)
		}
	}
	return nil
}

// checkCallerIdentityStdio refuses a server acting with its callers'
// identity when serve has no callers' tokens to act with: over stdio
// no request carries one, so every call to it would be refused.
func checkCallerIdentityStdio(gc *gatewayConfig, httpAddr string) error {
	if gc == nil || httpAddr != "" {
		return nil
	}
	for _, u := range gc.Upstreams {
		if u.CallerIdentity != "" {
			return fmt.Errorf(`config: mcpServers.%s.auth.identity: "caller" makes each call with its caller's own token, and toolscout serve over stdio has none (only an HTTP request carries a caller's token): serve over HTTP (toolscout serve --http ADDR, clients connecting with their identity provider's tokens), or remove "identity" (the server then sees toolscout's own sign-in)`, u.Domain)
		}
	}
	return nil
}
