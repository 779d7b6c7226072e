package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// report is everything measured, printed as Markdown with the checks.
type report struct {
	o      options
	c      *cluster
	scale  []*phase // 1, 2, ... replicas taking traffic
	memory []memory // per replica, after the scale phases
	kill   *phase
	roll   *phase // SIGTERM, onto the rebuilt copy
	// rollBack: drained in HAProxy first, then SIGTERM, back onto the
	// first data dir
	rollBack *phase
}

// check is one pass criterion.
type check struct {
	ok   bool
	what string
}

// print writes the report and returns how many checks failed.
func (r *report) print(w io.Writer) int {
	c, o := r.c, r.o
	fmt.Fprintf(w, "%d replicas of `toolscout serve --http --read-only` over one data dir (%s, built by `toolscout index --embedder builtin` in %s), behind %s on loopback; the replicas, started at once, were ready (start to `/readyz` 200) after %s.\n\n",
		o.replicas, c.catalog, secs(c.indexTime), c.haproxyVersion, joinDurations(c.ready))
	fmt.Fprintf(w, "Load: %d clients at 2026-07-28 (stateless) and %d at 2025-11-25 (a session each), go-sdk, each running tasks back to back: `discover_tools` (a query, limit 5) → `get_tool_schema` of the best tool → `execute_tool` with its first example (a catalog tool: the expected answer is the tool error that says it cannot run here). Every request is bounded by %s; a request that fails is tried once more (a 2025-11-25 client first initializes a new session). Latency is a request's, from its first attempt to its answer; \"answered by\" counts the POSTs each replica answered (connects included), from a header HAProxy adds.\n\n",
		o.statelessClients, o.sessions, o.timeout)

	fmt.Fprintf(w, "**Replicas taking traffic** (%s of load each; the others in maintenance in HAProxy):\n\n", o.phase)
	tableHead(w)
	for _, p := range r.scale {
		r.rows(w, fmt.Sprint(len(p.live)), p)
	}

	var rss, pss int64
	fmt.Fprintf(w, "\n**Memory** after that load (`/proc/PID/smaps_rollup`): ")
	for i, m := range r.memory {
		rss, pss = rss+m.RSS, pss+m.PSS
		fmt.Fprintf(w, "%s RSS %s, PSS %s; ", c.replicas[i].name, mb(m.RSS), mb(m.PSS))
	}
	fmt.Fprintf(w, "summed PSS %s, %.2f× one replica's RSS (%s).\n\n", mb(pss), float64(pss)/float64(r.memory[0].RSS), mb(r.memory[0].RSS))

	k := r.kill.kill
	fmt.Fprintf(w, "**SIGKILL under load**: %s, holding %d of the %d sessions, was killed after %s of load on all %d replicas; HAProxy marked it DOWN %s after the kill (checks every %s, 2 to fall); the load went on for %s.\n\n",
		k.victim, len(k.sessions), o.sessions, o.killAfter, o.replicas, secs(k.downAfter), o.checkInter, o.afterKill)
	tableHead(w)
	r.rows(w, fmt.Sprintf("%d → %d", o.replicas, o.replicas-1), r.kill)
	var back []time.Duration
	notBack := 0
	for _, cl := range k.sessions {
		if d, ok := recoveredAfter(cl, k.at); ok {
			back = append(back, d)
		} else {
			notBack++
		}
	}
	slices.Sort(back)
	fmt.Fprintf(w, "\nThe %d sessions on %s were initialized again on another replica and answered again %s after the kill", len(k.sessions), k.victim, joinDurations(back))
	if notBack > 0 {
		fmt.Fprintf(w, "; %d did not answer again", notBack)
	}
	fmt.Fprintf(w, ". %d stateless requests failed at the first try; %d of them failed again at the retry.\n\n", r.kill.by[stateless].firstFailed, r.kill.by[stateless].failed)

	fmt.Fprintf(w, "**Rolling restart onto a rebuilt index** under load: `cp -a data data.new` and `toolscout index --data-dir data.new` took %s; then each replica in turn got SIGTERM (it drains), was started again on `data.new` on its port, and the next one followed once HAProxy had it UP again.\n\n", secs(c.rebuildTime))
	r.rolling(w, r.roll)
	fmt.Fprintf(w, "**Rolling restart, drained in HAProxy first**, back onto `data`: each replica in turn was set to `drain` on HAProxy's runtime API (`set server %s/rN state drain`: no new requests but its sessions'), got SIGTERM %s later, was started again, and set `ready` once it answered `/readyz`.\n\n", backend, lbDrainWait)
	r.rolling(w, r.rollBack)

	checks := r.checks()
	failed := 0
	fmt.Fprintln(w, "\nChecks:")
	fmt.Fprintln(w)
	for _, ch := range checks {
		mark := "PASS"
		if !ch.ok {
			mark = "FAIL"
			failed++
		}
		fmt.Fprintf(w, "- %s %s\n", mark, ch.what)
	}
	var seen []string
	for _, p := range r.phases() {
		for _, proto := range protocols {
			for _, e := range p.by[proto].errors {
				seen = append(seen, p.name+": "+e)
			}
		}
	}
	if len(seen) > 0 {
		fmt.Fprintln(w, "\nErrors seen (the first 5 per phase and protocol):")
		fmt.Fprintln(w)
		for _, e := range seen {
			fmt.Fprintf(w, "- %s\n", e)
		}
	}
	return failed
}

func (r *report) phases() []*phase {
	return append(slices.Clone(r.scale), r.kill, r.roll, r.rollBack)
}

// rolling writes a rolling restart's tables.
func (r *report) rolling(w io.Writer, p *phase) {
	fmt.Fprintln(w, "| replica | SIGTERM to exit | start to ready | start to UP in HAProxy |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, s := range p.steps {
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", s.replica, secs(s.exited), secs(s.ready), secs(s.up))
	}
	fmt.Fprintln(w)
	tableHead(w)
	r.rows(w, "rolling", p)
	var back []time.Duration
	for _, cl := range p.clients {
		for _, l := range cl.losses {
			back = append(back, l.recovered.Sub(l.failed))
		}
	}
	slices.Sort(back)
	fmt.Fprintf(w, "\nClients whose request failed at the first try and was answered at the retry (a 2025-11-25 client on a new session): %d", len(back))
	if len(back) > 0 {
		fmt.Fprintf(w, ", first failure to answer: median %s, longest %s", secs(back[len(back)/2]), secs(back[len(back)-1]))
	}
	fmt.Fprintln(w, ".")
	fmt.Fprintln(w)
}

// tableHead writes the head of a table of rows.
func tableHead(w io.Writer) {
	fmt.Fprintln(w, "| replicas | protocol | requests | req/s | p50 ms | p99 ms | failed, first try | failed after retry | answered by |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|---|")
}

// rows writes a phase's two table rows, one per protocol.
func (r *report) rows(w io.Writer, label string, p *phase) {
	for _, proto := range protocols {
		t := p.by[proto]
		fmt.Fprintf(w, "| %s | %s | %d | %.0f | %s | %s | %d | %d | %s |\n", label, proto, t.requests,
			float64(t.requests)/p.wall.Seconds(), ms(percentile(t.lat, 50)), ms(percentile(t.lat, 99)),
			t.firstFailed, t.failed, servedBy(p.served[proto]))
	}
}

// checks evaluates the pass criteria.
func (r *report) checks() []check {
	var out []check
	add := func(ok bool, format string, args ...any) {
		out = append(out, check{ok, fmt.Sprintf(format, args...)})
	}
	failed, wrong := 0, 0
	var disagree, violations []string
	for _, p := range r.scale {
		for _, t := range p.by {
			failed += t.firstFailed
		}
	}
	for _, p := range r.phases() {
		for _, t := range p.by {
			wrong += t.wrong
		}
		disagree = append(disagree, p.answers.disagreements()...)
		violations = append(violations, p.violations...)
	}
	add(failed == 0, "no request failed while every replica taking traffic ran (%d failed)", failed)
	add(wrong == 0, "every answer was the expected one (%d were not)", wrong)
	add(len(disagree) == 0, "replicas of one index agree: one best tool per query (%s)", orNone(disagree))
	add(len(violations) == 0, "every request of a 2025-11-25 session was answered by the replica that opened it (%s)", orNone(violations))
	for _, p := range r.scale {
		got := slices.Sorted(maps.Keys(p.served[stateless]))
		add(slices.Equal(got, p.live), "with %d taking traffic, stateless requests went to each of them: %s (answered by %s)", len(p.live), strings.Join(p.live, ", "), servedBy(p.served[stateless]))
	}

	k := r.kill.kill
	add(r.kill.by[stateless].failed == 0, "SIGKILL: no stateless request failed after one retry (%d failed at the first try, %d after the retry)", r.kill.by[stateless].firstFailed, r.kill.by[stateless].failed)
	add(k.downErr == nil, "SIGKILL: HAProxy marked %s down (%s)", k.victim, errText(k.downErr))
	var late []string
	for _, cl := range k.sessions {
		if d, ok := recoveredAfter(cl, k.at); !ok || d > r.o.recoverWithin {
			late = append(late, fmt.Sprintf("a session answered again after %s (ok %v)", secs(d), ok))
		}
	}
	add(len(k.sessions) > 0 && len(late) == 0, "SIGKILL: each of the %d sessions on %s was initialized again and answered within %s of the kill (%s)", len(k.sessions), k.victim, r.o.recoverWithin, orNone(late))
	others := 0
	for _, cl := range r.kill.clients {
		if cl.proto == legacy && !slices.Contains(k.sessions, cl) {
			others += cl.t.firstFailed
		}
	}
	add(others == 0, "SIGKILL: sessions on the other replicas lost nothing (%d failed requests)", others)
	add(r.kill.by[legacy].failed == 0, "SIGKILL: no 2025-11-25 request failed after initializing again (%d failed)", r.kill.by[legacy].failed)

	for _, roll := range []struct {
		name string
		p    *phase
	}{{"rolling restart", r.roll}, {"rolling restart, drained in HAProxy first", r.rollBack}} {
		var badExit []string
		for _, s := range roll.p.steps {
			if s.exitErr != nil {
				badExit = append(badExit, s.exitErr.Error())
			}
		}
		add(len(badExit) == 0 && len(roll.p.steps) == r.o.replicas, "%s: every replica drained and exited with status 0 on SIGTERM (%s)", roll.name, orNone(badExit))
		for _, proto := range protocols {
			t := roll.p.by[proto]
			add(t.failed == 0, "%s: no %s request failed after one retry (%d failed at the first try, %d after the retry)", roll.name, proto, t.firstFailed, t.failed)
		}
	}
	// Drained in HAProxy first, a replica gets no new stateless request
	// by the time it stops: not even a first try may fail.
	t := r.rollBack.by[stateless]
	add(t.firstFailed == 0, "rolling restart, drained in HAProxy first: no stateless request failed at all (%d failed at the first try)", t.firstFailed)
	stuck := 0
	for _, p := range r.phases() {
		for _, cl := range p.clients {
			if cl.lost != nil {
				stuck++
			}
		}
	}
	add(stuck == 0, "every client that lost a request answered again before its phase ended (%d did not)", stuck)
	return out
}

// recoveredAfter returns how long after t a client's first failure since
// t was followed by an answer.
func recoveredAfter(cl *client, t time.Time) (time.Duration, bool) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	for _, l := range cl.losses {
		if !l.failed.Before(t) {
			return l.recovered.Sub(t), true
		}
	}
	return 0, false
}

func servedBy(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	if len(xs) > 3 {
		return strings.Join(xs[:3], "; ") + fmt.Sprintf("; and %d more", len(xs)-3)
	}
	return strings.Join(xs, "; ")
}

func errText(err error) string {
	if err == nil {
		return "yes"
	}
	return err.Error()
}

func joinDurations(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	var parts []string
	for _, d := range ds {
		parts = append(parts, secs(d))
	}
	return strings.Join(parts, ", ")
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
func ms(d time.Duration) string   { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }
func mb(b int64) string           { return fmt.Sprintf("%.0f MB", float64(b)/(1<<20)) }
