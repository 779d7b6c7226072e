package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/toolscout/toolscout/eval"
	"github.com/toolscout/toolscout/internal/synth"
)

// cluster is the data dir, the replicas serving it and HAProxy.
type cluster struct {
	o         options
	bin, work string
	data      string   // the data dir the replicas serve
	args      []string // what every toolscout command gets besides --data-dir
	catalog   string   // what the replicas serve, for the report
	tools     int
	queries   []string
	indexTime time.Duration

	replicas []*replica
	ready    []time.Duration // start to /readyz 200, per replica

	lb             *haproxy
	haproxyVersion string
	url            string // HAProxy's /mcp
	transport      *http.Transport

	newData     string        // the rebuilt copy (rebuild)
	rebuildTime time.Duration // cp -a and toolscout index
}

// newCluster writes the catalog, builds the data dir with `toolscout
// index` and starts the replicas on it.
func newCluster(ctx context.Context, o options, bin, work string) (*cluster, error) {
	c := &cluster{o: o, bin: bin, work: work, data: filepath.Join(work, "data"), args: []string{"--embedder", "builtin"}}
	if o.tools > 0 {
		cat, err := synth.Catalog(o.tools, o.seed)
		if err != nil {
			return nil, err
		}
		data, err := synth.CatalogJSON(cat)
		if err != nil {
			return nil, err
		}
		file := filepath.Join(work, "catalog.json")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			return nil, err
		}
		c.args = append(c.args, "--catalog", file)
		c.tools = cat.Len()
		c.catalog = fmt.Sprintf("a synthetic catalog, `synth.Catalog(%d, %d)`: %d tools in %d domains", o.tools, o.seed, c.tools, len(cat.Domains()))
		c.queries = synth.Queries(200, o.seed+1)
	} else {
		ds, err := eval.Builtin()
		if err != nil {
			return nil, err
		}
		c.tools = ds.Catalog.Len()
		c.catalog = fmt.Sprintf("the built-in catalog: %d tools in %d domains", c.tools, len(ds.Catalog.Domains()))
		for _, q := range ds.Queries {
			c.queries = append(c.queries, q.Query)
		}
	}
	progress("indexing %d tools into %s", c.tools, c.data)
	var err error
	if c.indexTime, err = c.index(c.data); err != nil {
		return nil, err
	}
	progress("starting %d replicas", o.replicas)
	c.replicas = make([]*replica, o.replicas)
	c.ready = make([]time.Duration, o.replicas)
	start := time.Now()
	for i := range c.replicas {
		if c.replicas[i], err = startReplica(bin, fmt.Sprintf("r%d", i+1), "127.0.0.1:0", c.serveArgs(c.data)); err != nil {
			c.close()
			return nil, err
		}
	}
	for i, r := range c.replicas {
		if err := r.waitReady(ctx, 60*time.Second); err != nil {
			c.close()
			return nil, err
		}
		c.ready[i] = time.Since(start)
	}
	return c, nil
}

// index runs `toolscout index` on a data dir and returns how long it took.
func (c *cluster) index(data string) (time.Duration, error) {
	start := time.Now()
	out, err := exec.Command(c.bin, append([]string{"index", "--data-dir", data}, c.args...)...).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("toolscout index --data-dir %s: %v\n%s", data, err, out)
	}
	return time.Since(start), nil
}

func (c *cluster) serveArgs(data string) []string {
	// On SIGTERM a replica answers /readyz with 503 and serves on for
	// three health checks (HAProxy marks it down after two failed ones),
	// as a replica behind a load balancer is run (docs/operations.md).
	return append([]string{"--data-dir", data, "--drain-delay", (3 * c.o.checkInter).String()}, c.args...)
}

// startLB starts HAProxy in front of the replicas and waits until it
// sees them all up.
func (c *cluster) startLB(bin string) error {
	cfg := lbConfig{Socket: filepath.Join(c.work, "haproxy.sock"), Inter: c.o.checkInter.String()}
	for _, r := range c.replicas {
		cfg.Servers = append(cfg.Servers, lbServer{Name: r.name, Addr: r.addr})
	}
	var err error
	if c.lb, err = startHAProxy(bin, c.work, cfg); err != nil {
		return err
	}
	c.url = "http://" + c.lb.cfg.Listen + "/mcp"
	c.transport = newTransport(c.o.statelessClients + c.o.sessions)
	_, err = c.lb.waitStatus(context.Background(), "UP", 15*time.Second, c.names()...)
	return err
}

func (c *cluster) names() []string {
	var out []string
	for _, r := range c.replicas {
		out = append(out, r.name)
	}
	return out
}

// close stops HAProxy and the replicas still running.
func (c *cluster) close() {
	if c.lb != nil {
		c.lb.stop()
	}
	if c.transport != nil {
		c.transport.CloseIdleConnections()
	}
	for _, r := range c.replicas {
		if r != nil && r.running() {
			r.stop(15 * time.Second)
		}
	}
}

// memory reads every replica's RSS and PSS.
func (c *cluster) memory() ([]memory, error) {
	var out []memory
	for _, r := range c.replicas {
		m, err := memoryOf(r.cmd.Process.Pid)
		if err != nil {
			return nil, fmt.Errorf("memory of replica %s: %w", r.name, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// phase is one stretch of load and what it measured.
type phase struct {
	name       string                    // for the errors in the report
	live       []string                  // replicas taking traffic at the start
	wall       time.Duration             // from the first task to the last answer
	by         map[string]*tally         // protocol → the clients' tallies summed
	served     map[string]map[string]int // protocol → replica → answered POSTs
	violations []string                  // session requests answered by another replica
	clients    []*client
	answers    *answers

	kill  *killed    // killPhase
	steps []rollStep // rollPhase
}

// runPhase connects the clients (the sessions first, one after another,
// so that round robin spreads them over the live replicas), runs their
// tasks for at least the duration least, with event (when not nil)
// running beside them from the start, and sums up what they saw.
func (c *cluster) runPhase(ctx context.Context, name string, live []string, least time.Duration, event func(*phase) error) (*phase, error) {
	p := &phase{name: name, live: live, answers: newAnswers(), by: map[string]*tally{}, served: map[string]map[string]int{}}
	defer func() {
		for _, cl := range p.clients {
			cl.close()
		}
	}()
	for _, proto := range []string{legacy, stateless} {
		n := c.o.sessions
		if proto == stateless {
			n = c.o.statelessClients
		}
		for range n {
			cl := newClient(proto, c.url, c.transport, c.o.timeout, p.answers)
			if err := cl.connect(ctx); err != nil {
				return nil, fmt.Errorf("set-up: a client at %s could not connect through HAProxy: %w", proto, err)
			}
			p.clients = append(p.clients, cl)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	timer := time.NewTimer(least)
	defer timer.Stop()
	for i, cl := range p.clients {
		wg.Go(func() { cl.run(ctx, stop, c.queries, i*len(c.queries)/len(p.clients)) })
	}
	var err error
	if event != nil {
		err = event(p)
	}
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
	close(stop)
	wg.Wait()
	p.wall = time.Since(start)
	for _, cl := range p.clients {
		sum := p.by[cl.proto]
		if sum == nil {
			sum = &tally{}
			p.by[cl.proto] = sum
		}
		sum.add(&cl.t)
		if p.served[cl.proto] == nil {
			p.served[cl.proto] = map[string]int{}
		}
		cl.rec.mu.Lock()
		for rep, n := range cl.rec.served {
			p.served[cl.proto][rep] += n
		}
		p.violations = append(p.violations, cl.rec.violation...)
		cl.rec.mu.Unlock()
	}
	for _, t := range p.by {
		slices.Sort(t.lat)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return p, err
}

// scalePhase runs the load with the first n replicas taking traffic (the
// others in maintenance in HAProxy).
func (c *cluster) scalePhase(ctx context.Context, n int) (*phase, error) {
	var live, off []string
	for i, r := range c.replicas {
		state := "ready"
		if i >= n {
			state = "maint"
			off = append(off, r.name)
		} else {
			live = append(live, r.name)
		}
		if err := c.lb.setState(r.name, state); err != nil {
			return nil, err
		}
	}
	if _, err := c.lb.waitStatus(ctx, "UP", 15*time.Second, live...); err != nil {
		return nil, err
	}
	if _, err := c.lb.waitStatus(ctx, "MAINT", 15*time.Second, off...); err != nil {
		return nil, err
	}
	return c.runPhase(ctx, fmt.Sprintf("%d taking traffic", n), live, c.o.phase, nil)
}

// killed is what the kill phase did.
type killed struct {
	victim    string
	at        time.Time
	sessions  []*client     // the sessions the victim held
	downAfter time.Duration // until HAProxy marked it down
	downErr   error
}

// killPhase runs the load on every replica and kills the one holding the
// most sessions with SIGKILL; then it starts that replica again.
func (c *cluster) killPhase(ctx context.Context) (*phase, error) {
	if err := c.allReady(ctx); err != nil {
		return nil, err
	}
	p, err := c.runPhase(ctx, "SIGKILL", c.names(), c.o.killAfter+c.o.afterKill, func(p *phase) error {
		select {
		case <-time.After(c.o.killAfter):
		case <-ctx.Done():
			return ctx.Err()
		}
		held := map[string][]*client{}
		for _, cl := range p.clients {
			if rep := cl.sessionReplica(); rep != "" {
				held[rep] = append(held[rep], cl)
			}
		}
		k := &killed{victim: c.replicas[0].name}
		for _, r := range c.replicas {
			if len(held[r.name]) > len(held[k.victim]) {
				k.victim = r.name
			}
		}
		k.sessions = held[k.victim]
		k.at = time.Now()
		c.replica(k.victim).kill()
		p.kill = k
		k.downAfter, k.downErr = c.lb.waitStatus(ctx, "DOWN", 10*time.Second, k.victim)
		return nil
	})
	if err != nil {
		return nil, err
	}
	progress("starting %s again", p.kill.victim)
	if _, err := c.restart(ctx, c.replica(p.kill.victim), c.data, false); err != nil {
		return nil, err
	}
	return p, nil
}

// allReady takes every replica out of maintenance and waits until
// HAProxy sees them up.
func (c *cluster) allReady(ctx context.Context) error {
	for _, r := range c.replicas {
		if err := c.lb.setState(r.name, "ready"); err != nil {
			return err
		}
	}
	_, err := c.lb.waitStatus(ctx, "UP", 15*time.Second, c.names()...)
	return err
}

func (c *cluster) replica(name string) *replica {
	for _, r := range c.replicas {
		if r.name == name {
			return r
		}
	}
	panic("no replica " + name)
}

// restart starts a replica that has exited again, on its address, over
// data, and waits until it is ready; then (when it was drained in
// HAProxy) it makes it ready there and waits until HAProxy sees it up.
// It returns how long each took.
func (c *cluster) restart(ctx context.Context, old *replica, data string, drained bool) (rollStep, error) {
	s := rollStep{replica: old.name}
	start := time.Now()
	r, err := startReplica(c.bin, old.name, old.addr, c.serveArgs(data))
	if err != nil {
		return s, err
	}
	for i := range c.replicas {
		if c.replicas[i] == old {
			c.replicas[i] = r
		}
	}
	if err := r.waitReady(ctx, 60*time.Second); err != nil {
		return s, err
	}
	s.ready = time.Since(start)
	if drained {
		if err := c.lb.setState(r.name, "ready"); err != nil {
			return s, err
		}
	}
	if _, err = c.lb.waitStatus(ctx, "UP", 15*time.Second, r.name); err != nil {
		return s, err
	}
	s.up = time.Since(start)
	return s, nil
}

// rebuild copies the data dir (cp -a keeps the times the vector
// snapshots are checked by) and runs `toolscout index` on the copy: how
// a new index is built while read-only replicas serve the old one.
func (c *cluster) rebuild() error {
	c.newData = c.data + ".new"
	// A copy left by an earlier run in a kept -work folder would take
	// the new one inside it.
	if err := os.RemoveAll(c.newData); err != nil {
		return err
	}
	start := time.Now()
	if out, err := exec.Command("cp", "-a", c.data, c.newData).CombinedOutput(); err != nil {
		return fmt.Errorf("cp -a %s %s: %v\n%s", c.data, c.newData, err, out)
	}
	if _, err := c.index(c.newData); err != nil {
		return err
	}
	c.rebuildTime = time.Since(start)
	return nil
}

// rollStep is one replica's restart in the rolling restart.
type rollStep struct {
	replica string
	exited  time.Duration // SIGTERM to exit (the drain)
	exitErr error         // it did not exit by itself, or not with status 0
	ready   time.Duration // start to /readyz 200
	up      time.Duration // start to UP in HAProxy
}

// lbDrainWait is how long a rolling restart that drains a replica in
// HAProxy first waits before SIGTERM: HAProxy sends it no new request
// from the moment the command returns, and the requests it already sent
// reach the replica meanwhile.
const lbDrainWait = 200 * time.Millisecond

// rollPhase runs the load while each replica in turn is stopped with
// SIGTERM (it drains) and started again over data. With lbDrain, the
// replica is first set to drain in HAProxy (no new requests but those of
// its sessions), and set ready again once it answers /readyz.
func (c *cluster) rollPhase(ctx context.Context, data string, lbDrain bool) (*phase, error) {
	if err := c.allReady(ctx); err != nil {
		return nil, err
	}
	name := "rolling restart"
	if lbDrain {
		name += ", drained in HAProxy first"
	}
	return c.runPhase(ctx, name, c.names(), c.o.phase, func(p *phase) error {
		// Load on the whole cluster first, and after the last restart.
		pause := func(d time.Duration) error {
			select {
			case <-time.After(d):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := pause(time.Second); err != nil {
			return err
		}
		for _, r := range slices.Clone(c.replicas) {
			if lbDrain {
				if err := c.lb.setState(r.name, "drain"); err != nil {
					return err
				}
				if err := pause(lbDrainWait); err != nil {
					return err
				}
			}
			exited, exitErr := r.stop(30 * time.Second)
			s, err := c.restart(ctx, r, data, lbDrain)
			s.exited, s.exitErr = exited, exitErr
			p.steps = append(p.steps, s)
			if err != nil {
				return err
			}
		}
		return pause(time.Second)
	})
}
