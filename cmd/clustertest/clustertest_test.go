package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// needHAProxy returns HAProxy's path, or skips the test when it is not
// installed (outside CI only: make test installs it).
func needHAProxy(t *testing.T) string {
	t.Helper()
	bin, _, err := findHAProxy("haproxy")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return bin
}

// TestHAProxyConfig runs the generated configuration in a real HAProxy
// in front of two fake replicas: requests without Mcp-Session-Id go
// round robin, a session's requests go where it was opened, a replica
// whose /readyz fails is taken out (its sessions' requests go elsewhere)
// and the runtime API puts one in maintenance.
func TestHAProxyConfig(t *testing.T) {
	bin := needHAProxy(t)
	var ready [2]atomic.Bool
	var opened atomic.Int64
	var cfg lbConfig
	for i := range ready {
		ready[i].Store(true)
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/readyz" {
				if !ready[i].Load() {
					http.Error(w, "not ready: draining", http.StatusServiceUnavailable)
					return
				}
				io.WriteString(w, "ready")
				return
			}
			if r.Header.Get("Mcp-Session-Id") == "" {
				w.Header().Set("Mcp-Session-Id", fmt.Sprintf("s%d", opened.Add(1)))
			}
			fmt.Fprintf(w, "r%d", i+1)
		}))
		defer hs.Close()
		cfg.Servers = append(cfg.Servers, lbServer{Name: fmt.Sprintf("r%d", i+1), Addr: strings.TrimPrefix(hs.URL, "http://")})
	}
	dir := t.TempDir()
	cfg.Socket, cfg.Inter = filepath.Join(dir, "haproxy.sock"), "100ms"
	h, err := startHAProxy(bin, dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer h.stop()
	if _, err := h.waitStatus(t.Context(), "UP", 10*time.Second, "r1", "r2"); err != nil {
		t.Fatal(err)
	}
	listen := h.cfg.Listen
	// post sends a POST to /mcp, with the session id when not empty, and
	// returns the replica that answered, by its body and by the header
	// HAProxy adds, and the session id the answer opened.
	post := func(sid string) (string, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, "http://"+listen+"/mcp", strings.NewReader("{}"))
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if got := resp.Header.Get(replicaHeader); got != string(body) {
			t.Errorf("%s says %q, the answer came from %q", replicaHeader, got, body)
		}
		return string(body), resp.Header.Get("Mcp-Session-Id")
	}

	seen := map[string]int{}
	for range 4 {
		rep, _ := post("")
		seen[rep]++
	}
	if seen["r1"] != 2 || seen["r2"] != 2 {
		t.Errorf("4 requests without a session went to %v, want 2 to each replica (round robin)", seen)
	}
	sessions := map[string]string{} // session → the replica that opened it
	for range 2 {
		rep, sid := post("")
		sessions[sid] = rep
	}
	for sid, want := range sessions {
		for range 3 {
			if got, _ := post(sid); got != want {
				t.Errorf("a request of session %s (opened on %s) went to %s", sid, want, got)
			}
		}
	}

	ready[0].Store(false)
	if _, err := h.waitStatus(t.Context(), "DOWN", 10*time.Second, "r1"); err != nil {
		t.Fatal(err)
	}
	for sid, was := range sessions {
		if got, _ := post(sid); got != "r2" {
			t.Errorf("with r1 down, a request of session %s (opened on %s) went to %s, want r2", sid, was, got)
		}
	}
	if err := h.setState("r2", "maint"); err != nil {
		t.Fatal(err)
	}
	st, err := h.statuses()
	if err != nil || st["r2"] != "MAINT" {
		t.Errorf("after set server r2 state maint: statuses %v, %v", st, err)
	}
	if err := h.setState("r9", "maint"); err == nil {
		t.Error("set server r9 (no such server) state maint: no error")
	}
}

func TestParseSmapsRollup(t *testing.T) {
	const sample = `55d0c8a9e000-7ffd6b3f5000 ---p 00000000 00:00 0                          [rollup]
Rss:               64512 kB
Pss:               46080 kB
Pss_Dirty:         40000 kB
Shared_Clean:      18000 kB
`
	m, err := parseSmapsRollup(strings.NewReader(sample))
	if err != nil || m.RSS != 64512<<10 || m.PSS != 46080<<10 {
		t.Errorf("parseSmapsRollup(sample) = %+v, %v; want RSS 64512 kB, PSS 46080 kB", m, err)
	}
	for name, text := range map[string]string{
		"no Pss":     "Rss: 10 kB\n",
		"not number": "Rss: ten kB\nPss: 5 kB\n",
		"empty":      "",
	} {
		if m, err := parseSmapsRollup(strings.NewReader(text)); err == nil {
			t.Errorf("%s: parseSmapsRollup(%q) = %+v, want an error", name, text, m)
		}
	}
	// This process's own: both there, and PSS at most RSS.
	m, err = memoryOf(os.Getpid())
	if err != nil || m.RSS <= 0 || m.PSS <= 0 || m.PSS > m.RSS {
		t.Errorf("memoryOf(self) = %+v, %v", m, err)
	}
}

func TestParseShowStat(t *testing.T) {
	// The head of HAProxy 2.6's "show stat", cut to the first 18 columns.
	const out = `# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,eresp,wretr,wredis,status
mcp,FRONTEND,,,0,3,4000,120,1,2,0,0,0,,,,,OPEN
toolscout,r1,0,0,0,2,,60,1,2,,0,,0,0,0,0,UP
toolscout,r2,0,0,0,2,,60,1,2,,0,,0,0,0,0,DOWN 1/2
toolscout,BACKEND,0,0,0,3,400,120,1,2,0,0,,0,0,0,0,UP
`
	st, err := parseShowStat(out)
	if err != nil || len(st) != 2 || st["r1"] != "UP" || st["r2"] != "DOWN 1/2" {
		t.Errorf("parseShowStat = %v, %v; want r1 UP, r2 DOWN 1/2", st, err)
	}
	if _, err := parseShowStat("# pxname,svname\ntoolscout,r1\n"); err == nil {
		t.Error("parseShowStat without a status column: no error")
	}
}

// fakeTransport answers every request with the replica and session
// headers it is given.
type fakeTransport struct{ replica, session string }

func (f *fakeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	h := http.Header{}
	h.Set(replicaHeader, f.replica)
	if f.session != "" {
		h.Set("Mcp-Session-Id", f.session)
	}
	return &http.Response{StatusCode: http.StatusOK, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
}

// TestRecorder: a session is pinned to the replica whose answer opened
// it; an answer from another replica is a violation.
func TestRecorder(t *testing.T) {
	ft := &fakeTransport{replica: "r2", session: "s1"}
	rec := newRecorder(ft)
	send := func(sid string) {
		req, _ := http.NewRequest(http.MethodPost, "http://lb/mcp", nil)
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		if _, err := rec.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
	}
	send("") // initialize: opens s1 on r2
	ft.session = ""
	send("s1")
	if got := rec.sessionReplica("s1"); got != "r2" || len(rec.violation) != 0 {
		t.Fatalf("session s1 on %q, violations %v; want r2, none", got, rec.violation)
	}
	ft.replica = "r3"
	send("s1")
	send("") // a stateless request: anywhere
	if len(rec.violation) != 1 || rec.served["r2"] != 2 || rec.served["r3"] != 2 {
		t.Errorf("violations %v, served %v; want 1 violation, 2 answers from r2 and from r3", rec.violation, rec.served)
	}
}

func TestPercentile(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		var out []time.Duration
		for _, x := range n {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	for _, tc := range []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"median of 4", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p99 of 100", ms(hundred...), 99, 99 * time.Millisecond},
		{"p100", ms(1, 2, 3), 100, 3 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := percentile(tc.sorted, tc.p); got != tc.want {
				t.Errorf("percentile(%v, %v) = %v, want %v", tc.sorted, tc.p, got, tc.want)
			}
		})
	}
}

func TestAnswersDisagree(t *testing.T) {
	a := newAnswers()
	a.add("open a ticket", "jira__create_issue")
	a.add("open a ticket", "jira__create_issue")
	a.add("page on call", "pagerduty__create_incident")
	if d := a.disagreements(); len(d) != 0 {
		t.Errorf("disagreements() = %v, want none", d)
	}
	a.add("page on call", "opsgenie__create_alert")
	if d := a.disagreements(); len(d) != 1 || !strings.Contains(d[0], "opsgenie__create_alert, pagerduty__create_incident") {
		t.Errorf("disagreements() = %v, want the query with both tools", d)
	}
}

func TestRecoveredAfter(t *testing.T) {
	kill := time.Now()
	cl := &client{losses: []loss{
		{replica: "r1", failed: kill.Add(-time.Second), recovered: kill.Add(-900 * time.Millisecond)},
		{replica: "r1", failed: kill.Add(10 * time.Millisecond), recovered: kill.Add(40 * time.Millisecond)},
	}}
	if d, ok := recoveredAfter(cl, kill); !ok || d != 40*time.Millisecond {
		t.Errorf("recoveredAfter = %v, %v; want 40ms, true (the loss before the kill does not count)", d, ok)
	}
	if _, ok := recoveredAfter(&client{}, kill); ok {
		t.Error("recoveredAfter of a client that lost nothing: ok")
	}
}

// TestHAProxyPortTaken starts HAProxy on a port another listener holds:
// startHAProxyAt must say errPortTaken (what makes startHAProxy pick
// another port), not that HAProxy failed for another reason, and
// startHAProxy with no port chosen must come up on a free one.
func TestHAProxyPortTaken(t *testing.T) {
	bin := needHAProxy(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	cfg := lbConfig{Listen: ln.Addr().String(), Socket: filepath.Join(dir, "haproxy.sock"), Inter: "100ms",
		Servers: []lbServer{{Name: "r1", Addr: "127.0.0.1:9"}}}
	h, err := startHAProxyAt(bin, dir, cfg)
	if err == nil {
		h.stop()
		t.Fatalf("HAProxy started on %s, which another listener holds", cfg.Listen)
	}
	if !errors.Is(err, errPortTaken) {
		t.Fatalf("HAProxy on a taken port: %v, want errPortTaken", err)
	}
	cfg.Listen = ""
	h, err = startHAProxy(bin, dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer h.stop()
	if h.cfg.Listen == "" || h.cfg.Listen == ln.Addr().String() {
		t.Fatalf("HAProxy's frontend: %q", h.cfg.Listen)
	}
	conn, err := net.Dial("tcp", h.cfg.Listen)
	if err != nil {
		t.Fatalf("HAProxy's frontend %s: %v", h.cfg.Listen, err)
	}
	conn.Close()
}
