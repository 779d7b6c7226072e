package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/server"
	"github.com/toolscout/toolscout/server/callers"
)

// seenReplicas is a transport that adds a bearer token and records which
// replica answered (HAProxy's header).
type seenReplicas struct {
	token string
	mu    sync.Mutex
	by    map[string]int
}

func (s *seenReplicas) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		s.mu.Lock()
		s.by[resp.Header.Get(replicaHeader)]++
		s.mu.Unlock()
	}
	return resp, err
}

// TestCallersBehindHAProxy: two read-only replicas of one data dir, each
// given the callers with --callers (a token caller and a JWT caller),
// behind HAProxy: each caller, over both protocol generations, sees only
// its tools whichever replica answers, and is refused without its
// credential.
func TestCallersBehindHAProxy(t *testing.T) {
	hap := needHAProxy(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "toolscout")
	if out, err := exec.Command("go", "build", "-o", bin, "../toolscout").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data := filepath.Join(dir, "data")
	if out, err := exec.Command(bin, "index", "--data-dir", data, "--embedder", "builtin").CombinedOutput(); err != nil {
		t.Fatalf("toolscout index: %v\n%s", err, out)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	os.WriteFile(filepath.Join(dir, "jwks.json"), jwks, 0o600)
	os.WriteFile(filepath.Join(dir, "ops.token"), []byte("ops-token-0123456789abcdef\n"), 0o600)
	sig, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	botJWT, err := jwt.Signed(sig).Claims(map[string]any{"iss": "https://id.example", "aud": "toolscout", "sub": "bot-1",
		"exp": time.Now().Add(time.Hour).Unix()}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	type caller struct {
		name, token string
		allow, deny []string
	}
	cs := []caller{
		{"ops", "ops-token-0123456789abcdef", []string{"kubernetes", "pagerduty__list_*"}, []string{"kubernetes__delete_*"}},
		{"bot", botJWT, []string{"github", "gitlab"}, []string{"github__delete_*", "gitlab__create_*"}},
	}
	cfg := map[string]any{"callers": map[string]any{
		"ops": map[string]any{"token_files": []string{"ops.token"}, "allow": cs[0].allow, "deny": cs[0].deny},
		"bot": map[string]any{"jwt_claims": map[string]string{"sub": "bot-1"}, "allow": cs[1].allow, "deny": cs[1].deny},
	}, "jwt": map[string]any{"jwks_file": "jwks.json", "issuer": "https://id.example", "audience": "toolscout"}}
	js, _ := json.Marshal(map[string]any{"toolscout": cfg})
	callersFile := filepath.Join(dir, "callers.json")
	os.WriteFile(callersFile, js, 0o600)

	var lb lbConfig
	for _, name := range []string{"r1", "r2"} {
		r, err := startReplica(bin, name, "127.0.0.1:0", []string{"--data-dir", data, "--embedder", "builtin", "--callers", callersFile})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.stop(10 * time.Second) })
		if err := r.waitReady(t.Context(), 60*time.Second); err != nil {
			t.Fatal(err)
		}
		lb.Servers = append(lb.Servers, lbServer{Name: name, Addr: r.addr})
	}
	lb.Socket, lb.Inter = filepath.Join(dir, "haproxy.sock"), "200ms"
	h, err := startHAProxy(hap, dir, lb)
	if err != nil {
		t.Fatal(err)
	}
	defer h.stop()
	if _, err := h.waitStatus(t.Context(), "UP", 15*time.Second, "r1", "r2"); err != nil {
		t.Fatal(err)
	}
	url := "http://" + h.cfg.Listen + "/mcp"
	if resp, err := http.Post(url, "application/json", strings.NewReader(`{}`)); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/mcp without a credential: %v %v, want 401", resp, err)
	}

	cat, err := index.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		pol, err := callers.NewPolicy(c.allow, c.deny)
		if err != nil {
			t.Fatal(err)
		}
		var visible, hidden []string
		doms := map[string]bool{}
		for _, tl := range cat.Tools() {
			if pol.Visible(tl.Domain, tl.Name) {
				visible = append(visible, tl.QualifiedName)
				doms[tl.Domain] = true
			} else {
				hidden = append(hidden, tl.QualifiedName)
			}
		}
		for _, protocol := range []string{"", "2025-11-25"} {
			rt := &seenReplicas{token: c.token, by: map[string]int{}}
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			sess, err := mcp.NewClient(&mcp.Implementation{Name: "callers", Version: "1"}, nil).Connect(ctx,
				&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1},
				&mcp.ClientSessionOptions{ProtocolVersion: protocol})
			if err != nil {
				t.Fatalf("%s at %q: %v", c.name, protocol, err)
			}
			var seen strings.Builder
			callTool := func(name string, args map[string]any) string {
				res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
				if err != nil {
					t.Fatalf("%s %s: %v", c.name, name, err)
				}
				b, _ := json.Marshal(res)
				seen.Write(b)
				for _, ct := range res.Content {
					if tc, ok := ct.(*mcp.TextContent); ok {
						return tc.Text
					}
				}
				return ""
			}
			for range 3 { // several requests: both replicas answer the stateless ones
				var toc server.Contents
				json.Unmarshal([]byte(callTool(server.DiscoverTools, map[string]any{})), &toc)
				if len(toc.Domains) != len(doms) || toc.TotalTools != len(visible) {
					t.Errorf("%s/%q: discover_tools = %+v, want %d domains, %d tools", c.name, protocol, toc, len(doms), len(visible))
				}
				for _, q := range []string{"restart a deployment", "delete a pod", "open a pull request", "who is on call", "create a merge request"} {
					var a server.SearchAnswer
					json.Unmarshal([]byte(callTool(server.DiscoverTools, map[string]any{"query": q, "limit": 5})), &a)
					if len(a.Results) != 5 {
						t.Errorf("%s/%q: search %q: %d results, want 5", c.name, protocol, q, len(a.Results))
					}
					for _, r := range a.Results {
						if !slices.Contains(visible, r.Name) {
							t.Errorf("%s/%q: search %q found %s", c.name, protocol, q, r.Name)
						}
					}
				}
			}
			for _, hn := range hidden[:10] {
				if txt := callTool(server.GetToolSchema, map[string]any{"tool_name": hn}); !strings.Contains(txt, "unknown tool") {
					t.Errorf("%s/%q: get_tool_schema %s = %s, want unknown tool", c.name, protocol, hn, txt)
				}
			}
			rest := seen.String()
			for _, hn := range hidden[:10] {
				rest = strings.ReplaceAll(rest, `\"`+hn+`\"`, "")
			}
			for _, hn := range hidden {
				if strings.Contains(rest, hn) {
					t.Errorf("%s/%q: an answer names hidden %s", c.name, protocol, hn)
				}
			}
			sess.Close()
			if protocol == "" && (rt.by["r1"] == 0 || rt.by["r2"] == 0) {
				t.Errorf("%s: replicas answered %v, want both", c.name, rt.by)
			}
		}
	}
}
