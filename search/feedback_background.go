package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// What a search needs of each recorded request (its vector, the
// engine's ranking of it in the search's mode, and its agreement with
// the other recorded requests) costs about a search of its own. Made by
// the first search that met the request (up to rankBudget a search),
// it cost a hybrid search on 1,000 tools 1.7 times as much with 10,000
// events as without the channel. Once attached to its engine (Attach,
// Prepare), a Feedback makes all of it in the background instead: when
// the log is loaded (NewFeedback, Reset), when an event is added (Add),
// and when a search finds that the engine's build, embedder or
// parameters changed since (a re-index); a search uses what is ready
// and makes nothing of the log itself. Until a ranking is made again
// under the new build, the older build's stands (the rankings of one
// catalog and embedder change little between builds); a request with
// no ranking yet counts nothing until it has one, as a request a search
// had no budget to rank did before. Once the background is done, every
// search ranks as the channel did once it had met every request.

// fbBackground is the work an attached Feedback does in the background:
// one goroutine at most, which stops when nothing is left.
type fbBackground struct {
	eng *Engine
	ctx context.Context
	log *slog.Logger
	// targets are the modes searches ranked in, with their parameters
	// (the engine's default mode from Attach on).
	targets map[Mode]*Params
	keys    map[Mode]string // the key of each target's last search
	running bool
	again   bool       // woken while running: look again before stopping
	idle    *sync.Cond // broadcast when the goroutine stops
	err     error      // why it stopped last (nil: it was done)
	retryAt time.Time  // after an error, no start before
	// A pass: the requests of one target not ranked under its key yet,
	// made a batch at a time; logged when large (a load, a re-index).
	queue             []string
	queueOf           rankOf // the target (mode, and key in req)
	passDone, passAll int
	passStart, logged time.Time
}

// fbBatch is how many requests the background makes between looks at
// what is left: a batch holds the lock only to store what it made.
const fbBatch = 32

// fbLogLarge is the size of a pass that is logged (start, progress
// every fbLogEvery, end): a log's load or a re-index, not a new run.
const (
	fbLogLarge = 200
	fbLogEvery = 5 * time.Second
)

// Attach has f make in the background what searches of e need of the
// recorded requests, from now on (see above): their vectors, the
// engine's rankings in its default mode (and in each mode a search
// uses), and their agreement. Progress of large passes (a load, a
// re-index) goes to log at Info (nil: none); the work stops when ctx is
// done. Attaching again replaces e, ctx and log.
func (f *Feedback) Attach(ctx context.Context, e *Engine, log *slog.Logger) {
	f.attach(ctx, e, log, resolveMode(e, Hybrid))
}

// attach attaches f to e, with mode as a target ("": none new).
func (f *Feedback) attach(ctx context.Context, e *Engine, log *slog.Logger, mode Mode) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.bg == nil {
		f.bg = &fbBackground{targets: map[Mode]*Params{}, keys: map[Mode]string{}}
		f.bg.idle = sync.NewCond(&f.mu)
	}
	f.bg.eng, f.bg.ctx, f.bg.log = e, ctx, log
	if _, ok := f.bg.targets[mode]; !ok && mode != "" {
		f.bg.targets[mode] = nil
	}
	f.wakeLocked(true)
}

// Prepare attaches f to e (Attach, without logs and without the
// default mode) with mode and params as a search will give them, and returns when everything searches need
// is made, or ctx is done: the rankings are then those of the channel
// once it met every recorded request. For eval and tests.
func (f *Feedback) Prepare(ctx context.Context, e *Engine, mode Mode, params *Params) error {
	if mode == "" {
		mode = Hybrid
	}
	f.attach(ctx, e, nil, "")
	f.want(resolveMode(e, mode), params, f.rankingKey(e, params), true)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.wakeLocked(true)
	for f.bg.running {
		f.bg.idle.Wait()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return f.bg.err
}

// resolveMode is the mode a search of mode answers in: keyword without
// an embedder.
func resolveMode(e *Engine, mode Mode) Mode {
	if emb, _ := e.embedder(); emb == nil {
		return Keyword
	}
	return mode
}

// want notes that a search ranked in mode with params (whose rankings
// are made under key) and wakes the background when that is new or
// something is missing.
func (f *Feedback) want(mode Mode, params *Params, key string, missing bool) {
	f.mu.RLock()
	_, ok := f.bg.targets[mode]
	same := ok && f.bg.keys[mode] == key
	idle := !f.bg.running
	vecs := mode != Keyword && f.p.Similarity != "words" && f.made < len(f.vecs)
	f.mu.RUnlock()
	if same && (!idle || !missing && !vecs) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !same {
		if params != nil {
			c := *params
			params = &c
		}
		f.bg.targets[mode], f.bg.keys[mode] = params, key
	}
	f.wakeLocked(false)
}

// wakeLocked starts the background goroutine unless it runs, or it
// failed less than a second ago (force: whatever the time).
func (f *Feedback) wakeLocked(force bool) {
	bg := f.bg
	if bg != nil && bg.running {
		bg.again = true // the goroutine looks again before it stops
		return
	}
	if bg == nil || !force && time.Now().Before(bg.retryAt) {
		return
	}
	bg.running, bg.err = true, nil
	go f.work()
}

// work makes a batch at a time until nothing is left, ctx is done or an
// error stops it (logged; a later search or event starts it again).
func (f *Feedback) work() {
	for {
		done, err := f.step()
		if err == errStopped {
			return // step marked it stopped
		}
		if !done && err == nil {
			continue
		}
		f.mu.Lock()
		bg := f.bg
		if err != nil {
			bg.err, bg.retryAt, bg.queue = err, time.Now().Add(time.Second), nil
			if bg.log != nil && bg.ctx.Err() == nil {
				bg.log.Warn("learned feedback: could not prepare the recorded requests; searches use what is ready, retrying with the next search or run", "err", err)
			}
		}
		bg.running = false
		bg.idle.Broadcast()
		f.mu.Unlock()
		return
	}
}

// step makes one batch: the vectors of requests without one, else the
// rankings of one target's requests not ranked under its key, else the
// agreements made before the requests changed. When nothing was left
// it marks the goroutine stopped (errStopped), under the same lock as
// the wakes it checks, so that an Add after it starts another; a step
// that could make nothing stops too (a later search or event tries
// again), so it never spins.
func (f *Feedback) step() (done bool, err error) {
	f.mu.Lock()
	bg := f.bg
	bg.again = false
	e, ctx := bg.eng, bg.ctx
	targets := make([]Mode, 0, len(bg.targets))
	params := map[Mode]*Params{}
	for m, p := range bg.targets {
		targets = append(targets, m)
		params[m] = p
	}
	f.mu.Unlock()
	slices.Sort(targets)
	if err := ctx.Err(); err != nil {
		return true, err
	}
	if e.Catalog().Len() == 0 {
		// No build yet (a gateway still connecting): nothing to rank
		// against; the first search after it starts this again.
		return true, nil
	}
	// The vectors, for the modes that compare them.
	if slices.ContainsFunc(targets, func(m Mode) bool { return m != Keyword }) && f.p.Similarity != "words" {
		n, err := f.makeVectorBatch(ctx, e)
		if err != nil || n > 0 {
			return false, err
		}
	}
	keys := make([]string, len(targets))
	for i, m := range targets {
		keys[i] = f.rankingKey(e, params[m])
	}
	dims := 0
	if emb, _ := e.embedder(); emb != nil {
		f.mu.RLock()
		for i := range f.vecs {
			if f.vecs[i].made {
				dims = f.vecs[i].n
				break
			}
		}
		f.mu.RUnlock()
	}
	// The rankings, one target at a time.
	for i, m := range targets {
		batch := f.rankBatch(m, keys[i])
		if len(batch) == 0 {
			continue
		}
		d := dims
		if m == Keyword {
			d = 0
		}
		if err := f.rank(ctx, e, Request{Params: params[m]}, m, keys[i], d, batch); err != nil {
			return false, err
		}
		f.progress(len(batch))
		return false, nil
	}
	// The agreements made before the requests changed (Reset, the cap).
	if f.agreeBatch() > 0 {
		return false, nil
	}
	// Nothing left of what step looked at; whatever changed since
	// (Add, Reset, a search's new mode or build) woke it: again.
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.bg.again {
		return false, nil
	}
	f.bg.running = false
	f.bg.idle.Broadcast()
	return true, errStopped
}

// errStopped tells work that step marked it stopped itself.
var errStopped = errors.New("stopped")

// makeVectorBatch makes the vectors of up to fbBatch requests that have
// none under the engine's build and embedder, and returns how many.
func (f *Feedback) makeVectorBatch(ctx context.Context, e *Engine) (int, error) {
	ix, emb, _, _ := e.acquire()
	defer ix.inflight.Done()
	if emb == nil || ix.vs == nil {
		return 0, nil
	}
	key := fmt.Sprintf("%p\x00%s", ix, emb.Info())
	f.mu.Lock()
	if f.vecKey != key {
		f.vecKey = key
		clear(f.vecs)
		f.made = 0
	}
	var missing []string
	for i := range f.vecs {
		if f.made == len(f.vecs) || len(missing) == fbBatch {
			break
		}
		if !f.vecs[i].made {
			missing = append(missing, f.reqs[i].text)
		}
	}
	f.mu.Unlock()
	if len(missing) == 0 {
		return 0, nil
	}
	made := make([]fbVec, len(missing))
	for i, r := range missing {
		v, err := emb.EmbedQuery(ctx, r)
		if err != nil {
			return 0, fmt.Errorf("embedding recorded request %q: %w", r, err)
		}
		made[i] = sparseOf(unit(v))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.vecKey == key {
		for i, r := range missing {
			if id, ok := f.reqOf[r]; ok && !f.vecs[id].made {
				f.vecs[id] = made[i]
				f.made++
			}
		}
	}
	return len(missing), nil
}

// rankBatch returns up to fbBatch requests with no ranking in mode under
// key, from the current pass (a new pass starts when it is empty: the
// requests are looked at once a pass, not once a batch).
func (f *Feedback) rankBatch(mode Mode, key string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	bg := f.bg
	needs := func(q string) bool {
		_, held := f.reqOf[q]
		rk := f.ranks[rankOf{mode, q}]
		return held && (rk == nil || rk.key != key)
	}
	if bg.queueOf != (rankOf{mode, key}) {
		bg.queue, bg.queueOf = nil, rankOf{mode, key}
	}
	if len(bg.queue) == 0 {
		for _, r := range f.reqs {
			if needs(r.text) {
				bg.queue = append(bg.queue, r.text)
			}
		}
		if len(bg.queue) == 0 {
			return nil
		}
		bg.passAll, bg.passDone, bg.passStart, bg.logged = len(bg.queue), 0, time.Now(), time.Now()
		if bg.passAll >= fbLogLarge && bg.log != nil {
			bg.log.Info("learned feedback: ranking the recorded requests in the background; searches use what is ready", "mode", mode, "requests", bg.passAll)
		}
	}
	var out []string
	for len(bg.queue) > 0 && len(out) < fbBatch {
		q := bg.queue[0]
		bg.queue = bg.queue[1:]
		if needs(q) {
			out = append(out, q)
		}
	}
	return out
}

// progress counts n requests of the pass ranked, and logs a large
// pass's progress and end.
func (f *Feedback) progress(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	bg := f.bg
	bg.passDone += n
	if bg.passAll < fbLogLarge || bg.log == nil {
		return
	}
	switch {
	case len(bg.queue) == 0:
		bg.log.Info("learned feedback: recorded requests ranked; searches use all of them", "mode", bg.queueOf.mode, "requests", bg.passDone, "took", time.Since(bg.passStart).Round(time.Millisecond))
	case time.Since(bg.logged) >= fbLogEvery:
		bg.logged = time.Now()
		bg.log.Info("learned feedback: ranking the recorded requests", "mode", bg.queueOf.mode, "done", bg.passDone, "of", bg.passAll)
	}
}

// agreeBatch makes again the agreements of up to 4×fbBatch rankings
// made before the requests were indexed again, and returns how many.
func (f *Feedback) agreeBatch() int {
	if f.p.Agreement < 0 {
		return 0
	}
	f.mu.RLock()
	var stale []rankOf
	for k, rk := range f.ranks {
		if rk.gen != f.gen {
			stale = append(stale, k)
		}
	}
	slices.SortFunc(stale, func(a, b rankOf) int { return cmp.Or(cmp.Compare(a.mode, b.mode), cmp.Compare(a.req, b.req)) })
	stale = stale[:min(len(stale), 4*fbBatch)]
	gen := f.gen
	rels := make([]map[string]float64, len(stale))
	buf := make([]float64, len(f.reqs))
	for i, k := range stale {
		if id, ok := f.reqOf[k.req]; ok {
			rels[i] = f.agreementLocked(id, f.p.Similarity != "words" && k.mode != Keyword, buf)
		}
	}
	f.mu.RUnlock()
	if len(stale) == 0 {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gen != gen {
		return len(stale) // indexed again meanwhile: the next batch
	}
	for i, k := range stale {
		if rk := f.ranks[k]; rk != nil && rk.gen != gen {
			// A copy: searches read the old one without the lock's
			// write side.
			c := *rk
			c.rel, c.gen = rels[i], gen
			f.ranks[k] = &c
		}
	}
	return len(stale)
}
