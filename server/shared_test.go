package server

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/internal/proctest"
	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server/gateway"
)

// Fixtures the package's tests share because they are costly to make
// and no test changes them (issue 47: the package's CPU under -race on
// two cores). Each is made by the first test that asks for it and
// closed by TestMain once every test has run (closeShared).

// builtinShared is the built-in catalog indexed once, keywords and the
// built-in embedder's vectors (as serve indexes it by default), in
// memory, and the token report of a server over it.
var builtinShared struct {
	once sync.Once
	cat  *index.Catalog
	live *search.Live
	err  error

	reportOnce sync.Once
	report     *TokenReport
	reportErr  error
}

// builtinLive returns the built-in catalog and the package's live index
// of it. The tests that use it only read it: each makes its own Server
// over it.
func builtinLive(t *testing.T) (*index.Catalog, *search.Live) {
	t.Helper()
	b := &builtinShared
	b.once.Do(func() {
		if b.cat, b.err = index.BuiltinCatalog(); b.err != nil {
			return
		}
		st, err := store.Open("")
		if err != nil {
			b.err = err
			return
		}
		b.live, _, b.err = search.Open(context.Background(), search.LiveOptions{Store: st, Embedder: embed.NewBuiltin(embed.BuiltinOptions{})}, b.cat.Specs())
	})
	if b.err != nil {
		t.Fatalf("index the built-in catalog: %v", b.err)
	}
	return b.cat, b.live
}

// builtinTokenReport is CountTokens of a server in meta mode over the
// built-in catalog (what `toolscout tokens` reports), counted once:
// TestTokenBudget and TestSchemaAnswerBudget check different figures of
// the same report, and counting it is most of their CPU (every
// get_tool_schema answer of the catalog through the tokenizer).
func builtinTokenReport(t *testing.T) *TokenReport {
	t.Helper()
	_, live := builtinLive(t)
	b := &builtinShared
	b.reportOnce.Do(func() {
		b.report, b.reportErr = New(Options{Live: live}).CountTokens(context.Background(), "create an issue for a bug")
	})
	if b.reportErr != nil {
		t.Fatalf("count the tokens of the built-in catalog: %v", b.reportErr)
	}
	return b.report
}

// referenceShared is a gateway to the three npm reference servers
// (memory, everything, filesystem) and the live index that follows it,
// for the tests that only list, search and read schemas behind them:
// each of those started its own three node servers.
var referenceShared struct {
	once   sync.Once
	gw     *gateway.Gateway
	live   *search.Live
	root   string // the filesystem server's root; the memory server's file is in it
	cancel context.CancelFunc
	err    error
}

// referenceGateway returns a server of exp over the package's gateway to
// the reference servers, and a client of it, once their tools are
// indexed. A test must not change what another test there sees: it
// writes only what no other test lists or reads (an entity or a file of
// its own), and sets no approval or pin.
func referenceGateway(t *testing.T, exp Exposure) *gatewayEnv {
	t.Helper()
	bins := []string{npmBin(t, "mcp-server-memory"), npmBin(t, "mcp-server-everything"), npmBin(t, "mcp-server-filesystem")}
	r := &referenceShared
	r.once.Do(func() {
		if r.root, r.err = os.MkdirTemp("", "toolscout-reference-"); r.err != nil {
			return
		}
		var ctx context.Context
		ctx, r.cancel = context.WithCancel(context.Background())
		r.gw, r.live, r.err = openGateway(ctx, gateway.Options{Upstreams: []gateway.UpstreamConfig{
			{Domain: "memory", Command: bins[0], Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(r.root, "memory.jsonl")}},
			{Domain: "everything", Command: bins[1]},
			{Domain: "filesystem", Command: bins[2], Args: []string{r.root}},
		}, MinBackoff: 100 * time.Millisecond, MaxBackoff: 500 * time.Millisecond})
		if r.err == nil {
			r.gw.Start(ctx)
		}
	})
	if r.err != nil {
		t.Fatalf("start the reference servers' gateway: %v", r.err)
	}
	env := serveGateway(t, t.Context(), r.gw, New(Options{Live: r.live, Executor: r.gw, Expose: exp}))
	waitFor(t, "tools of all three reference servers", func() bool {
		return env.hasTool("memory__create_entities") && env.hasTool("everything__echo") && env.hasTool("filesystem__write_file")
	})
	return env
}

// everythingShared is the everything server over Streamable HTTP, one
// process for the tests that connect to it by URL: each of its sessions
// is a server of its own (the state its tools keep, subscriptions and
// updates, is by session id), and each test's gateway opens its own
// session.
var everythingShared struct {
	once sync.Once
	cmd  *exec.Cmd
	url  string
	err  error
}

// everythingHTTP returns the endpoint of the package's everything server
// over Streamable HTTP, started by the first test that asks and listening.
func everythingHTTP(t *testing.T) string {
	t.Helper()
	bin := npmBin(t, "mcp-server-everything")
	e := &everythingShared
	e.once.Do(func() {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			e.err = err
			return
		}
		addr := l.Addr().String()
		l.Close()
		e.cmd = exec.Command(bin, "streamableHttp")
		e.cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
		proctest.DieWithParent(e.cmd) // closeShared does not run when the binary is killed
		if e.err = e.cmd.Start(); e.err != nil {
			e.cmd = nil
			return
		}
		e.url = "http://" + addr + "/mcp"
		deadline := time.Now().Add(30 * time.Second)
		for {
			c, err := net.Dial("tcp", addr)
			if err == nil {
				c.Close()
				return
			}
			if time.Now().After(deadline) {
				e.err = fmt.Errorf("the everything server over HTTP does not listen on %s after 30 s: %w", addr, err)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	if e.err != nil {
		t.Fatalf("start the everything server over HTTP: %v", e.err)
	}
	return e.url
}

// closeShared closes the shared fixtures that were made.
func closeShared() {
	if builtinShared.live != nil {
		builtinShared.live.Close()
	}
	if r := &referenceShared; r.gw != nil {
		r.gw.Close()
		r.live.Close()
		r.cancel()
		os.RemoveAll(r.root)
	}
	if e := &everythingShared; e.cmd != nil {
		e.cmd.Process.Kill()
		e.cmd.Wait()
	}
}
