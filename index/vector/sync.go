package vector

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/vector/snapfile"
	"github.com/toolscout/toolscout/internal/fileio"
	"golang.org/x/sync/errgroup"
)

// checkpointEvery is how often a long Sync writes the collection's
// snapshot file while it embeds (SyncOptions.CheckpointEvery).
const checkpointEvery = 15 * time.Second

// SyncOptions tunes Store.Sync.
type SyncOptions struct {
	// BatchSize is the number of texts per embedding call (32 when zero).
	BatchSize int
	// Concurrency bounds the embedding calls in flight (2 when zero).
	Concurrency int
	// Progress, when set, is called after each batch with the number of
	// tools embedded so far and the number to embed in all.
	Progress func(done, total int)
	// CheckpointEvery is how often a long sync writes what it embedded so
	// far to the collection's file, so that a kill loses at most this much
	// embedding work (15 s when zero).
	CheckpointEvery time.Duration
}

// changes returns the tools of cat that old (nil: none) lacks or holds
// with another content hash, counted in st, and the IDs old holds that
// cat does not. Each tool is looked up in old's sorted IDs: at every
// start of a server (nothing changed, 100k tools) a map of the
// snapshot's IDs, and a lookup of each in the catalog, cost about 60 ms
// of CPU before the first answer. Qualified names are unique in a
// catalog, so when every live row of old is matched, none is removed.
func changes(old *snapshot, cat *index.Catalog, st *index.SyncStats) (todo []*index.Tool, removed []string) {
	matched := 0
	for _, t := range cat.Tools() {
		var l *snapshot
		var i int
		if old != nil {
			l, i = old.find(t.QualifiedName)
		}
		switch {
		case l == nil:
			st.Added++
			todo = append(todo, t)
			continue
		case l.hash[i] != t.Hash:
			st.Changed++
			todo = append(todo, t)
		default:
			st.Unchanged++
		}
		matched++
	}
	if old == nil || matched == old.count() {
		return todo, nil
	}
	old.each(func(l *snapshot, i int) {
		if cat.Tool(l.ids[i]) == nil {
			removed = append(removed, l.ids[i])
		}
	})
	return todo, removed
}

// Sync makes the collection hold a vector for exactly cat's tools. Tools
// whose content hash is unchanged are not re-embedded; removed tools are
// deleted. Embedding runs in batches with bounded concurrency and stops at
// the first error; the vectors written before it stay valid, so the next
// Sync resumes where this one stopped.
func (v *Store) Sync(ctx context.Context, col Collection, cat *index.Catalog, emb DocumentEmbedder, opts SyncOptions) (st index.SyncStats, err error) {
	if col.Dims <= 0 {
		return st, fmt.Errorf("vector collection %s: dimension unknown", col.Name())
	}
	v.mu.Lock()
	old, err := v.snapshotLocked(ctx, col.Name(), true)
	v.mu.Unlock()
	if err != nil {
		return st, err
	}
	todo, removed := changes(old, cat, &st)
	if len(todo) == 0 && len(removed) == 0 {
		return st, nil
	}
	if v.readOnly {
		v.mu.Lock()
		why := v.unreadable[col.Name()]
		v.mu.Unlock()
		if why == nil {
			why = fmt.Errorf("it lacks %d of the catalog's tools and holds %d others", len(todo), len(removed))
		}
		return st, fmt.Errorf("vectors of %s: %w: %w; build them with toolscout index and the same embedder", col.Name(), index.ErrReadOnly, why)
	}
	name := col.Name()
	// A small change goes into the collection's delta (see deltaFraction);
	// a large one, or a first write, rewrites the collection whole.
	useDelta := false
	if v.dir != "" && old != nil && old.id != 0 && len(old.ids) > 0 {
		if _, err := os.Stat(v.fileOf(name)); err == nil {
			size := len(old.removed()) + len(todo) + len(removed)
			if old.top != nil {
				size += len(old.top.ids)
			}
			useDelta = size <= len(old.ids)/deltaFraction
		}
	}
	// Every change ends in the collection's files, an error included: the
	// vectors embedded before it stay, and the next Sync resumes there.
	// The new snapshot is the old one patched: removed and re-embedded
	// rows out, the new rows in (no full read of the collection).
	dirty := false
	// Each vector goes into its row of one matrix, todo sorted by ID: when
	// the sync embeds the whole collection (a cold index), that matrix is
	// the new snapshot as is, and not copied (at 100k tools a copy of
	// 205 MB raised the peak memory by twice that). A batch's rows are
	// fresh once it is embedded (embedded[b]); the fresh rows are listed
	// only when a patch or a delta needs them (snapRow is 88 bytes a row).
	slices.SortFunc(todo, func(a, b *index.Tool) int { return strings.Compare(a.QualifiedName, b.QualifiedName) })
	batch := opts.BatchSize
	if batch <= 0 {
		batch = 32
	}
	cold := old == nil || old.count() == 0
	var (
		mat      []float32 // the fresh rows' vectors, in todo's order
		offHeap  bool      // mat is fileio.OffHeap's, or rows holds the matrix
		rows     *rowFile  // a cold sync's matrix, on disk (rowfile.go)
		embedded []bool    // by batch
		prefix   int       // todo[:prefix] are all embedded
	)
	cols := func(n int) *snapshot {
		s := &snapshot{dims: col.Dims, mat: mat[:n*col.Dims], ids: make([]string, n), hash: make([]string, n)}
		for i, t := range todo[:n] {
			s.ids[i], s.hash[i] = t.QualifiedName, t.Hash
			s.domain.Add(t.Domain)
			s.group.Add(t.Group)
		}
		s.signs = snapfile.Quantize(s.mat, n, col.Dims)
		return s
	}
	freshRows := func() []snapRow {
		var fresh []snapRow
		for b, ok := range embedded {
			for i := b * batch; ok && i < min((b+1)*batch, len(todo)); i++ {
				t := todo[i]
				fresh = append(fresh, snapRow{id: t.QualifiedName, hash: t.Hash, domain: t.Domain, group: t.Group, vec: mat[i*col.Dims : (i+1)*col.Dims]})
			}
		}
		return fresh
	}
	// save writes what is embedded so far; checkpoint says it is one
	// written while the sync goes on.
	save := func(checkpoint bool) (*snapshot, error) {
		if rows != nil {
			// Cold, into a directory: written from the file the rows
			// were embedded into, and read from it when next asked
			// for. A checkpoint writes the rows embedded in a row from
			// the first (the batches in flight past them are embedded
			// again after a kill); the end of a sync that failed or was
			// canceled, every batch embedded.
			tools := todo[:prefix]
			if !checkpoint && prefix < len(todo) {
				var err error
				if tools, err = rows.compact(todo, embedded, batch); err != nil {
					return nil, err
				}
			}
			return nil, v.writeRows(name, tools, rows)
		}
		if !useDelta {
			var s *snapshot
			switch {
			case cold && prefix == len(todo) && len(todo) > 0:
				s = cols(len(todo))
			case cold && checkpoint:
				// The rows embedded in a row from the first: a prefix of
				// the matrix, written without a copy of it (at 1M tools
				// each checkpoint copied up to 2.56 GB). The batches in
				// flight past it are embedded again after a kill.
				s = cols(prefix)
			default:
				s = patchSnapshot(old, col.Dims, removed, freshRows())
			}
			if checkpoint {
				// Nothing keeps a checkpoint's layer.
				_, err := v.write(name, s)
				return nil, err
			}
			// Served as written: float16 (persist), half the bytes.
			w, err := v.persist(name, s)
			if w == nil {
				return s, err
			}
			return w, err
		}
		s := old.withDelta(removed, freshRows())
		return s, v.persistDelta(name, s)
	}
	release := func() {} // lets go of an off-heap mat
	defer func() {
		defer release()
		if !dirty {
			return
		}
		s, perr := save(false)
		if perr != nil && err == nil {
			err = perr
		}
		v.mu.Lock()
		v.snaps[name] = s
		if offHeap {
			// The snapshot is the matrix, which goes with release, or
			// its float16 copy on the heap (persist): the collection is
			// read from the file just written when next asked for
			// (mapped, as at a start), not held from here.
			delete(v.snaps, name)
			delete(v.read, name)
		}
		v.db.DeleteCollection(name) // QueryChromem's copy is stale
		v.mu.Unlock()
	}()
	if len(removed) > 0 {
		st.Removed = len(removed)
		dirty = true
	}
	if len(todo) == 0 {
		return st, nil
	}
	// With a directory, the matrix is outside the Go heap, where it
	// counts once towards the peak memory rather than twice (GOGC 100 lets
	// the heap grow to twice what is live): at 100k tools 256 MB of the
	// cold index's 965 MB peak was this matrix, and as much again the
	// room the collector left for garbage beside it. Every snapshot made
	// from it is written and dropped, or copied (patchSnapshot,
	// withDelta), before release.
	offHeap = v.dir != ""
	switch {
	case offHeap && cold:
		// No matrix in memory at all: the rows go to a file as they are
		// embedded, and the snapshot is written from it (rowfile.go).
		if rows, err = createRowFile(v.fileOf(name), len(todo), col.Dims); err != nil {
			return st, fmt.Errorf("vector collection %s: %w", name, err)
		}
		release = rows.remove
	case offHeap:
		var buf []byte
		buf, release = fileio.OffHeap(len(todo) * col.Dims * 4)
		mat = unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(buf))), len(todo)*col.Dims)
	default:
		mat = make([]float32, len(todo)*col.Dims)
	}
	embedded = make([]bool, (len(todo)+batch-1)/batch)
	every := opts.CheckpointEvery
	if every <= 0 {
		every = checkpointEvery
	}
	conc := opts.Concurrency
	if conc <= 0 {
		conc = 2
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(conc)
	// Embedding runs in parallel; adding to the collection, progress and
	// checkpoints run under mu, so a checkpoint never sees a half add.
	var mu sync.Mutex
	done := 0
	lastSave := time.Now()
	for start := 0; start < len(todo); start += batch {
		if gctx.Err() != nil {
			// Canceled (a signal) or a batch failed: start no more work.
			// An embedder that ignores its context (the built-in one)
			// would otherwise go on through the whole catalog.
			break
		}
		part := todo[start:min(start+batch, len(todo))]
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			texts := make([]string, len(part))
			for i, t := range part {
				texts[i] = index.DocumentText(t)
			}
			vecs, err := emb.EmbedDocuments(gctx, texts)
			if err != nil {
				return err
			}
			if len(vecs) != len(part) {
				return fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(part))
			}
			for i, vec := range vecs {
				if len(vec) != col.Dims {
					return fmt.Errorf("embedder returned a %d-dimensional vector for %s, collection %s wants %d", len(vec), part[i].QualifiedName, col.Name(), col.Dims)
				}
			}
			if rows != nil {
				if err := rows.put(start, vecs); err != nil {
					return err
				}
			} else {
				for i, vec := range vecs {
					copy(mat[(start+i)*col.Dims:(start+i+1)*col.Dims], normalized(vec))
				}
			}
			mu.Lock()
			defer mu.Unlock()
			dirty = true
			embedded[start/batch] = true
			for prefix < len(todo) && embedded[prefix/batch] {
				prefix = min(prefix+batch, len(todo))
			}
			done += len(part)
			if opts.Progress != nil {
				opts.Progress(done, len(todo))
			}
			if v.dir != "" && time.Since(lastSave) > every && done < len(todo) {
				// A kill loses at most this much embedding work.
				if _, err := save(true); err != nil {
					return err
				}
				lastSave = time.Now()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return st, err
	}
	if err := ctx.Err(); err != nil {
		// Canceled between batches: what was embedded is saved (above),
		// the rest is not there, so this is no success.
		return st, err
	}
	return st, nil
}
