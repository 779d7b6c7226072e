package upauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// LoginOptions configures Login.
type LoginOptions struct {
	// Server is the upstream's name in the config; URL its URL.
	Server, URL string
	// ClientID is the client registered for toolscout at the
	// authorization server ("": dynamic client registration, which the
	// server must offer). Scopes are asked for ("": those the server's
	// protected resource metadata names).
	ClientID string
	Scopes   []string
	// ClientSecret is ClientID's secret where the client registered for
	// toolscout is confidential ("": a public client, PKCE alone).
	ClientSecret string
	// Store receives the tokens.
	Store *Store
	// Open opens the authorization URL in the user's browser (nil, or an
	// error: the URL is only printed to Out).
	Open func(url string) error
	// Out is where the URL and what happens are written (nil: nowhere).
	Out io.Writer
	// Client makes the discovery, registration and token requests (nil:
	// a client with a 30 s timeout).
	Client *http.Client
}

// ErrNoChallenge is matched by the error of Login at a server that
// served the probe without asking for a sign-in.
var ErrNoChallenge = errors.New("server did not ask for a sign-in")

// ErrStepUpLimit is matched by the error of Login for an upstream that
// kept refusing sign-ins for the same scopes (MaxStepUps).
var ErrStepUpLimit = errors.New("step-up sign-in limit reached")

// callbackPath is the loopback redirect's path.
const callbackPath = "/callback"

// maxParam bounds what of the authorization server's redirect is read
// (an error code, a state, a code).
const maxParam = 4096

// Login signs in to o.Server: it asks the upstream (an initialize
// without a token), reads its 401 (WWW-Authenticate resource_metadata,
// RFC 9728 protected resource metadata, RFC 8414 authorization server
// metadata: the go-sdk's auth.AuthorizationCodeHandler), registers a
// client when no ClientID is given, sends the user to the authorization
// URL with PKCE and a loopback redirect on 127.0.0.1 (a random port),
// exchanges the code and saves the tokens. It returns the saved entry.
func Login(ctx context.Context, o LoginOptions) (*Entry, error) {
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: refreshTimeout}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("sign in to %s: open the loopback redirect: %w", o.Server, err)
	}
	defer ln.Close()
	redirect := fmt.Sprintf("http://%s%s", ln.Addr(), callbackPath)

	// The sign-in before this one, and what the upstream's refusal of
	// its token asked for (recorded by the gateway): the new sign-in asks
	// for the union of the scopes granted then and those challenged
	// (step-up), a bounded number of times for the same scopes.
	prev, err := o.Store.Get(o.Server)
	if err != nil {
		return nil, fmt.Errorf("sign in to %s: %w", o.Server, err)
	}
	var pending *Challenge
	var granted []string
	if prev != nil && prev.URL == o.URL {
		pending, granted = prev.Challenge, prev.Scopes
	}
	if pending.Exhausted() {
		return nil, fmt.Errorf("sign in to %s: %w: it refused %d sign-ins for scopes %q already; toolscout stops here rather than send you to the browser again. The account may not be allowed these scopes: ask the server's administrator, then run toolscout auth logout %s and toolscout auth login %s to start over", o.Server, ErrStepUpLimit, pending.SignIns, strings.Join(pending.Scopes, " "), o.Server, o.Server)
	}

	req, resp, err := probe(ctx, o.Client, o.URL)
	if err != nil {
		return nil, fmt.Errorf("sign in to %s: %w", o.Server, err)
	}
	if resp.StatusCode != http.StatusUnauthorized {
		resp.Body.Close()
		return nil, fmt.Errorf("sign in to %s: %w: %s answered HTTP %d to initialize and tools/list without a token, not 401; its entry needs no \"auth\", or it wants headers", o.Server, ErrNoChallenge, o.URL, resp.StatusCode)
	}

	var (
		got    *oauth2.Token
		gotCfg *oauth2.Config
	)
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		RequestRefreshToken:      true,
		Client:                   o.Client,
		AuthorizationCodeFetcher: fetcher(ln, o),
		NewTokenSource: func(_ context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			got, gotCfg = t, c
			return oauth2.StaticTokenSource(t), nil
		},
	}
	var asked []string
	cfg.ScopeFilter = func(discovered []string) []string {
		if len(o.Scopes) > 0 {
			discovered = o.Scopes
		}
		if pending != nil {
			discovered = union(granted, discovered, pending.Scopes)
		}
		asked = discovered
		return discovered
	}
	if o.ClientID != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: o.ClientID}
		if o.ClientSecret != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: o.ClientSecret}
		}
	} else {
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect},
			// A public client (RFC 8252 §8.4: a native app keeps no
			// secret; PKCE protects the code). Said, not left to the
			// server: RFC 7591's default is client_secret_basic, which an
			// authorization server of only client_secret_post and none
			// (the TypeScript SDK's) refuses at the token endpoint.
			TokenEndpointAuthMethod: "none",
			ClientName:              "toolscout",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
		}}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, fmt.Errorf("sign in to %s: %w", o.Server, err)
	}
	if err := h.Authorize(ctx, req, resp); err != nil {
		if strings.Contains(err.Error(), "no configured client registration") {
			return nil, fmt.Errorf("sign in to %s: its authorization server offers no dynamic client registration: register toolscout there (redirect URI http://127.0.0.1/callback, any port) and put the client id in the entry's \"auth\": {\"type\": \"oauth\", \"client_id\": \"...\"}", o.Server)
		}
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			// The token endpoint's free text may echo what was sent
			// (the code, the verifier): only its error code is quoted.
			return nil, fmt.Errorf("sign in to %s: the authorization server refused the token request (HTTP %d%s)", o.Server, re.Response.StatusCode, errorCode(re.ErrorCode))
		}
		return nil, fmt.Errorf("sign in to %s: %w", o.Server, err)
	}
	if got == nil || got.AccessToken == "" {
		return nil, fmt.Errorf("sign in to %s: the authorization server issued no access token", o.Server)
	}
	e := &Entry{URL: o.URL, TokenURL: gotCfg.Endpoint.TokenURL, AuthStyle: int(gotCfg.Endpoint.AuthStyle),
		ClientID: gotCfg.ClientID, ClientSecret: gotCfg.ClientSecret, Scopes: sortedScopes(gotCfg.Scopes),
		AccessToken: got.AccessToken, RefreshToken: got.RefreshToken, TokenType: got.TokenType, Expiry: got.Expiry,
		SignedIn: time.Now().UTC()}
	if len(e.Scopes) == 0 {
		e.Scopes = asked
	}
	if s, ok := got.Extra("scope").(string); ok && s != "" {
		e.Scopes = sortedScopes(strings.Fields(s)) // what was granted
	}
	if pending != nil && len(pending.Scopes) > 0 {
		e.StepUp = &StepUp{Scopes: pending.Scopes, SignIns: pending.SignIns + 1}
	}
	if err := o.Store.Put(o.Server, e); err != nil {
		return nil, err
	}
	return e, nil
}

// probe sends the upstream an initialize without credentials, for its
// 401; a server that lets initialize through (the MCP authorization
// spec lets a server ask for a token only where it needs one) is asked
// tools/list next, in the session initialize opened (if any). It returns
// the request and the answer that refused, or the last answer.
func probe(ctx context.Context, c *http.Client, url string) (*http.Request, *http.Response, error) {
	req, resp, err := post(ctx, c, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"toolscout","version":"auth"}}}`)
	if err != nil || resp.StatusCode == http.StatusUnauthorized {
		return req, resp, err
	}
	session := resp.Header.Get("Mcp-Session-Id")
	resp.Body.Close() // not read: a server may hold an event stream open
	if len(session) > 256 {
		session = ""
	}
	if session != "" {
		if _, r, err := post(ctx, c, url, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err == nil {
			r.Body.Close()
		}
	}
	return post(ctx, c, url, session, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
}

// post sends one JSON-RPC message without credentials.
func post(ctx context.Context, c *http.Client, url, session, body string) (*http.Request, *http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader([]byte(body)))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("reach %s: %w", url, err)
	}
	return req, resp, nil
}

// fetcher returns the AuthorizationCodeFetcher: it serves the loopback
// redirect on ln, shows the user the URL (opens the browser when it
// can, prints the URL always when it cannot) and waits for the
// redirect, or ctx.
func fetcher(ln net.Listener, o LoginOptions) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		type result struct {
			res *auth.AuthorizationResult
			err error
		}
		done := make(chan result, 1)
		mux := http.NewServeMux()
		mux.HandleFunc(callbackPath, func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			var res result
			switch code := q.Get("code"); {
			case q.Get("error") != "":
				res.err = fmt.Errorf("the authorization server refused the sign-in%s", errorCode(q.Get("error")))
			case code == "" || len(code) > maxParam || len(q.Get("state")) > maxParam:
				res.err = errors.New("the redirect carried no usable authorization code")
			default:
				res.res = &auth.AuthorizationResult{Code: code, State: q.Get("state"), Iss: q.Get("iss")}
			}
			// The page first, then the result: the server is shut down
			// once the result is in, and the browser must get its page.
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			if res.err != nil {
				fmt.Fprintln(w, "toolscout: the sign-in failed; see the terminal.")
			} else {
				fmt.Fprintf(w, "toolscout: signed in to %s. You may close this tab.\n", o.Server)
			}
			http.NewResponseController(w).Flush()
			select {
			case done <- res:
			default: // a second redirect: the first one counts
			}
		})
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			srv.Shutdown(sctx) // lets the page's response finish
		}()

		opened := false
		if o.Open != nil {
			opened = o.Open(args.URL) == nil
		}
		if opened {
			fmt.Fprintf(o.Out, "Opened the browser to sign in to %s. If it did not open, visit:\n\n  %s\n\n", o.Server, args.URL)
		} else {
			fmt.Fprintf(o.Out, "To sign in to %s, open this URL in a browser:\n\n  %s\n\n", o.Server, args.URL)
		}
		fmt.Fprintf(o.Out, "Waiting for the redirect to %s ...\n", ln.Addr())
		select {
		case r := <-done:
			return r.res, r.err
		case <-ctx.Done():
			return nil, fmt.Errorf("no redirect from the authorization server: %w", ctx.Err())
		}
	}
}

// errorCode returns ", CODE" for an OAuth error code fit to quote, else "".
func errorCode(code string) string {
	if code == "" || len(code) > 64 || strings.ContainsFunc(code, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
		return ""
	}
	return ", " + code
}

// sortedScopes is scopes in a stable order: the go-sdk's handler merges
// what was granted with what was asked in a map (authutil.UnionScopes),
// so its order changed from one sign-in to the next (and with it a
// server's granted list that echoes the request), and with it the
// stored entry and what auth status prints (a test comparing them failed
// one CI run in a few). A scope list is a set (RFC 6749, 3.3).
func sortedScopes(scopes []string) []string {
	if len(scopes) == 0 {
		return nil
	}
	return slices.Sorted(slices.Values(scopes))
}
