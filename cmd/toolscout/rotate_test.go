package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// TestCallersRotateWithoutRestart: while serve --http runs, a caller's
// token file gets a new token and the JWKS file a new key: the old token
// and JWTs of the old key stop working, the new ones work, with no
// restart, and the log says so. A JWKS file that becomes invalid and a
// token file that goes away change nothing (the last good callers stay,
// the log says why); SIGHUP re-reads at once; a caller's lists changed
// in the callers block apply too. No token is in the log or /metrics.
func TestCallersRotateWithoutRestart(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	dir := t.TempDir()
	// replace writes a file as an operator should: a temporary file
	// renamed over it.
	replace := func(name, content string) {
		t.Helper()
		tmp := filepath.Join(dir, name+".tmp")
		if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	type signer struct {
		key *ecdsa.PrivateKey
		kid string
	}
	newSigner := func(kid string) signer {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return signer{key, kid}
	}
	jwks := func(s signer) string {
		js, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &s.key.PublicKey, KeyID: s.kid, Algorithm: "ES256", Use: "sig"}}})
		return string(js)
	}
	botJWT := func(s signer) string {
		sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: s.key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", s.kid))
		if err != nil {
			t.Fatal(err)
		}
		tok, err := jwt.Signed(sig).Claims(map[string]any{"iss": "https://id.example", "aud": "toolscout", "sub": "bot-1", "exp": time.Now().Add(time.Hour).Unix()}).Serialize()
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	k1, k2 := newSigner("k1"), newSigner("k2")
	oldTok, newTok, thirdTok := "ops-old-token-0123456789abcdef", "ops-new-token-0123456789abcdef", "ops-third-token-0123456789abcdef"
	bot1, bot2 := botJWT(k1), botJWT(k2)
	names := map[string]string{oldTok: "old token", newTok: "new token", thirdTok: "third token", bot1: "JWT of k1", bot2: "JWT of k2"}
	replace("ops.token", oldTok+"\n")
	replace("jwks.json", jwks(k1))
	replace("callers.json", `{"toolscout": {
		"callers": {"ops": {"token_files": ["ops.token"], "allow": ["*"]}, "bot": {"jwt_claims": {"sub": "bot-1"}, "allow": ["*"]}},
		"jwt": {"jwks_file": "jwks.json", "issuer": "https://id.example", "audience": "toolscout"}}}`)
	s := startServeHTTP(t, bin, []string{"OLLAMA_HOST=127.0.0.1:9"}, "serve", "--http", "127.0.0.1:0", "--callers", filepath.Join(dir, "callers.json"),
		"--embedder", "builtin", "--data-dir", filepath.Join(dir, "data"))
	s.waitReady(t)
	status := func(token string) int {
		code, _ := get(t, s.base+"/metrics", "Authorization", "Bearer "+token)
		return code
	}
	// expect polls until every token gets its status (a few seconds at
	// most: the files are looked at every 250 ms) and returns how long
	// that took.
	expect := func(what string, want map[string]int) time.Duration {
		t.Helper()
		start := time.Now()
		for {
			ok := true
			for tok, code := range want {
				ok = ok && status(tok) == code
			}
			if ok {
				return time.Since(start)
			}
			if time.Since(start) > 10*time.Second {
				var got []string
				for tok, code := range want {
					got = append(got, fmt.Sprintf("%s: %d, want %d", names[tok], status(tok), code))
				}
				t.Fatalf("%s, after 10 s: %s\n%s", what, strings.Join(got, "; "), s.logText())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	expect("at start", map[string]int{oldTok: 200, bot1: 200, newTok: 401, bot2: 401})

	replace("ops.token", newTok+"\n")
	replace("jwks.json", jwks(k2))
	took := expect("after rotating the token and the key", map[string]int{oldTok: 401, bot1: 401, newTok: 200, bot2: 200})
	t.Logf("the rotation took effect %v after the files were replaced", took)
	// Logged once the new callers are in use, so just after the
	// statuses above may have changed.
	waitLog(t, s, "the callers were re-read")

	// Broken files keep the last good callers, and the log says why.
	replace("jwks.json", `{"keys": [{"kty": "EC", "crv": "P-256", "x": "cut in ha`)
	waitLog(t, s, "toolscout.jwt.jwks_file")
	os.Remove(filepath.Join(dir, "ops.token"))
	waitLog(t, s, "toolscout.callers.ops.token_files[0]")
	if !strings.Contains(s.logText(), "the callers were not re-read: serving with the last good ones") {
		t.Errorf("the log does not say the last good callers are kept:\n%s", s.logText())
	}
	expect("with a broken JWKS and a missing token file", map[string]int{newTok: 200, bot2: 200, oldTok: 401})

	// Fixed again: the newest token works.
	replace("jwks.json", jwks(k2))
	replace("ops.token", thirdTok+"\n")
	expect("after the files are fixed", map[string]int{thirdTok: 200, newTok: 401, bot2: 200})

	// SIGHUP re-reads at once, and does not stop the server.
	s.cmd.Process.Signal(syscall.SIGHUP)
	waitLog(t, s, "trigger=SIGHUP")
	expect("after SIGHUP", map[string]int{thirdTok: 200})

	// The callers block itself: ops now sees nothing, bot still all.
	tools := func(tok string) string {
		_, scrape := get(t, s.base+"/metrics", "Authorization", "Bearer "+tok)
		return metricLine(scrape, "toolscout_index_tools")
	}
	before := tools(thirdTok)
	if before == "toolscout_index_tools 0" || before == "" {
		t.Fatalf("ops sees %q before its lists change", before)
	}
	replace("callers.json", `{"toolscout": {
		"callers": {"ops": {"token_files": ["ops.token"], "allow": ["*"], "deny": ["*"]}, "bot": {"jwt_claims": {"sub": "bot-1"}, "allow": ["*"]}},
		"jwt": {"jwks_file": "jwks.json", "issuer": "https://id.example", "audience": "toolscout"}}}`)
	for start := time.Now(); tools(thirdTok) != "toolscout_index_tools 0"; time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("ops's /metrics still says %q 10 s after its deny list became *", tools(thirdTok))
		}
	}
	if got := tools(bot2); got != before {
		t.Errorf("bot's tools after ops's lists changed: %q, want %q", got, before)
	}

	_, scrape := get(t, s.base+"/metrics", "Authorization", "Bearer "+thirdTok)
	// The whole log, once serve has ended.
	serveLog := s.stop(t)
	for tok, name := range names {
		for where, out := range map[string]string{"log": serveLog, "/metrics": scrape} {
			if strings.Contains(out, tok) || strings.Contains(out, tok[strings.LastIndex(tok, ".")+1:]) {
				t.Errorf("the %s is in the %s", name, where)
			}
		}
	}
}

// waitLog polls s's log until it holds want (10 s at most).
func waitLog(t *testing.T, s *httpServe, want string) {
	t.Helper()
	for start := time.Now(); !strings.Contains(s.logText(), want); time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the log does not say %q after 10 s:\n%s", want, s.logText())
		}
	}
}
