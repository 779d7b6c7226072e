// Command clustertest runs toolscout as a cluster behind a real load
// balancer and checks that it holds up: it builds one data dir with
// `toolscout index`, starts N `toolscout serve --http --read-only`
// replicas on loopback ports over it and HAProxy in front of them
// (health checks on /readyz; requests without Mcp-Session-Id round
// robin; 2025-11-25 sessions pinned by Mcp-Session-Id in a stick table),
// and drives bounded load through HAProxy with go-sdk clients of both
// protocol generations: 2026-07-28 (stateless) and 2025-11-25 (sessions).
//
// It measures throughput and latency with 1, 2, ... N replicas taking
// traffic, each replica's memory (RSS and PSS), then kills one replica
// with SIGKILL under load, and finally rolls every replica over to a
// rebuilt copy of the data dir, one at a time (SIGTERM, drain, start
// again), under load. It prints a Markdown report and exits 1 when a
// check fails: a stateless request that failed twice, a session on a
// surviving replica that failed, a session on the killed replica that
// did not come back, a wrong answer, replicas that disagree.
//
//	go run ./cmd/clustertest -bin bin/toolscout
//
// `make cluster-test` runs it (installing HAProxy with apt-get when it is
// missing).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// options are the command's flags.
type options struct {
	bin, haproxy, work string
	tools              int
	seed               int64
	replicas           int
	statelessClients   int
	sessions           int
	phase              time.Duration
	killAfter          time.Duration
	afterKill          time.Duration
	timeout            time.Duration
	recoverWithin      time.Duration
	checkInter         time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "", "the toolscout binary (default: go build ./cmd/toolscout into the scratch folder; run from the module root)")
	flag.StringVar(&o.haproxy, "haproxy", "haproxy", "the HAProxy binary (Debian package haproxy; /usr/sbin/haproxy is tried when it is not on PATH)")
	flag.StringVar(&o.work, "work", "", "scratch folder, kept afterwards (default: a temporary one, removed)")
	flag.IntVar(&o.tools, "tools", 0, "index a seeded synthetic catalog of this many tools instead of the built-in one (0)")
	flag.Int64Var(&o.seed, "seed", 1, "seed of the synthetic catalog and its queries")
	flag.IntVar(&o.replicas, "replicas", 3, "replicas behind HAProxy (at least 2: one is killed)")
	flag.IntVar(&o.statelessClients, "stateless", 4, "clients at protocol 2026-07-28 (stateless), each running tasks one after another")
	flag.IntVar(&o.sessions, "sessions", 6, "clients at protocol 2025-11-25, each with a session")
	flag.DurationVar(&o.phase, "phase", 4*time.Second, "load per replica count (1, 2, ... replicas taking traffic); a rolling restart lasts at least this long too")
	flag.DurationVar(&o.killAfter, "kill-after", 2*time.Second, "load before a replica is killed with SIGKILL")
	flag.DurationVar(&o.afterKill, "after-kill", 5*time.Second, "load after the kill")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Second, "bound of each request (and of each connect)")
	flag.DurationVar(&o.recoverWithin, "recover-within", 10*time.Second, "check: the killed replica's sessions answer again (re-initialized elsewhere) within this long of the kill")
	flag.DurationVar(&o.checkInter, "check-interval", 500*time.Millisecond, "HAProxy's health check interval (a replica is down after 2 failed checks, up after 2 good ones)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: clustertest [flags]\n\nRuns toolscout replicas (serve --http --read-only, one data dir) behind HAProxy,\ndrives load with MCP clients of protocol 2026-07-28 (stateless) and\n2025-11-25 (sessions), kills a replica and rolls them all over to a rebuilt\nindex; prints a Markdown report and exits 1 when a check fails.\n\nFlags:\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "clustertest: unexpected argument %q (flags only; see -help)\n", flag.Arg(0))
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	failed, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "clustertest:", err)
		os.Exit(1)
	}
	if failed > 0 {
		fmt.Fprintf(os.Stderr, "clustertest: %d check(s) failed\n", failed)
		os.Exit(1)
	}
}

func (o options) validate() error {
	switch {
	case o.replicas < 2:
		return fmt.Errorf("-replicas %d: want at least 2 (one is killed)", o.replicas)
	case o.statelessClients < 1 || o.sessions < 1:
		return fmt.Errorf("-stateless %d, -sessions %d: want at least 1 client of each protocol", o.statelessClients, o.sessions)
	case o.tools < 0:
		return fmt.Errorf("-tools %d: want 0 (the built-in catalog) or more", o.tools)
	case o.phase <= 0 || o.killAfter <= 0 || o.afterKill <= 0 || o.timeout <= 0 || o.recoverWithin <= 0 || o.checkInter <= 0:
		return errors.New("-phase, -kill-after, -after-kill, -timeout, -recover-within and -check-interval must be above 0")
	}
	return nil
}

// run sets the cluster up, runs the phases, prints the report and
// returns how many checks failed; an error is a set-up failure.
func run(ctx context.Context, o options) (int, error) {
	if err := o.validate(); err != nil {
		return 0, err
	}
	work := o.work
	if work == "" {
		dir, err := os.MkdirTemp("", "clustertest-")
		if err != nil {
			return 0, err
		}
		defer os.RemoveAll(dir)
		work = dir
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		return 0, err
	}
	work, _ = filepath.Abs(work)
	haproxyBin, haproxyVersion, err := findHAProxy(o.haproxy)
	if err != nil {
		return 0, err
	}
	bin := o.bin
	if bin == "" {
		bin = filepath.Join(work, "toolscout")
		progress("building toolscout")
		if out, err := exec.Command("go", "build", "-o", bin, "./cmd/toolscout").CombinedOutput(); err != nil {
			return 0, fmt.Errorf("go build ./cmd/toolscout (run from the module root, or pass -bin): %v\n%s", err, out)
		}
	} else if bin, err = filepath.Abs(bin); err != nil {
		return 0, err
	}
	c, err := newCluster(ctx, o, bin, work)
	if err != nil {
		return 0, err
	}
	defer c.close()
	c.haproxyVersion = haproxyVersion
	if err := c.startLB(haproxyBin); err != nil {
		return 0, err
	}
	rep := &report{o: o, c: c}
	for n := 1; n <= o.replicas; n++ {
		progress("load with %d of %d replicas taking traffic", n, o.replicas)
		p, err := c.scalePhase(ctx, n)
		if err != nil {
			return 0, err
		}
		rep.scale = append(rep.scale, p)
	}
	if rep.memory, err = c.memory(); err != nil {
		return 0, err
	}
	progress("load, and a replica killed with SIGKILL after %s", o.killAfter)
	if rep.kill, err = c.killPhase(ctx); err != nil {
		return 0, err
	}
	progress("rebuilding the index in a copy of the data dir")
	if err := c.rebuild(); err != nil {
		return 0, err
	}
	progress("load, and every replica restarted in turn on the new copy (SIGTERM)")
	if rep.roll, err = c.rollPhase(ctx, c.newData, false); err != nil {
		return 0, err
	}
	progress("load, and every replica restarted in turn on the first data dir (drained in HAProxy, then SIGTERM)")
	if rep.rollBack, err = c.rollPhase(ctx, c.data, true); err != nil {
		return 0, err
	}
	return rep.print(os.Stdout), nil
}

// findHAProxy finds the HAProxy binary and its version line.
func findHAProxy(name string) (string, string, error) {
	path, err := exec.LookPath(name)
	if err != nil && name == "haproxy" {
		path, err = exec.LookPath("/usr/sbin/haproxy")
	}
	if err != nil {
		return "", "", fmt.Errorf("HAProxy not found (%v): install the Debian package haproxy (make cluster-test does) or pass -haproxy PATH", err)
	}
	out, err := exec.Command(path, "-v").Output()
	if err != nil {
		return "", "", fmt.Errorf("%s -v: %w", path, err)
	}
	// "HAProxy version 2.6.12-1+deb12u3 2025/10/03 - https://haproxy.org/"
	version := strings.Fields(string(out))
	if len(version) < 3 || version[1] != "version" {
		return "", "", fmt.Errorf("%s -v says %q: not HAProxy?", path, out)
	}
	return path, "HAProxy " + version[2], nil
}

// progress says on stderr what the test is doing.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "clustertest: "+format+"\n", args...)
}

// newTransport is the clients' shared HTTP transport: enough idle
// connections to HAProxy for every client.
func newTransport(clients int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 4 * clients
	t.MaxIdleConnsPerHost = 4 * clients
	return t
}
