package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/toolscout/toolscout/server/upauth"
)

// toolscout auth: signing in to the upstream servers behind OAuth (an
// entry's "auth": {"type": "oauth"}); the tokens live in the data dir's
// credentials file (server/upauth), which serve reads.

const authUsage = `auth login SERVER | auth status | auth logout SERVER [flags]

Signs toolscout in to remote servers behind OAuth: the mcpServers entries
with "auth": {"type": "oauth", "client_id"?: "...", "scopes"?: [...]}.

  login SERVER   discovers the server's authorization server (from its
                 401 and its protected resource metadata), registers
                 toolscout there when no client_id is configured, and
                 opens the browser at the authorization URL (PKCE, a
                 redirect to 127.0.0.1 on a random port); the URL is
                 printed when no browser can be opened, and always with
                 --no-browser. The tokens go to credentials.json in the
                 data dir (mode 0600); a running serve uses them at once.
  status         each OAuth server: signed in or not, valid until, scopes,
                 whether a refresh token is held (never a token).
  logout SERVER  forgets the server's tokens.

Pass the same --config files and --data-dir as serve.`

// loginWait bounds how long login waits for the user to sign in.
const loginWait = 10 * time.Minute

func runAuth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var g globalFlags
	fs := newFlagSet("auth", authUsage, stderr)
	g.register(fs, "warn")
	noBrowser := fs.Bool("no-browser", false, "login: print the authorization URL instead of opening a browser")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return usagef("auth needs a subcommand: login SERVER, status or logout SERVER")
	}
	if len(g.configs) == 0 {
		return usagef("auth works on the servers of a config: pass the --config files that serve uses")
	}
	gc, err := g.gatewayConfig()
	if err != nil {
		return err
	}
	sub, names := rest[0], rest[1:]
	server := func() (string, oauthUpstream, error) {
		if len(names) != 1 {
			return "", oauthUpstream{}, usagef("auth %s takes one SERVER (the name of its mcpServers entry)", sub)
		}
		o, ok := gc.OAuth[names[0]]
		if !ok {
			known := strings.Join(upauthNames(gc), ", ")
			if known == "" {
				known = `none: give an HTTP server "auth": {"type": "oauth"} in the config`
			}
			return "", oauthUpstream{}, usagef("%q is not a server with OAuth in these configs (those that are: %s)", names[0], known)
		}
		return names[0], o, nil
	}
	st := g.credentials()
	switch sub {
	case "login":
		name, o, err := server()
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, loginWait)
		defer cancel()
		secret, err := o.clientSecret(name)
		if err != nil {
			return err
		}
		g.redactor().Add(secret)
		opts := upauth.LoginOptions{Server: name, URL: o.URL, ClientID: o.ClientID, ClientSecret: secret, Scopes: o.Scopes, Store: st, Out: stdout}
		if !*noBrowser {
			opts.Open = openBrowser
		}
		e, err := upauth.Login(ctx, opts)
		if err != nil {
			return g.redactor().Error(err)
		}
		fmt.Fprintf(stdout, "signed in to %s%s; tokens saved in %s\n", name, validUntil(e), st.Path())
		return nil
	case "logout":
		name, _, err := server()
		if err != nil {
			return err
		}
		had, err := st.Delete(name)
		if err != nil {
			return err
		}
		if !had {
			fmt.Fprintf(stdout, "%s: not signed in\n", name)
			return nil
		}
		fmt.Fprintf(stdout, "%s: signed out (its tokens are removed from %s)\n", name, st.Path())
		return nil
	case "status":
		if len(names) > 0 {
			return usagef("auth status takes no SERVER: it lists them all")
		}
		all, err := st.All()
		if err != nil {
			return err
		}
		if len(gc.OAuth) == 0 {
			fmt.Fprintln(stdout, `no server in these configs signs in with OAuth ("auth": {"type": "oauth"})`)
			return nil
		}
		for _, name := range upauthNames(gc) {
			fmt.Fprintln(stdout, statusLine(name, gc.OAuth[name], all[name]))
		}
		return nil
	}
	return usagef("unknown auth subcommand %q: use login SERVER, status or logout SERVER", sub)
}

// upauthNames returns the OAuth servers' names, sorted.
func upauthNames(gc *gatewayConfig) []string {
	names := make([]string, 0, len(gc.OAuth))
	for n := range gc.OAuth {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// statusLine says what toolscout holds of one server's sign-in: never a
// token, a secret or a client id.
func statusLine(name string, o oauthUpstream, e *upauth.Entry) string {
	switch {
	case e == nil || e.AccessToken == "":
		return fmt.Sprintf("%s: not signed in (toolscout auth login %s)", name, name)
	case e.URL != o.URL:
		return fmt.Sprintf("%s: signed in to another URL; sign in again (toolscout auth login %s)", name, name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: signed in", name)
	if !e.Expiry.IsZero() {
		if time.Now().After(e.Expiry) {
			fmt.Fprintf(&b, ", expired %s", e.Expiry.UTC().Format(time.RFC3339))
		} else {
			fmt.Fprintf(&b, ", valid until %s", e.Expiry.UTC().Format(time.RFC3339))
		}
	} else {
		b.WriteString(", no expiry given")
	}
	if len(e.Scopes) > 0 {
		fmt.Fprintf(&b, ", scopes %s", strings.Join(e.Scopes, " "))
	} else {
		b.WriteString(", no scopes")
	}
	if e.RefreshToken != "" {
		b.WriteString(", refresh available")
	} else {
		b.WriteString(", no refresh token (sign in again when it expires)")
	}
	if e.Challenge != nil {
		fmt.Fprintf(&b, "; refused by the server: %s", e.Challenge)
		if !e.Challenge.Exhausted() {
			fmt.Fprintf(&b, " (toolscout auth login %s)", name)
		}
	}
	return b.String()
}

func validUntil(e *upauth.Entry) string {
	if e.Expiry.IsZero() {
		return ""
	}
	return ", valid until " + e.Expiry.UTC().Format(time.RFC3339)
}

// openBrowser opens url in the user's browser, or says it cannot (no
// display on Linux, no opener).
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
			return errors.New("no display")
		}
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
