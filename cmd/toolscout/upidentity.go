package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"

	"github.com/toolscout/toolscout/server/gateway"
)

// The identity an OAuth upstream's tool calls are made with (issue 45,
// item 1): toolscout's own sign-in (the default), or each caller's
// ("identity": "caller"), its bearer token forwarded as it came
// ("mode": "forward") or exchanged at the server's authorization server
// for one issued to the server ("mode": "exchange", RFC 8693; the
// entry's client_id and client_secret_file are toolscout's client
// there, token_endpoint where to exchange when the server's metadata
// does not say).

// upstreamIdentityKeys are the keys of an upstream's "auth" that say
// whose identity its tool calls carry.
var upstreamIdentityKeys = []string{"identity", "mode", "token_endpoint"}

// upstreamIdentity is what the identity keys of an "auth" say.
type upstreamIdentity struct {
	// identity is the gateway's CallerIdentity ("": toolscout's own).
	identity string
	// tokenEndpoint is where callers' tokens are exchanged ("": found
	// from the server's metadata).
	tokenEndpoint string
}

// parseUpstreamIdentity reads the identity keys of raw, the "auth" at
// path at of file.
func parseUpstreamIdentity(file, at string, raw json.RawMessage) (upstreamIdentity, error) {
	var a struct {
		Identity         *string `json:"identity"`
		Mode             *string `json:"mode"`
		TokenEndpoint    *string `json:"token_endpoint"`
		ClientID         string  `json:"client_id"`
		ClientSecretFile string  `json:"client_secret_file"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return upstreamIdentity{}, &ConfigError{File: file, Path: at, Reason: `"identity", "mode" and "token_endpoint" are strings: {"identity": "caller", "mode": "forward"}`}
	}
	identity, mode := "toolscout", ""
	if a.Identity != nil {
		identity = *a.Identity
	}
	if a.Mode != nil {
		mode = *a.Mode
	}
	if a.TokenEndpoint != nil && mode != "exchange" {
		return upstreamIdentity{}, &ConfigError{File: file, Path: at + ".token_endpoint", Reason: `the token endpoint is where callers' tokens are exchanged: it goes with "identity": "caller", "mode": "exchange"`}
	}
	switch identity {
	case "toolscout":
		if a.Mode != nil {
			return upstreamIdentity{}, &ConfigError{File: file, Path: at + ".mode", Reason: `a mode says how a caller's identity reaches the server: it goes with "identity": "caller"`}
		}
		return upstreamIdentity{}, nil
	case "caller":
	default:
		return upstreamIdentity{}, &ConfigError{File: file, Path: at + ".identity", Reason: fmt.Sprintf(`%q: "toolscout" (the default: every call uses toolscout's sign-in) or "caller" (each caller's own token)`, identity)}
	}
	switch mode {
	case "forward":
		return upstreamIdentity{identity: gateway.IdentityForward}, nil
	case "exchange":
		return parseExchange(file, at, a.ClientID, a.ClientSecretFile, a.TokenEndpoint)
	case "":
		return upstreamIdentity{}, &ConfigError{File: file, Path: at, Reason: `"identity": "caller" needs a "mode": "forward" (the caller's own token sent as it came) or "exchange" (exchanged for one of the server's, RFC 8693)`}
	default:
		return upstreamIdentity{}, &ConfigError{File: file, Path: at + ".mode", Reason: fmt.Sprintf(`%q: "forward" (the caller's own token sent as it came) or "exchange" (exchanged for one of the server's, RFC 8693)`, mode)}
	}
}

// parseExchange checks the keys of "mode": "exchange": toolscout
// authenticates at the authorization server as a registered
// confidential client, and the token endpoint, when given, is one a
// token may be sent to.
func parseExchange(file, at, clientID, secretFile string, endpoint *string) (upstreamIdentity, error) {
	if clientID == "" || secretFile == "" {
		return upstreamIdentity{}, &ConfigError{File: file, Path: at, Reason: `"mode": "exchange" exchanges callers' tokens as toolscout's client at the server's authorization server: give the client registered there for toolscout, "client_id" and "client_secret_file" (a file holding its secret)`}
	}
	out := upstreamIdentity{identity: gateway.IdentityExchange}
	if endpoint == nil {
		return out, nil
	}
	u, err := url.Parse(*endpoint)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" || !(u.Scheme == "https" || u.Scheme == "http" && loopbackHost(u.Hostname())) {
		return upstreamIdentity{}, &ConfigError{File: file, Path: at + ".token_endpoint", Reason: fmt.Sprintf("%.200q: the authorization server's token endpoint, an https URL (http only on a loopback address), e.g. https://id.example/oauth2/token", *endpoint)}
	}
	out.tokenEndpoint = *endpoint
	return out, nil
}

// loopbackHost reports whether host names this machine.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkCallerIdentity refuses a server acting with its callers' identity
// when toolscout's own callers do not sign in with tokens of an identity
// provider (toolscout.jwt or toolscout.oauth): their tokens are what is
// forwarded or exchanged, and toolscout's static caller tokens are no
// server's nor an authorization server's.
func checkCallerIdentity(gc *gatewayConfig) error {
	if gc == nil {
		return nil
	}
	for _, u := range gc.Upstreams {
		if u.CallerIdentity == "" {
			continue
		}
		if gc.Callers == nil || (gc.Callers.JWT == nil && gc.Callers.OAuth == nil) {
			return fmt.Errorf(`config: mcpServers.%s.auth.identity: "caller" acts with each caller's own token (sent to the server, or exchanged for one of its own), and toolscout's callers have none an identity provider issued: configure toolscout.oauth or toolscout.jwt (callers signing in with an identity provider's tokens), or remove "identity"`, u.Domain)
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
