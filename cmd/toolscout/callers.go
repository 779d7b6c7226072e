package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/redact"
	txt "github.com/toolscout/toolscout/internal/text"
	"github.com/toolscout/toolscout/server/callers"
)

// callersSpec is a config file's toolscout.callers and toolscout.jwt,
// checked for shape; build reads the token and key files they name.
type callersSpec struct {
	File    string
	Callers map[string]callerEntry
	JWT     *jwtEntry
	OAuth   *oauthEntry

	// keys is the issuer's key set of OAuth, made by the first build and
	// kept by later ones (its cache with it); log is where it says what
	// it fetched.
	keys *callers.RemoteKeys
	log  *slog.Logger
}

// idpClient is the client toolscout asks the identity provider with:
// bounded in time. Its transport is a plain one: the issuer is the
// operator's, so an identity provider on a private address is allowed
// (the go-sdk refuses those for servers a client is sent to).
func idpClient() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: http.DefaultTransport.(*http.Transport).Clone()}
}

// callerEntry is one caller of toolscout.callers.
type callerEntry struct {
	TokenFiles []string          `json:"token_files"`
	JWTClaims  map[string]string `json:"jwt_claims"`
	Allow      []string          `json:"allow"`
	Deny       []string          `json:"deny"`
}

// jwtEntry is toolscout.jwt: whose JWTs name callers.
type jwtEntry struct {
	JWKSFile string  `json:"jwks_file"`
	KeyFile  string  `json:"key_file"`
	Issuer   string  `json:"issuer"`
	Audience string  `json:"audience"`
	Leeway   float64 `json:"leeway"` // seconds
}

// oauthEntry is toolscout.oauth: toolscout as an OAuth protected
// resource of an identity provider.
type oauthEntry struct {
	Issuer        string              `json:"issuer"`
	Resource      string              `json:"resource"`
	Scopes        []string            `json:"scopes"`
	ReadScopes    *[]string           `json:"read_scopes"`
	JWKSURL       string              `json:"jwks_url"`
	Leeway        float64             `json:"leeway"` // seconds
	Introspection *introspectionEntry `json:"introspection"`
}

// introspectionEntry is toolscout.oauth.introspection: how opaque
// tokens are checked (RFC 7662).
type introspectionEntry struct {
	Endpoint         string `json:"endpoint"`
	ClientID         string `json:"client_id"`
	ClientSecretFile string `json:"client_secret_file"`
}

var (
	callerKeys        = []string{"token_files", "jwt_claims", "allow", "deny"}
	jwtKeys           = []string{"jwks_file", "key_file", "issuer", "audience", "leeway"}
	oauthKeys         = []string{"issuer", "resource", "scopes", "read_scopes", "jwks_url", "leeway", "introspection"}
	introspectionKeys = []string{"endpoint", "client_id", "client_secret_file"}
)

// parseCallers checks the shape of toolscout.callers and toolscout.jwt
// (raw, nil when absent) of file. Relative file names are the config
// file's neighbours.
func parseCallers(file string, rawCallers, rawJWT, rawOAuth json.RawMessage) (*callersSpec, error) {
	if rawCallers == nil && rawJWT == nil && rawOAuth == nil {
		return nil, nil
	}
	if rawCallers == nil {
		key := "toolscout.jwt"
		if rawJWT == nil {
			key = "toolscout.oauth"
		}
		return nil, &ConfigError{File: file, Path: key, Reason: `no callers to name: add "callers": {"NAME": {"jwt_claims": {"sub": "..."}, "allow": [...]}} beside it`}
	}
	sp := &callersSpec{File: file, Callers: map[string]callerEntry{}}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(rawCallers, &entries); err != nil || entries == nil {
		return nil, &ConfigError{File: file, Path: "toolscout.callers", Reason: `expected an object of callers: {"NAME": {"token_files": [...], "allow": [...]}}`}
	}
	if len(entries) == 0 {
		return nil, &ConfigError{File: file, Path: "toolscout.callers", Reason: "empty: define a caller, or remove the key (every caller sees everything without it)"}
	}
	dir := filepath.Dir(file)
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	for name, raw := range entries {
		path := "toolscout.callers." + name
		if err := checkKeys(file, path, raw, callerKeys, true); err != nil {
			return nil, err
		}
		var e callerEntry
		if err := decodeStrict(raw, &e); err != nil {
			return nil, configTypeError(file, path, err)
		}
		for i := range e.TokenFiles {
			e.TokenFiles[i] = rel(e.TokenFiles[i])
		}
		sp.Callers[name] = e
	}
	if rawJWT != nil {
		j, err := parseJWT(file, rawJWT)
		if err != nil {
			return nil, err
		}
		j.JWKSFile, j.KeyFile = rel(j.JWKSFile), rel(j.KeyFile)
		sp.JWT = j
	}
	if rawOAuth != nil {
		o, err := parseOAuth(file, rawOAuth)
		if err != nil {
			return nil, err
		}
		if o.Introspection != nil {
			o.Introspection.ClientSecretFile = rel(o.Introspection.ClientSecretFile)
		}
		sp.OAuth = o
	}
	return sp, nil
}

// parseJWT checks toolscout.jwt: one key source, a leeway in range.
func parseJWT(file string, raw json.RawMessage) (*jwtEntry, error) {
	const path = "toolscout.jwt"
	if err := checkKeys(file, path, raw, jwtKeys, true); err != nil {
		return nil, err
	}
	var j jwtEntry
	if err := decodeStrict(raw, &j); err != nil {
		return nil, configTypeError(file, path, err)
	}
	switch {
	case j.JWKSFile == "" && j.KeyFile == "":
		return nil, &ConfigError{File: file, Path: path, Reason: "give jwks_file (the issuer's JWKS, saved to a file) or key_file (its PEM public key)"}
	case j.JWKSFile != "" && j.KeyFile != "":
		return nil, &ConfigError{File: file, Path: path, Reason: "give jwks_file or key_file, not both"}
	case j.Leeway < 0 || j.Leeway > 600:
		return nil, &ConfigError{File: file, Path: path + ".leeway", Reason: fmt.Sprintf("%g seconds: want 0 (the default, %s) to 600", j.Leeway, callers.DefaultLeeway)}
	}
	return &j, nil
}

// parseOAuth checks the shape of toolscout.oauth; the URLs and scopes
// are checked by callers.New.
func parseOAuth(file string, raw json.RawMessage) (*oauthEntry, error) {
	const path = "toolscout.oauth"
	if err := checkKeys(file, path, raw, oauthKeys, true); err != nil {
		return nil, err
	}
	var o oauthEntry
	if err := decodeStrict(raw, &o); err != nil {
		return nil, configTypeError(file, path, err)
	}
	switch {
	case o.Issuer == "":
		return nil, &ConfigError{File: file, Path: path + ".issuer", Reason: `missing: the identity provider's issuer ("https://id.example/realms/acme"), as its metadata names it`}
	case o.Resource == "":
		return nil, &ConfigError{File: file, Path: path + ".resource", Reason: `missing: toolscout's URL as clients reach it ("https://toolscout.example/mcp"); tokens must be granted for it`}
	case o.Leeway < 0 || o.Leeway > 600:
		return nil, &ConfigError{File: file, Path: path + ".leeway", Reason: fmt.Sprintf("%g seconds: want 0 (the default, %s) to 600", o.Leeway, callers.DefaultLeeway)}
	}
	if o.JWKSURL != "" {
		if u, err := url.Parse(o.JWKSURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, &ConfigError{File: file, Path: path + ".jwks_url", Reason: fmt.Sprintf("%q: want the https URL the issuer publishes its keys at (its metadata's jwks_uri)", o.JWKSURL)}
		}
	}
	if o.Introspection != nil {
		ipath := path + ".introspection"
		var rawIn struct {
			Introspection json.RawMessage `json:"introspection"`
		}
		json.Unmarshal(raw, &rawIn)
		if err := checkKeys(file, ipath, rawIn.Introspection, introspectionKeys, true); err != nil {
			return nil, err
		}
		if o.Introspection.ClientID == "" || o.Introspection.ClientSecretFile == "" {
			return nil, &ConfigError{File: file, Path: ipath, Reason: "give client_id and client_secret_file: the credentials toolscout introspects tokens with, registered at the identity provider"}
		}
	}
	return &o, nil
}

// readScopes are the scopes of o that allow only read-only tools: those
// read_scopes names, or else those of scopes whose last word (after '.',
// ':' or '/') is "read" ("tools.read").
func (o *oauthEntry) readScopes() []string {
	if o.ReadScopes != nil {
		return *o.ReadScopes
	}
	var out []string
	for _, s := range o.Scopes {
		if i := strings.LastIndexAny(s, ".:/"); s == "read" || i >= 0 && s[i+1:] == "read" {
			out = append(out, s)
		}
	}
	return out
}

// decodeStrict decodes raw into v.
func decodeStrict(raw json.RawMessage, v any) error {
	return json.NewDecoder(bytes.NewReader(raw)).Decode(v)
}

// configTypeError says where a typed decoding failed.
func configTypeError(file, path string, err error) error {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return &ConfigError{File: file, Path: path + "." + typ.Field, Reason: fmt.Sprintf("expected %s, found JSON %s", txt.JSONKind(typ.Type), typ.Value)}
	}
	return &ConfigError{File: file, Path: path, Reason: err.Error()}
}

// build reads the token files and the key file and checks the callers:
// every error names the file, the caller and the key. secrets learns the
// tokens.
func (sp *callersSpec) build(secrets *redact.Redactor) (*callers.Set, error) {
	o := callers.Options{}
	for _, name := range sortedKeys(sp.Callers) {
		e := sp.Callers[name]
		c := callers.Config{Name: name, Claims: e.JWTClaims, Allow: e.Allow, Deny: e.Deny}
		for i, f := range e.TokenFiles {
			path := fmt.Sprintf("toolscout.callers.%s.token_files[%d]", name, i)
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, &ConfigError{File: sp.File, Path: path, Reason: fmt.Sprintf("%v: the file holds the caller's bearer token (openssl rand -hex 32 > %s)", err, filepath.Base(f))}
			}
			tok := strings.TrimSpace(string(data))
			if tok == "" {
				return nil, &ConfigError{File: sp.File, Path: path, Reason: fmt.Sprintf("%s is empty: put the caller's token in it", f)}
			}
			c.Tokens = append(c.Tokens, tok)
			secrets.Add(tok)
		}
		o.Callers = append(o.Callers, c)
	}
	if j := sp.JWT; j != nil {
		f, key := j.JWKSFile, "toolscout.jwt.jwks_file"
		if f == "" {
			f, key = j.KeyFile, "toolscout.jwt.key_file"
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, &ConfigError{File: sp.File, Path: key, Reason: err.Error()}
		}
		keys, err := callers.ParseKeys(data)
		if err != nil {
			return nil, &ConfigError{File: sp.File, Path: key, Reason: fmt.Sprintf("%s: %v", f, err)}
		}
		o.JWT = &callers.JWTOptions{Keys: keys, Issuer: j.Issuer, Audience: j.Audience, Leeway: time.Duration(j.Leeway * float64(time.Second))}
	}
	if oa := sp.OAuth; oa != nil {
		if sp.keys == nil {
			sp.keys = callers.NewRemoteKeys(callers.RemoteKeysOptions{URL: oa.JWKSURL, Issuer: oa.Issuer, Client: idpClient(), Log: sp.log})
		}
		o.OAuth = &callers.OAuthOptions{Issuer: oa.Issuer, Resource: oa.Resource, Scopes: oa.Scopes, ReadScopes: oa.readScopes(),
			Keys: sp.keys, Leeway: time.Duration(oa.Leeway * float64(time.Second))}
		if in := oa.Introspection; in != nil {
			data, err := os.ReadFile(in.ClientSecretFile)
			if err != nil {
				return nil, &ConfigError{File: sp.File, Path: "toolscout.oauth.introspection.client_secret_file", Reason: err.Error()}
			}
			secret := strings.TrimSpace(string(data))
			if secret == "" {
				return nil, &ConfigError{File: sp.File, Path: "toolscout.oauth.introspection.client_secret_file", Reason: fmt.Sprintf("%s is empty: put the client secret in it", in.ClientSecretFile)}
			}
			secrets.Add(secret)
			o.OAuth.Introspect = callers.NewIntrospector(callers.IntrospectorOptions{Endpoint: in.Endpoint, Issuer: oa.Issuer,
				ClientID: in.ClientID, ClientSecret: secret, Client: idpClient()})
		}
	}
	set, err := callers.New(o)
	var ce *callers.ConfigError
	if errors.As(err, &ce) {
		return nil, &ConfigError{File: sp.File, Path: "toolscout." + ce.Path(), Reason: ce.Reason}
	}
	return set, err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// loadCallersFile reads a file whose toolscout section holds callers and
// jwt (a --config file, or one made for --callers: {"toolscout":
// {"callers": ..., "jwt": ...}}), and returns their spec (nil when it
// defines none).
func loadCallersFile(file string) (*callersSpec, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--callers: %w", err)
	}
	var top struct {
		Toolscout *struct {
			Callers json.RawMessage `json:"callers"`
			JWT     json.RawMessage `json:"jwt"`
			OAuth   json.RawMessage `json:"oauth"`
		} `json:"toolscout"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, &ConfigError{File: file, Reason: fmt.Sprintf("invalid JSON: %v", err)}
	}
	if top.Toolscout == nil || top.Toolscout.Callers == nil {
		return nil, &ConfigError{File: file, Path: "toolscout.callers", Reason: `missing: the file is {"toolscout": {"callers": {...}, "jwt": {...}}}`}
	}
	return parseCallers(file, top.Toolscout.Callers, top.Toolscout.JWT, top.Toolscout.OAuth)
}

// stdioCaller returns the caller a stdio client is, from
// TOOLSCOUT_CALLER: with callers configured, stdio serves one caller,
// named by the environment that the client starting toolscout sets.
func stdioCaller(set *callers.Set, getenv func(string) string) (*callers.Caller, error) {
	name := strings.TrimSpace(getenv("TOOLSCOUT_CALLER"))
	if name == "" {
		return nil, usagef("toolscout.callers is configured, so a stdio client sees what its caller may see: set TOOLSCOUT_CALLER to one of %s in the client's env for toolscout", strings.Join(set.Names(), ", "))
	}
	c := set.Caller(name)
	if c == nil {
		return nil, usagef("TOOLSCOUT_CALLER=%q is not a caller of toolscout.callers: use one of %s", name, strings.Join(set.Names(), ", "))
	}
	return c, nil
}

// callersSpec returns the configured callers' spec: from file
// (--callers), or from the --config files; nil when none defines them.
func (g *globalFlags) callersSpec(file string) (*callersSpec, error) {
	var sp *callersSpec
	if file != "" {
		var err error
		if sp, err = loadCallersFile(file); err != nil {
			return nil, err
		}
	}
	if len(g.configs) > 0 {
		gc, err := loadConfigs(g.configs)
		if err != nil {
			return nil, err
		}
		if gc.Callers != nil {
			if sp != nil {
				return nil, usagef("callers are defined in --callers %s and in --config %s: define them in one file", file, gc.Callers.File)
			}
			sp = gc.Callers
		}
	}
	return sp, nil
}

// callers returns the configured callers: from file (--callers), or
// from the --config files; nil when none defines them. log is where
// the issuer's key set says what it fetched (toolscout.oauth).
func (g *globalFlags) callers(file string, log *slog.Logger) (*callersSpec, *callers.Set, error) {
	sp, err := g.callersSpec(file)
	if err != nil || sp == nil {
		return nil, nil, err
	}
	sp.log = log
	set, err := sp.build(g.redactor())
	if err != nil {
		return nil, nil, err
	}
	return sp, set, nil
}

// visibleCounts says what c sees of cat: "9 tools in 1 domain".
func visibleCounts(c *callers.Caller, cat *index.Catalog) (tools, domains int) {
	seen := map[string]bool{}
	for _, t := range cat.Tools() {
		if c.Visible(t.Domain, t.Name) {
			tools++
			seen[t.Domain] = true
		}
	}
	return tools, len(seen)
}

// unmatchedEntries returns, per caller, the allow and deny entries that
// match no tool of cat nor any of the configured domains.
func unmatchedEntries(set *callers.Set, cat *index.Catalog, domains []string) map[string][]string {
	tools := make([]callers.Tool, 0, cat.Len())
	for _, t := range cat.Tools() {
		tools = append(tools, callers.Tool{Domain: t.Domain, Name: t.Name})
	}
	out := map[string][]string{}
	for _, name := range set.Names() {
		if u := set.Caller(name).Unmatched(tools, domains); len(u) > 0 {
			out[name] = u
		}
	}
	return out
}

// warnCallers logs, once the upstream servers have listed their tools,
// what each caller sees (counts only) and the entries that match
// nothing: most likely typos.
func warnCallers(ctx context.Context, log *slog.Logger, set *callers.Set, a *app) {
	select {
	case <-a.live.Ready():
	case <-ctx.Done():
		return
	}
	cat := a.eng.Catalog()
	unmatched := unmatchedEntries(set, cat, a.domain)
	for _, name := range set.Names() {
		tools, domains := visibleCounts(set.Caller(name), cat)
		log.Info("caller", "name", name, "tools", tools, "domains", domains)
		for _, e := range unmatched[name] {
			log.Warn("a caller's allow or deny entry matches no tool or server: a typo?", "caller", name, "entry", e)
		}
	}
}

// callerChecks are doctor's lines for the callers: what each sees of
// cat (counts only), entries that match nothing, callers that see
// nothing.
func callerChecks(sp *callersSpec, cat *index.Catalog, domains []string, secrets *redact.Redactor) []check {
	if sp == nil {
		return nil
	}
	set, err := sp.build(secrets)
	if err != nil {
		return []check{{name: "callers", detail: err.Error(), fix: "fix the caller's entry in the config (its token files must exist and hold a token)"}}
	}
	var out []check
	unmatched := unmatchedEntries(set, cat, domains)
	for _, name := range set.Names() {
		tools, doms := visibleCounts(set.Caller(name), cat)
		c := check{name: "callers", detail: fmt.Sprintf("%s sees %s in %s", name, plural(tools, "tool"), plural(doms, "domain"))}
		if tools == 0 {
			c.fix, c.note = "its allow list matches no tool listed now: check the domain names (the mcpServers keys) and globs", true
		}
		out = append(out, c)
		for _, e := range unmatched[name] {
			out = append(out, check{name: "callers", detail: fmt.Sprintf("%s: entry %q matches no tool or server", name, e), fix: "a typo? domains are the mcpServers keys; globs are domain__tool (filesystem__read_*)", note: true})
		}
	}
	return out
}

// oauthChecks is doctor's line for toolscout.oauth: whether the
// issuer's key set can be fetched (through its metadata, or jwks_url),
// and how many keys it holds.
func oauthChecks(ctx context.Context, sp *callersSpec) []check {
	if sp == nil || sp.OAuth == nil {
		return nil
	}
	o := sp.OAuth
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	keys := callers.NewRemoteKeys(callers.RemoteKeysOptions{URL: o.JWKSURL, Issuer: o.Issuer, Client: idpClient()})
	if _, err := keys.KeySet(ctx, false); err != nil {
		fix := "check toolscout.oauth.issuer: its metadata must be at /.well-known/oauth-authorization-server (or openid-configuration) with the issuer's path, and name a jwks_uri; or give jwks_url"
		if o.JWKSURL != "" {
			fix = "check toolscout.oauth.jwks_url: it must answer the issuer's JWKS ({\"keys\": [...]})"
		}
		return []check{{name: "oauth", detail: fmt.Sprintf("the keys of issuer %s: %v", o.Issuer, err), fix: fix}}
	}
	n, _, url, _ := keys.Status()
	return []check{{name: "oauth", detail: fmt.Sprintf("issuer %s publishes %s at %s; tokens must be for %s", o.Issuer, plural(n, "key"), url, o.Resource)}}
}
