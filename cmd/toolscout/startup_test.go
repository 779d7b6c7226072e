package main

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolscout/toolscout/server/gateway"
)

// firstList is what e2e_first_list.mjs prints.
type firstList struct {
	First    int      `json:"first"`
	FirstMs  int      `json:"firstMs"`
	Lists    []int    `json:"lists"`
	Names    []string `json:"names"`
	Notices  int      `json:"notices"`
	Progress []string `json:"progress"`
	Discover *struct {
		Ms     int `json:"ms"`
		Result struct {
			Results []struct{ Name string } `json:"results"`
		} `json:"result"`
	} `json:"discover"`
	Contents *struct {
		Domains []struct {
			Name      string `json:"name"`
			ToolCount int    `json:"tool_count"`
			Status    string `json:"status"`
		} `json:"domains"`
	} `json:"contents"`
	Call *struct {
		Ms     int    `json:"ms"`
		Error  string `json:"error"`
		Result struct {
			IsError bool                    `json:"isError"`
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	} `json:"call"`
}

// firstRun is one start of `bin serve args...` with env added to the
// environment, for runFirstLists.
type firstRun struct {
	env  []string
	args []string
}

// runFirstLists runs e2e_first_list.mjs against each run in turn, in one
// node process (one SDK load for them all), and returns what each got.
func runFirstLists(t *testing.T, bin string, runs ...firstRun) []firstList {
	t.Helper()
	type session struct {
		Env  map[string]string `json:"env"`
		Args []string          `json:"args"`
	}
	var sessions []session
	for _, r := range runs {
		s := session{Env: map[string]string{}, Args: append([]string{"serve"}, r.args...)}
		for _, kv := range r.env {
			k, v, _ := strings.Cut(kv, "=")
			s.Env[k] = v
		}
		sessions = append(sessions, s)
	}
	spec, err := json.Marshal(sessions)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]firstList, len(runs))
	outs := make([]any, len(runs))
	for i := range out {
		outs[i] = &out[i]
	}
	runScript(t, "e2e_first_list.mjs", bin, []string{"SETTLE_MS=1000", "SESSIONS=" + string(spec)}, nil, outs...)
	return out
}

// checkWhole fails unless every list the client got had want tools and
// no tools/list_changed came (the first list was whole already).
func checkWhole(t *testing.T, out firstList, want int) {
	t.Helper()
	if out.First != want {
		t.Errorf("first tools/list = %d tools, want all %d", out.First, want)
	}
	for _, n := range out.Lists {
		if n != want {
			t.Errorf("lists = %v, want each of the %d tools", out.Lists, want)
			break
		}
	}
	if out.Notices != 0 {
		t.Errorf("%d tools/list_changed after a whole first list (lists %v), want none", out.Notices, out.Lists)
	}
}

// TestFirstListTypeScript: a client that acts like Claude Desktop (the
// official TypeScript SDK, listing right after initialize and again on
// each list_changed) gets the whole list first, over stdio and over HTTP
// (connecting as the server starts), with a fresh and with an indexed
// data dir, in eager, core, auto and compact mode and with the eager
// fallback; no list in between is partial.
func TestFirstListTypeScript(t *testing.T) {
	t.Parallel()
	nodeClient(t)
	bin := buildBinary(t)
	const builtin = 302 + 3
	for _, tc := range []struct {
		name    string
		env     []string
		args    []string
		indexed bool
		want    int
	}{
		{"eager, fresh", nil, []string{"--expose", "eager"}, false, builtin},
		{"eager, indexed", nil, []string{"--expose", "eager"}, true, builtin},
		{"core, fresh", nil, []string{"--expose", "core", "--pin", "weather__*"}, false, 3 + 5},
		{"core, indexed", nil, []string{"--expose", "core", "--pin", "weather__*"}, true, 3 + 5},
		// The built-in catalog's tools cost about 25k tokens: auto lists
		// them under a larger budget, the meta-tools alone under the
		// default one.
		{"auto:30000, fresh", nil, []string{"--expose", "auto:30000"}, false, builtin},
		{"auto, indexed", nil, []string{"--expose", "auto"}, true, 3},
		{"compact, fresh", nil, []string{"--expose", "compact"}, false, builtin},
		// The index cannot load (Ollama is not there): every tool is
		// listed directly, from the first list on.
		{"fallback, fresh", []string{"TOOLSCOUT_FALLBACK=eager", "OLLAMA_HOST=127.0.0.1:9"}, []string{"--embedder", "ollama"}, false, builtin},
		{"fallback, indexed", []string{"TOOLSCOUT_FALLBACK=eager", "OLLAMA_HOST=127.0.0.1:9"}, []string{"--embedder", "ollama"}, true, builtin},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each case waits most of its time for the client's settle
			// (nothing more should come): several at once (go test's
			// -parallel, parallelWaiting here) cut the test's time.
			t.Parallel()
			// A data dir for each transport: indexed once, the HTTP
			// run's a copy made before either server starts (the same
			// files a second index of the same catalog wrote).
			data, overHTTP := t.TempDir(), t.TempDir()
			if tc.indexed {
				if out, err := exec.Command(bin, "index", "--data-dir", data, "--embedder", "builtin").CombinedOutput(); err != nil {
					t.Fatalf("index: %v\n%s", err, out)
				}
				copyTree(t, data, overHTTP)
			}
			args := append([]string{"--data-dir", data, "--log-level", "warn"}, tc.args...)
			if !slices.Contains(args, "--embedder") {
				args = append(args, "--embedder", "builtin")
			}
			// Over HTTP, a client that connects as the server starts;
			// the same node process (one SDK load) runs both clients at
			// once, the stdio one starting its own server.
			httpArgs := slices.Clone(args)
			httpArgs[1] = overHTTP
			url := startHTTP(t, bin, tc.env, httpArgs...)
			var viaStdio, viaHTTP firstList
			runScript(t, "e2e_first_list.mjs", bin, append(tc.env, "SETTLE_MS=1000", "HTTP_URL="+url), args, &viaStdio, &viaHTTP)
			t.Run("stdio", func(t *testing.T) { checkWhole(t, viaStdio, tc.want) })
			t.Run("http", func(t *testing.T) { checkWhole(t, viaHTTP, tc.want) })
		})
	}
}

// startHTTP starts bin serve --http on a free loopback port with args and
// returns its endpoint as soon as it accepts connections (before its
// index is loaded); the server is killed when the test ends.
func startHTTP(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, append([]string{"serve", "--http", addr}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return "http://" + addr + "/mcp"
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve --http %s does not accept connections after 10 s", addr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// gatewayConfig writes a config of the three npm reference servers and
// "slow", server-memory started SLOW_DELAY_MS milliseconds late (read
// from toolscout's environment), which gets connect_timeout seconds; a
// late server, 2 s late with a connect timeout of 1 s, never connects.
// slowConnectTimeout is the slow server's connect_timeout (seconds): it
// must connect within it, a node process that waits 1 or 2 s and then
// starts server-memory, beside the other reference servers and the late
// one's restarts. 20 s was not enough beside two busy loops (load
// average 22: the call phase of TestGatewayStartTypeScript got "no
// answer within 20s" in 1 run of 2); under the TypeScript client's 60 s
// request timeout, so that a call that waits still gets toolscout's
// answer.
const slowConnectTimeout = 50

func writeSlowConfig(t *testing.T, dir string, connectTimeout int, late bool) string {
	t.Helper()
	root, _ := filepath.Abs("../..")
	bin := func(name string) string { return filepath.Join(root, "node_modules", ".bin", name) }
	memory := filepath.Join(root, "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js")
	delayed := func(ms string, file string) map[string]any {
		return map[string]any{"command": "node", "args": []string{"-e", "setTimeout(() => import(" + jsString(memory) + "), Number(process.env.DELAY_MS))"},
			"env": map[string]string{"DELAY_MS": ms, "MEMORY_FILE_PATH": filepath.Join(dir, file)}}
	}
	slow := delayed("${SLOW_DELAY_MS}", "slow.jsonl")
	slow["connect_timeout"] = connectTimeout
	servers := map[string]any{
		"memory":     map[string]any{"command": bin("mcp-server-memory"), "env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "m.jsonl")}},
		"files":      map[string]any{"command": bin("mcp-server-filesystem"), "args": []string{dir}},
		"everything": map[string]any{"command": bin("mcp-server-everything")},
		"slow":       slow,
	}
	if late {
		l := delayed("2000", "late.jsonl")
		l["connect_timeout"] = 1
		servers["late"] = l
	}
	doc, err := json.Marshal(map[string]any{"mcpServers": servers, "toolscout": map[string]any{"expose": "eager"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "servers.json")
	if err := os.WriteFile(cfg, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// referenceServersClient skips (or, on CI, fails) a test that needs the
// TypeScript SDK client and the npm reference servers when they are
// missing, and returns the toolscout binary.
func referenceServersClient(t *testing.T) string {
	t.Helper()
	nodeClient(t)
	if _, err := os.Stat(filepath.Join("..", "..", "node_modules", ".bin", "mcp-server-everything")); err != nil {
		needNode(t, "npm packages are missing: run `npm ci` (make test does)")
	}
	return buildBinary(t)
}

// TestGatewayStartTypeScript: behind the gateway, in eager mode, with
// the npm reference servers and a server slow to start:
//   - fresh: the first list waits for every server (the slow one
//     connects: its connect_timeout is above its start time), with
//     progress, and is whole; a server slower than its own
//     connect_timeout is left out and marked unavailable;
//   - indexed: the first list and discover_tools answer at once from the
//     tools the servers listed last, the slow server marked connecting;
//   - a call of the slow server's tool made at once waits for it.
func TestGatewayStartTypeScript(t *testing.T) {
	t.Parallel()
	bin := referenceServersClient(t)
	dir := t.TempDir()
	cfg := writeSlowConfig(t, dir, slowConnectTimeout, true)
	data := filepath.Join(dir, "data")
	serve := []string{"--config", cfg, "--data-dir", data, "--embedder", "builtin", "--log-level", "warn"}
	// everything lists 17 tools to a client that declares sampling,
	// elicitation and roots, as toolscout does to its upstreams since it
	// relays those requests (issue 51); 14 otherwise.
	const all = 3 + 9 + 14 + 17 + 9 // meta-tools, memory, files, everything, slow

	// The three starts, one after the other, from one node process. The
	// first list's own wait: initialize waits (at most
	// --initialize-wait) for the same servers, so here it does not.
	runs := runFirstLists(t, bin,
		firstRun{[]string{"SLOW_DELAY_MS=2000"}, append(slices.Clip(serve), "--initialize-wait", "1ms")},
		firstRun{[]string{"SLOW_DELAY_MS=30000", "QUERY=create entities in the knowledge graph"}, serve},
		firstRun{[]string{"SLOW_DELAY_MS=2000", "CALL=slow__read_graph"}, serve})
	fresh, known, call := runs[0], runs[1], runs[2]
	checkWhole(t, fresh, all)
	if !slices.Contains(fresh.Names, "slow__read_graph") || slices.ContainsFunc(fresh.Names, func(n string) bool { return strings.HasPrefix(n, "late__") }) {
		t.Errorf("fresh start listed %v, want slow's tools and none of late's", fresh.Names)
	}
	if !slices.ContainsFunc(fresh.Progress, func(m string) bool { return strings.Contains(m, "still connecting") }) {
		t.Errorf("progress while the first list waited = %q, want the servers it waits for", fresh.Progress)
	}

	checkWhole(t, known, all)
	if known.Discover == nil || len(known.Discover.Result.Results) == 0 {
		t.Fatalf("discover_tools on an indexed start = %+v", known.Discover)
	}
	status := map[string]string{}
	for _, d := range known.Contents.Domains {
		status[d.Name] = d.Status
	}
	if !strings.HasPrefix(status["slow"], "connecting") || status["late"] == "" {
		t.Errorf("domains on an indexed start = %+v, want slow connecting (with its last tools) and late marked", known.Contents.Domains)
	}
	t.Logf("indexed start: first list after %d ms, discover_tools after %d ms", known.FirstMs, known.Discover.Ms)

	if call.Call == nil || call.Call.Error != "" || call.Call.Result.IsError {
		t.Errorf("a call of the slow server's tool at start = %+v, want it to wait for the server and run", call.Call)
	}
}

// TestConnectTimeoutPrecedence: a server's connect_timeout wins over
// --connect-timeout, which wins over the config's
// toolscout.connect_timeout, which wins over the default.
func TestConnectTimeoutPrecedence(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name      string
		config    string
		flag      string
		own, rest time.Duration
	}{
		{"defaults", `{"mcpServers": {"own": {"command": "x", "connect_timeout": 5}, "rest": {"command": "y"}}}`, "", 5 * time.Second, gateway.DefaultConnectTimeout},
		{"config", `{"mcpServers": {"own": {"command": "x", "connect_timeout": 5}, "rest": {"command": "y"}}, "toolscout": {"connect_timeout": 90}}`, "", 5 * time.Second, 90 * time.Second},
		{"flag over config", `{"mcpServers": {"own": {"command": "x", "connect_timeout": 5}, "rest": {"command": "y"}}, "toolscout": {"connect_timeout": 90}}`, "2m", 5 * time.Second, 2 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			os.WriteFile(path, []byte(tc.config), 0o644)
			g := globalFlags{configs: stringList{path}}
			g.connectTimeout.d = gateway.DefaultConnectTimeout
			if tc.flag != "" {
				if err := g.connectTimeout.Set(tc.flag); err != nil {
					t.Fatal(err)
				}
			}
			gc, err := g.gatewayConfig()
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]time.Duration{}
			for _, u := range gc.Upstreams {
				got[u.Domain] = u.ConnectTimeout
			}
			if got["own"] != tc.own || got["rest"] != tc.rest {
				t.Errorf("connect timeouts = %v, want own %s and rest %s", got, tc.own, tc.rest)
			}
		})
	}
	var f durationFlag
	for _, bad := range []string{"-1s", "0", "soon"} {
		if err := f.Set(bad); err == nil {
			t.Errorf("--connect-timeout %s accepted", bad)
		}
	}
}

// TestFirstCallsTypeScript: through the TypeScript SDK client, behind
// the gateway with the npm reference servers on a fresh data dir (the
// slow one 1 s late): enable_domain as the model's first call waits for
// the servers and lists the domain; a direct call of a real tool in meta
// mode answers with the execute_tool call to make, and runs nothing.
func TestFirstCallsTypeScript(t *testing.T) {
	t.Parallel()
	bin := referenceServersClient(t)
	dir := t.TempDir()
	cfg := writeSlowConfig(t, dir, slowConnectTimeout, false)
	serve := func(expose string) []string {
		return []string{"--config", cfg, "--data-dir", t.TempDir(), "--embedder", "builtin", "--log-level", "warn", "--expose", expose}
	}
	text := func(out firstList) string {
		if out.Call == nil || len(out.Call.Result.Content) == 0 {
			return ""
		}
		return out.Call.Result.Content[0].Text
	}

	runs := runFirstLists(t, bin,
		firstRun{[]string{"SLOW_DELAY_MS=1000", "CALL=enable_domain", `CALL_ARGS={"domain":"slow"}`}, serve("dynamic")},
		firstRun{[]string{"SLOW_DELAY_MS=0", "CALL=memory__create_entities", `CALL_ARGS={"entities":[]}`}, serve("meta")})
	enable, direct := runs[0], runs[1]
	if enable.Call == nil || enable.Call.Error != "" || enable.Call.Result.IsError || !strings.Contains(text(enable), "slow__read_graph") {
		t.Errorf("enable_domain as the first call = %+v, want the slow server's tools", enable.Call)
	}
	if got := enable.Lists[len(enable.Lists)-1]; got != 5+9 {
		t.Errorf("lists after enable_domain = %v, want the 5 tools of dynamic mode and slow's 9 last", enable.Lists)
	}

	want := `call execute_tool with {"arguments":{"entities":[]},"tool_name":"memory__create_entities"}`
	if direct.Call == nil || !direct.Call.Result.IsError || !strings.Contains(text(direct), want) {
		t.Errorf("a direct call in meta mode = %+v, want an error naming %s", direct.Call, want)
	}
}
