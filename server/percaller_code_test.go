package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/server/callers"
	"github.com/toolscout/toolscout/server/gateway"
)

// TestCallerIdentityRunCode: in code mode, a program's tool calls to a
// server acting with each caller's identity carry the identity of the
// caller who ran the program, as its execute_tool would: alice's
// program runs the tool as alice, bob's as bob, over both protocol
// generations; never as toolscout.
func TestCallerIdentityRunCode(t *testing.T) {
	t.Parallel()
	up := startIdentityUpstream(t)
	set, err := callers.New(callers.Options{Callers: []callers.Config{
		{Name: "alice", Tokens: []string{aliceToken}, Allow: []string{"*"}},
		{Name: "bob", Tokens: []string{bobToken}, Allow: []string{"*"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	url, _, _ := serveOneUpstream(t, gateway.UpstreamConfig{Domain: "id", URL: up.url, Transport: "http", Auth: staticToken(ownUpToken), CallerIdentity: gateway.IdentityForward}, set,
		func(o *Options) { o.Expose, o.Code = Exposure{Mode: ExposeCode}, &Code{Runner: codeRunner(t)} }, ownUpToken)

	for _, protocol := range []string{"", "2025-11-25"} {
		for _, tc := range []struct{ token, want string }{{aliceToken, "you are alice"}, {bobToken, "you are bob"}} {
			cs := connectURL(t, url, &http.Client{Transport: bearerRT(tc.token)}, protocol)
			ans := codeAnswer(t, cs, `await tools.id.whoami({})`)
			if ans.Error != nil || !strings.Contains(string(ans.Result), tc.want) {
				t.Errorf("protocol %q: the program of %.5s answered %s (error %+v), want %q", protocol, tc.token, ans.Result, ans.Error, tc.want)
			}
		}
	}
}

// TestCallerIdentityExchangeRunCode: a program's tool call to a server
// of exchanged identities is made with its caller's token exchanged,
// as execute_tool's is: alice's program runs the tool as alice, bob's
// as bob.
func TestCallerIdentityExchangeRunCode(t *testing.T) {
	t.Parallel()
	keys, jwts := callerJWTs(t)
	as := startExchangeAS(t, map[string]string{jwts["alice"]: "alice", jwts["bob"]: "bob"})
	upURL := startExchangeUpstream(t, as, true)
	url, _, _ := exchangeGateway(t, upURL, keys, &gateway.Exchange{ClientID: exchangeClientID, ClientSecret: exchangeClientSecret}, Exposure{Mode: ExposeCode})
	for _, protocol := range []string{"", "2025-11-25"} {
		for _, tc := range []struct{ token, want string }{{jwts["alice"], "you are alice"}, {jwts["bob"], "you are bob"}} {
			cs := connectURL(t, url, &http.Client{Transport: bearerRT(tc.token)}, protocol)
			ans := codeAnswer(t, cs, `await tools.id.whoami({})`)
			if ans.Error != nil || !strings.Contains(string(ans.Result), tc.want) {
				t.Errorf("protocol %q: the program of %.5s answered %s (error %+v), want %q", protocol, tc.token, ans.Result, ans.Error, tc.want)
			}
		}
	}
	if got := as.Counts(); got != "map[alice:1 bob:1]" {
		t.Errorf("exchanges by user: %s, want one each", got)
	}
}
