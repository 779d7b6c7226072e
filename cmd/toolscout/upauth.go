package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	txt "github.com/toolscout/toolscout/internal/text"
	"github.com/toolscout/toolscout/server/gateway"
	"github.com/toolscout/toolscout/server/upauth"
)

// oauthUpstream is a server entry's "auth" of type oauth: a remote
// server toolscout signs in to with `toolscout auth login` (issue 45).
type oauthUpstream struct {
	URL      string   // the server's URL (expanded)
	ClientID string   // "" : dynamic client registration
	Scopes   []string // "" : those the server's metadata names
	// ClientSecretFile holds the secret of ClientID when the client
	// registered for toolscout is confidential ("" : a public client);
	// read at sign-in.
	ClientSecretFile string
	// Identity is the gateway's CallerIdentity ("": toolscout's own
	// sign-in for every call; upidentity.go).
	Identity string
	// TokenEndpoint is where callers' tokens are exchanged (Identity
	// exchange; "": found from the server's metadata).
	TokenEndpoint string
}

var upstreamAuthKeys = append([]string{"type", "client_id", "client_secret_file", "scopes"}, upstreamIdentityKeys...)

// parseUpstreamAuth checks e's "auth" (path is the entry's).
func parseUpstreamAuth(file, path string, e serverEntry, uc gateway.UpstreamConfig) (*oauthUpstream, error) {
	at := path + ".auth"
	if err := checkKeys(file, at, e.Auth, upstreamAuthKeys, true); err != nil {
		return nil, err
	}
	var a struct {
		Type             string   `json:"type"`
		ClientID         string   `json:"client_id"`
		ClientSecretFile string   `json:"client_secret_file"`
		Scopes           []string `json:"scopes"`
	}
	dec := json.NewDecoder(bytes.NewReader(e.Auth))
	if err := dec.Decode(&a); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) && typ.Field != "" {
			return nil, &ConfigError{File: file, Path: at + "." + typ.Field, Reason: fmt.Sprintf("expected %s, found JSON %s", txt.JSONKind(typ.Type), typ.Value)}
		}
		return nil, &ConfigError{File: file, Path: at, Reason: `expected an object: {"type": "oauth", "client_id"?: "...", "scopes"?: [...]}`}
	}
	switch {
	case a.Type != "oauth":
		return nil, &ConfigError{File: file, Path: at + ".type", Reason: fmt.Sprintf("%q: the one type is \"oauth\"", a.Type)}
	case e.URL == "":
		return nil, &ConfigError{File: file, Path: at, Reason: "OAuth signs in to remote servers (url), not to a command"}
	case len(a.ClientID) > 256 || strings.ContainsFunc(a.ClientID, func(r rune) bool { return r < 0x21 || r == 0x7f }):
		return nil, &ConfigError{File: file, Path: at + ".client_id", Reason: "not a client id: at most 256 printable characters, no spaces"}
	case a.ClientSecretFile != "" && a.ClientID == "":
		return nil, &ConfigError{File: file, Path: at + ".client_secret_file", Reason: "a client secret is the secret of a client_id: give the client_id registered for toolscout too"}
	}
	if a.ClientSecretFile != "" && !filepath.IsAbs(a.ClientSecretFile) {
		a.ClientSecretFile = filepath.Join(filepath.Dir(file), a.ClientSecretFile)
	}
	for i, s := range a.Scopes {
		if s == "" || len(s) > 256 || strings.ContainsFunc(s, func(r rune) bool { return r < 0x21 || r == 0x7f || r == '"' || r == '\\' }) {
			return nil, &ConfigError{File: file, Path: fmt.Sprintf("%s.scopes[%d]", at, i), Reason: "not a scope: 1 to 256 printable characters, no spaces, quotes or backslashes"}
		}
	}
	if err := checkOAuthAlone(file, at, e, uc); err != nil {
		return nil, err
	}
	id, err := parseUpstreamIdentity(file, at, e.Auth)
	if err != nil {
		return nil, err
	}
	return &oauthUpstream{URL: uc.URL, ClientID: a.ClientID, Scopes: a.Scopes, ClientSecretFile: a.ClientSecretFile, Identity: id.identity, TokenEndpoint: id.tokenEndpoint}, nil
}

// checkOAuthAlone refuses an OAuth entry that also sends other
// credentials upstream: callers' own, or an Authorization header.
func checkOAuthAlone(file, at string, e serverEntry, uc gateway.UpstreamConfig) error {
	if e.ForwardAuthorization || len(e.CallerHeaderFiles) > 0 {
		return &ConfigError{File: file, Path: at, Reason: "the entry also sends callers' own credentials (forward_authorization, caller_header_files): with OAuth every caller uses toolscout's sign-in; remove one"}
	}
	for k := range uc.Headers {
		if http.CanonicalHeaderKey(k) == "Authorization" {
			return &ConfigError{File: file, Path: at, Reason: "the entry also sends an Authorization header: OAuth sends its own token; remove one"}
		}
	}
	return nil
}

// clientSecret reads o's client secret ("" for a public client) for
// server's sign-in.
func (o oauthUpstream) clientSecret(server string) (string, error) {
	if o.ClientSecretFile == "" {
		return "", nil
	}
	data, err := os.ReadFile(o.ClientSecretFile)
	if err != nil {
		return "", fmt.Errorf("%s's auth.client_secret_file: %w", server, err)
	}
	secret := strings.TrimSpace(string(data))
	if secret == "" {
		return "", fmt.Errorf("%s's auth.client_secret_file %s is empty: put the client secret registered for toolscout in it", server, o.ClientSecretFile)
	}
	return secret, nil
}

// credentials returns the data dir's credentials file.
func (g *globalFlags) credentials() *upauth.Store {
	return upauth.OpenStore(filepath.Join(g.dataDir, upauth.FileName))
}

// attachOAuth gives each upstream behind OAuth its token source, and
// one that exchanges its callers' tokens its client and secret.
func (g *globalFlags) attachOAuth(gc *gatewayConfig) error {
	if len(gc.OAuth) == 0 {
		return nil
	}
	st := g.credentials()
	for i := range gc.Upstreams {
		u := &gc.Upstreams[i]
		if o, ok := gc.OAuth[u.Domain]; ok {
			u.Auth = upauth.NewSource(st, u.Domain, o.URL, nil, g.redactor().Add).WithLog(g.log)
			u.CallerIdentity = o.Identity
			if o.Identity != gateway.IdentityExchange {
				continue
			}
			secret, err := o.clientSecret(u.Domain)
			if err != nil {
				return fmt.Errorf("config: %w", err)
			}
			g.redactor().Add(secret)
			u.Exchange = &gateway.Exchange{ClientID: o.ClientID, ClientSecret: secret, Scopes: o.Scopes, TokenEndpoint: o.TokenEndpoint}
		}
	}
	return nil
}

// signInChecks are doctor's lines for the servers behind OAuth: each
// one's sign-in as auth status says it (never a token).
func (g *globalFlags) signInChecks() []check {
	gc, err := g.gatewayConfig()
	if err != nil || len(gc.OAuth) == 0 {
		return nil // the config's own check says what is wrong
	}
	all, err := g.credentials().All()
	if err != nil {
		return []check{{name: "sign-in", detail: err.Error(), fix: "remove the credentials file and sign in again with toolscout auth login SERVER"}}
	}
	var out []check
	for _, name := range upauthNames(gc) {
		o, e := gc.OAuth[name], all[name]
		c := check{name: "sign-in", detail: statusLine(name, o, e)}
		switch {
		case e == nil || e.AccessToken == "" || e.URL != o.URL:
			c.fix = "toolscout auth login " + name
		case e.Challenge != nil && !e.Challenge.Exhausted():
			c.fix = "toolscout auth login " + name + " (it asks for more scope, or another authorization server)"
		case e.Challenge != nil:
			c.fix = "ask the server's administrator for the scopes, then toolscout auth logout " + name + " and toolscout auth login " + name
		case !e.Expiry.IsZero() && time.Now().After(e.Expiry) && e.RefreshToken == "":
			c.fix = "its token expired and cannot be refreshed: toolscout auth login " + name
		}
		out = append(out, c)
	}
	return out
}
