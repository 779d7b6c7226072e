// Command authclient is toolscout's upstream OAuth client as the MCP
// conformance suite's client-side auth scenarios run it
// (`conformance client --command authclient --scenario auth/...`): the
// suite plays an OAuth-protected MCP server and its authorization
// server, and runs this command with the server's URL as its last
// argument. It signs in as `toolscout auth login` does (upauth.Login:
// the 401, RFC 9728 and RFC 8414 discovery, dynamic client registration
// or the client id and secret the scenario's context gives, PKCE, the loopback
// redirect), playing the browser itself (it follows the authorization
// URL, whose server redirects at once), into a credentials file of a
// scratch data dir; then it connects as `serve` does (the gateway with
// the upauth.Source of that sign-in: the token on every request,
// refreshed before it expires and after a 401), lists the server's
// tools and calls each one named test-tool, as the suite's scenarios
// expect of a client.
//
// It exists for cmd/conformance only: nothing of it is a toolscout
// command or setting.
//
//	authclient http://localhost:PORT/mcp   (MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_CONTEXT in the environment)
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/redact"
	"github.com/toolscout/toolscout/server/gateway"
	"github.com/toolscout/toolscout/server/upauth"
)

// server is the upstream's name in the scratch config.
const server = "conf"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: authclient SERVER_URL (run by the MCP conformance suite)")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := run(ctx, os.Args[len(os.Args)-1], os.Getenv("MCP_CONFORMANCE_CONTEXT")); err != nil {
		fmt.Fprintln(os.Stderr, "authclient:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url, scenarioContext string) error {
	var sc struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if scenarioContext != "" {
		if err := json.Unmarshal([]byte(scenarioContext), &sc); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	dir, err := os.MkdirTemp("", "toolscout-authclient-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	st := upauth.OpenStore(filepath.Join(dir, upauth.FileName))
	// The log is redacted of every token the sign-in and its refreshes
	// read, as serve's is.
	secrets := redact.New()
	log := slog.New(secrets.Handler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})))
	login := func() error {
		_, err := upauth.Login(ctx, upauth.LoginOptions{Server: server, URL: url, ClientID: sc.ClientID, ClientSecret: sc.ClientSecret, Store: st, Open: follow, Out: os.Stderr})
		return err
	}
	if err := login(); err != nil {
		return err
	}
	// The user's part: where the server asks for a new sign-in (more
	// scope, another authorization server), the gateway records what it
	// asks and says to run toolscout auth login again; the user does, as
	// often as the gateway asks and Login agrees (upauth.MaxStepUps), and
	// the call is made again. The loop is bounded by Login's limit;
	// rounds only guards against a bug in it.
	for round := 0; ; round++ {
		called, err := session(ctx, log, st, secrets, url)
		if err == nil {
			return nil
		}
		if !errors.Is(err, gateway.ErrSignIn) || round > upauth.MaxStepUps+1 {
			return err
		}
		fmt.Fprintf(os.Stderr, "authclient: after %d calls: %v; signing in again\n", called, err)
		if err := login(); err != nil {
			return err
		}
	}
}

// session connects as serve does, lists the server's tools and calls
// each one named test-tool; it returns how many calls were made.
func session(ctx context.Context, log *slog.Logger, st *upauth.Store, secrets *redact.Redactor, url string) (int, error) {
	g := gateway.New(gateway.Options{Logger: log, Upstreams: []gateway.UpstreamConfig{{Domain: server, URL: url, Transport: "http",
		ConnectTimeout: 20 * time.Second, Auth: upauth.NewSource(st, server, url, nil, secrets.Add).WithLog(log)}}})
	g.Start(ctx)
	defer g.Close()
	g.WaitReady(ctx)
	s := g.Upstreams().Status()[0]
	if s.State != "up" {
		if errors.Is(s.Err, gateway.ErrSignIn) {
			return 0, s.Err
		}
		return 0, fmt.Errorf("the server is %s: %v", s.State, s.Err)
	}
	called := 0
	for _, d := range g.Specs() {
		for _, t := range d.Tools {
			if t.Name != "test-tool" {
				continue
			}
			tool := &index.Tool{Domain: server, Name: t.Name, QualifiedName: server + "__" + t.Name}
			res, err := g.Execute(ctx, &mcp.CallToolRequest{}, tool, map[string]any{})
			if err != nil {
				return called, fmt.Errorf("call %s: %w", t.Name, err)
			}
			called++
			if res.IsError {
				return called, fmt.Errorf("call %s: the tool failed", t.Name)
			}
		}
	}
	fmt.Fprintf(os.Stderr, "authclient: signed in, %d tools listed, test-tool called %d times\n", s.Tools, called)
	return called, nil
}

// follow plays the browser: it asks the authorization URL, whose server
// redirects at once, and delivers the redirect to Login's loopback
// listener.
func follow(authURL string) error {
	noRedirect := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(authURL)
	if err != nil {
		return err
	}
	resp.Body.Close()
	to := resp.Header.Get("Location")
	if to == "" {
		return fmt.Errorf("the authorization endpoint answered %s without a redirect", resp.Status)
	}
	back, err := noRedirect.Get(to)
	if err != nil {
		return err
	}
	back.Body.Close()
	if back.StatusCode != http.StatusOK {
		return errors.New("the loopback redirect answered " + back.Status)
	}
	return nil
}
