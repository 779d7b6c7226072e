package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fixturePkg is the go-sdk's own conformance server, built from the
// module cache at the go-sdk version go.mod names.
const fixturePkg = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"

// fixtureDomain is the fixture's server name in toolscout's config.
const fixtureDomain = "conf"

// builtinScenarios need no fixture: they test the server's own protocol
// handling, run one by one against `serve` on the built-in catalog.
var builtinScenarios = []string{"server-initialize", "ping", "dns-rebinding-protection", "http-header-validation", "caching", "server-stateless"}

// clientAuthScenarios are the suite's client-side auth scenarios of the
// specification (its extensions left out: client credentials, DPoP,
// enterprise-managed authorization, workload identity), without auth/,
// run one by one with cmd/conformance/authclient as the client.
var clientAuthScenarios = []string{
	"metadata-default", "metadata-var1", "metadata-var2", "metadata-var3",
	"basic-cimd", "scope-from-www-authenticate", "scope-from-scopes-supported",
	"scope-omitted-when-undefined", "scope-step-up", "scope-retry-limit",
	"token-endpoint-auth-basic", "token-endpoint-auth-post", "token-endpoint-auth-none",
	"pre-registration", "2025-03-26-oauth-metadata-backcompat", "2025-03-26-oauth-endpoint-fallback",
	"resource-mismatch", "offline-access-scope", "offline-access-not-supported",
	"authorization-server-migration", "iss-supported", "iss-not-advertised",
	"iss-supported-missing", "iss-wrong-issuer", "iss-unexpected", "iss-normalized",
	"metadata-issuer-mismatch",
}

// clientAuthRuns are the suite's runs that cover clientAuthScenarios:
// each names a suite of the suite's CLI, whose scenarios run in parallel
// in one Node process (one process per scenario spent about 0.6 CPU s
// in Node's start, 27 times). Together they run each listed scenario
// once (auth: 14; backcompat: the two of 2025-03-26; draft: the 11
// introduced in 2026-07-28, and 6 that are not auth scenarios, whose
// results are saved outside auth/ and not read); a listed scenario none
// of them ran has no result, and fails the run. No --spec-version: with
// one, a scenario leaves out the checks of later revisions that it makes
// when run by name (sep-837-application-type-present, for one).
var clientAuthRuns = [][]string{
	{"--suite", "auth"},
	{"--suite", "backcompat"},
	{"--suite", "draft"},
}

// authClientPkg is the client the client-auth scenarios run.
const authClientPkg = "github.com/toolscout/toolscout/cmd/conformance/authclient"

// harness runs the suites.
type harness struct {
	o         options
	node, cli string // Node 22+ and the suite's entry point
	work      string
	fixture   string // the built fixture, once built
}

// suiteCommand finds the suite npm installed in dir and a Node new
// enough for it (22 or newer): the one pinned beside it (the npm package
// node, whose install script fetches the binary), else the one on PATH
// (an npm that does not run install scripts leaves the pinned one out).
func suiteCommand(dir string) (node, cli string, err error) {
	dir, err = filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	cli = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(cli); err != nil {
		return "", "", fmt.Errorf("the conformance suite is not installed in %s (%v): run npm ci --prefix %s, as make conformance does", dir, err, dir)
	}
	var tried []string
	candidates := []string{filepath.Join(dir, "node_modules", ".bin", "node")}
	if p, err := exec.LookPath("node"); err == nil {
		candidates = append(candidates, p)
	}
	for _, n := range candidates {
		v, err := nodeMajor(n)
		if err == nil && v >= 22 {
			return n, cli, nil
		}
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s: %v", n, err))
		} else {
			tried = append(tried, fmt.Sprintf("%s is Node %d", n, v))
		}
	}
	return "", "", fmt.Errorf("no Node 22 or newer for the suite (%s): run npm ci --prefix %s, which installs the node package pinned there", strings.Join(tried, "; "), dir)
}

// nodeMajor returns the major version of the Node at path.
func nodeMajor(path string) (int, error) {
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		return 0, err
	}
	v := strings.TrimSpace(string(out))
	major, err := strconv.Atoi(strings.TrimPrefix(strings.SplitN(v, ".", 2)[0], "v"))
	if err != nil {
		return 0, fmt.Errorf("--version printed %q", v)
	}
	return major, nil
}

// buildFixture builds the go-sdk's conformance server into work.
func buildFixture(ctx context.Context, work string) (string, error) {
	bin := filepath.Join(work, "everything-server")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, fixturePkg)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", fixturePkg, err, out)
	}
	return bin, nil
}

// runFixtureSuite runs one requirement set against the fixture directly
// and through toolscout in front of it.
func (h *harness) runFixtureSuite(ctx context.Context, suite string) (suiteResult, error) {
	dir := filepath.Join(h.work, suite)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return suiteResult{}, err
	}
	addr, err := freeAddr()
	if err != nil {
		return suiteResult{}, err
	}
	// 2025-11-25 has sessions; 2026-07-28 is stateless.
	stateless := suite != suite20251125
	fx, err := startProc(ctx, filepath.Join(dir, "fixture.log"), nil, h.fixture, "-http="+addr, "-stateless="+strconv.FormatBool(stateless))
	if err != nil {
		return suiteResult{}, err
	}
	defer fx.stop()
	fixtureURL := "http://" + addr + "/mcp"
	if err := waitListening(ctx, fx, addr); err != nil {
		return suiteResult{}, err
	}
	cfg := map[string]any{
		"mcpServers": map[string]any{fixtureDomain: map[string]any{"url": fixtureURL, "type": "http"}},
		"toolscout":  map[string]any{"expose": "eager"},
	}
	if h.o.toolNames != "" {
		cfg["toolscout"].(map[string]any)["tool_names"] = h.o.toolNames
	}
	data, _ := json.MarshalIndent(cfg, "", "  ")
	cfgFile := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfgFile, data, 0o600); err != nil {
		return suiteResult{}, err
	}
	ts, tsURL, err := h.startToolscout(ctx, dir, "--config", cfgFile)
	if err != nil {
		return suiteResult{}, err
	}
	defer ts.stop()
	if err := waitUpstreamListed(ctx, ts, tsURL); err != nil {
		return suiteResult{}, err
	}
	args := []string{"--requirements", suite}
	directOut, err := h.runSuite(ctx, fixtureURL, filepath.Join(dir, "direct"), args...)
	if err != nil {
		return suiteResult{}, err
	}
	throughOut, err := h.runSuite(ctx, tsURL, filepath.Join(dir, "through"), args...)
	if err != nil {
		return suiteResult{}, err
	}
	order, notScored := parseStdout(throughOut)
	dOrder, dNotScored := parseStdout(directOut)
	if len(order) == 0 && len(dOrder) == 0 {
		return suiteResult{}, fmt.Errorf("the suite printed no SUMMARY: see %s", dir)
	}
	if len(order) == 0 {
		order = dOrder
	}
	for k, v := range dNotScored {
		if _, ok := notScored[k]; !ok {
			notScored[k] = v
		}
	}
	direct, err := readResults(filepath.Join(dir, "direct"))
	if err != nil {
		return suiteResult{}, err
	}
	through, err := readResults(filepath.Join(dir, "through"))
	if err != nil {
		return suiteResult{}, err
	}
	return merge(suite, order, notScored, direct, through), nil
}

// runBuiltin runs the scenarios that need no fixture against serve on
// the built-in catalog.
func (h *harness) runBuiltin(ctx context.Context) (suiteResult, error) {
	dir := filepath.Join(h.work, suiteBuiltin)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return suiteResult{}, err
	}
	ts, url, err := h.startToolscout(ctx, dir)
	if err != nil {
		return suiteResult{}, err
	}
	defer ts.stop()
	out := filepath.Join(dir, "results")
	for _, s := range builtinScenarios {
		if _, err := h.runSuite(ctx, url, out, "--scenario", s); err != nil {
			return suiteResult{}, err
		}
	}
	through, err := readResults(out)
	if err != nil {
		return suiteResult{}, err
	}
	return merge(suiteBuiltin, builtinScenarios, nil, nil, through), nil
}

// runClientAuth runs the client-side auth scenarios with toolscout's
// upstream OAuth client as the client.
func (h *harness) runClientAuth(ctx context.Context) (suiteResult, error) {
	dir := filepath.Join(h.work, suiteClientAuth)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return suiteResult{}, err
	}
	bin := filepath.Join(dir, "authclient")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, authClientPkg).CombinedOutput(); err != nil {
		return suiteResult{}, fmt.Errorf("go build %s: %w\n%s", authClientPkg, err, out)
	}
	out := filepath.Join(dir, "results")
	for _, run := range clientAuthRuns {
		if _, err := h.runCLI(ctx, out, append([]string{"client", "--command", bin, "-o", out}, run...)...); err != nil {
			return suiteResult{}, err
		}
	}
	through, err := readClientAuthResults(out)
	if err != nil {
		return suiteResult{}, err
	}
	// The runs' suites hold scenarios left out of the list (none today):
	// only the listed ones are checked, as when each ran by name.
	for name := range through {
		if !slices.Contains(clientAuthScenarios, name) {
			delete(through, name)
		}
	}
	return merge(suiteClientAuth, clientAuthScenarios, nil, nil, through), nil
}

// runSuite runs `conformance server --url url -o out args...` and returns
// what it printed. A failing scenario exits non-zero: that is a result,
// not an error; only a suite that could not run at all is.
func (h *harness) runSuite(ctx context.Context, url, out string, args ...string) (string, error) {
	return h.runCLI(ctx, out, append([]string{"server", "--url", url, "-o", out}, args...)...)
}

// runCLI runs the suite's command line with args, its output appended
// to out.log, and returns what it printed.
func (h *harness) runCLI(ctx context.Context, out string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, h.node, append([]string{h.cli}, args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	log := filepath.Join(out + ".log")
	if werr := appendFile(log, buf.Bytes()); werr != nil {
		return "", werr
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) || ctx.Err() != nil {
		return "", fmt.Errorf("conformance %s: %v (output in %s)", strings.Join(args, " "), err, log)
	}
	return buf.String(), nil
}

func appendFile(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// urlLine is how `serve --http` says where it listens.
var urlLine = regexp.MustCompile(`over Streamable HTTP at (http://127\.0\.0\.1:\d+/mcp)`)

// startToolscout starts `serve --http 127.0.0.1:0` with its own data dir
// and the built-in embedder, and returns once /readyz answers 200.
func (h *harness) startToolscout(ctx context.Context, dir string, args ...string) (*proc, string, error) {
	found := make(chan string, 1)
	all := append([]string{"serve", "--http", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"), "--embedder", "builtin"}, args...)
	p, err := startProc(ctx, filepath.Join(dir, "toolscout.log"), func(line string) {
		if m := urlLine.FindStringSubmatch(line); m != nil {
			select {
			case found <- m[1]:
			default:
			}
		}
	}, h.o.bin, all...)
	if err != nil {
		return nil, "", err
	}
	var url string
	select {
	case url = <-found:
	case <-p.done:
		return nil, "", fmt.Errorf("toolscout exited before serving (%v): see %s", p.err, p.logPath)
	case <-ctx.Done():
		p.stop()
		return nil, "", fmt.Errorf("toolscout printed no address: %w (see %s)", ctx.Err(), p.logPath)
	}
	ready := strings.TrimSuffix(url, "/mcp") + "/readyz"
	for {
		if resp, err := http.Get(ready); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, url, nil
			}
		}
		select {
		case <-p.done:
			return nil, "", fmt.Errorf("toolscout exited before it was ready (%v): see %s", p.err, p.logPath)
		case <-ctx.Done():
			p.stop()
			return nil, "", fmt.Errorf("toolscout not ready: %w (see %s)", ctx.Err(), p.logPath)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitUpstreamListed waits until toolscout lists the fixture's tools
// (under whatever names): the suite's first scenarios must not race the
// upstream's connection.
func waitUpstreamListed(ctx context.Context, ts *proc, url string) error {
	c := mcp.NewClient(&mcp.Implementation{Name: "conformance-harness", Version: "1"}, nil)
	last := "no answer"
	for {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		ss, err := c.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err == nil {
			res, lerr := ss.ListTools(cctx, nil)
			ss.Close()
			err = lerr
			if lerr == nil {
				for _, t := range res.Tools {
					if strings.HasSuffix(t.Name, "test_simple_text") {
						cancel()
						return nil
					}
				}
				last = fmt.Sprintf("%d tools listed, none of the fixture's", len(res.Tools))
			}
		}
		cancel()
		if err != nil {
			last = err.Error()
		}
		select {
		case <-ts.done:
			return fmt.Errorf("toolscout exited (%v): see %s", ts.err, ts.logPath)
		case <-ctx.Done():
			return fmt.Errorf("toolscout did not list the fixture's tools (%s): see %s", last, ts.logPath)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitListening waits until the fixture accepts connections.
func waitListening(ctx context.Context, p *proc, addr string) error {
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("the fixture exited (%v): see %s", p.err, p.logPath)
		case <-ctx.Done():
			return fmt.Errorf("the fixture does not listen on %s: %w (see %s)", addr, ctx.Err(), p.logPath)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// proc is a child process in its own process group, its output in a log
// file.
type proc struct {
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error
}

// startProc starts name args in its own process group, its stdout and
// stderr to logPath; each line goes to onLine too when it is not nil.
func startProc(ctx context.Context, logPath string, onLine func(string), name string, args ...string) (*proc, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{cmd: cmd, logPath: logPath, done: make(chan struct{})}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if onLine != nil {
				onLine(sc.Text())
			}
		}
		io.Copy(io.Discard, pr) // a line over 1 MiB: keep the child unblocked
	}()
	go func() {
		p.err = cmd.Wait()
		pw.Close()
		<-copied
		logf.Close()
		close(p.done)
	}()
	go func() { // the run's deadline or a signal ends the child too
		select {
		case <-ctx.Done():
			p.stop()
		case <-p.done:
		}
	}()
	return p, nil
}

// stop ends the process group: SIGTERM, then SIGKILL after 5 s.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// freeAddr returns a loopback address with a port free now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
