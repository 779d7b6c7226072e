package store

import (
	"io"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/vector"
)

// The embedder's fit, run by the store on the vector path of each sync
// (SyncWith): an embedder whose statistics are fitted to the catalog it
// serves (the built-in one: its word statistics weight query features)
// gets the statistics saved for the catalog (fit-*.bin: RestoreFit), or
// fitted on it and saved. The store declares what it needs of the
// embedder here and imports none: embed.Builtin implements all three.

// Fitter is an embedder fitted to the documents of the catalog it
// serves.
type Fitter interface {
	Fit(docs []string)
}

// FitSaver is a Fitter whose statistics the store saves in the data dir
// and restores, keyed by the embedder's fingerprint.
type FitSaver interface {
	Fitter
	Fingerprint() string
	SaveFit(w io.Writer) error
	LoadFit(r io.Reader) error
}

// FitCounter is a Fitter that can take its statistics from the documents
// it embeds instead of a pass of its own, when a sync embeds every
// document of the catalog anyway (a first index): counting starts with
// StartCounting, and FitCounted(n) fits from what was counted when that
// was exactly n documents (reporting whether it did).
type FitCounter interface {
	Fitter
	StartCounting()
	FitCounted(n int) bool
}

// MaxFitDrift is the share of a catalog's tools that may have changed
// since the embedder's statistics were fitted before they are fitted
// again. Statistics only weight query features (document vectors do not
// use them), and a 2% change moves them little, while fitting 100k tools
// takes seconds.
const MaxFitDrift = 0.02

// fitRun is the fit of one sync's vector path.
type fitRun struct {
	s       *Store
	f       Fitter
	cat     *index.Catalog
	refit   bool   // the statistics saved for cat were not there or stale
	damaged bool   // a saved file could not be read (said already)
	after   func() // runs once the vectors are synced
}

// startFit gives emb, when it is a Fitter, the statistics saved for cat
// (or for a catalog within MaxFitDrift of it), or else fits them: from
// the documents the sync is about to embed when emb can count them
// (finish then completes the fit, by a pass when the sync did not embed
// every tool), otherwise by a pass now. It returns nil for an embedder
// that is not fitted.
func (s *Store) startFit(emb vector.DocumentEmbedder, cat *index.Catalog) *fitRun {
	f, ok := emb.(Fitter)
	if !ok {
		return nil
	}
	r := &fitRun{s: s, f: f, cat: cat}
	if r.restore() {
		return r
	}
	r.refit = true
	if c, ok := f.(FitCounter); ok {
		// Statistics only weight queries, so they can wait for the sync:
		// when it embeds every tool (a first index), they come from that
		// pass, not from a second one over the same documents (2.7 s of
		// CPU at 100k tools). Otherwise they are fitted after it.
		c.StartCounting()
		r.after = func() {
			if !c.FitCounted(cat.Len()) {
				fitAll(f, cat)
			}
			r.save()
		}
		return r
	}
	fitAll(f, cat)
	r.save()
	return r
}

// finish completes the fit once the vectors are synced (vst, err), and
// warns when the saved statistics were stale though the vectors were
// not: a re-index stopped between the two writes.
func (r *fitRun) finish(vst index.SyncStats, err error) {
	if r == nil {
		return
	}
	if r.after != nil {
		r.after()
	}
	cat := r.cat
	if err == nil && r.refit && !r.damaged && r.s.dir != "" && cat.Len() > 0 && float64(vst.Added+vst.Changed+vst.Removed) <= MaxFitDrift*float64(cat.Len()) {
		// The vectors were synced to cat before, and the statistics then
		// fitted were not saved (a kill in between): the ones restore
		// found were fitted on another catalog, or there were none.
		r.s.log.Warn("the built-in embedder's statistics saved in the data dir do not match the catalog (a re-index stopped before saving them?); fitting them again")
	}
}

// restore gives the embedder the statistics saved for the catalog, and
// reports whether it did. A saved file that could not be read is said in
// a warning.
func (r *fitRun) restore() bool {
	saver, ok := r.f.(FitSaver)
	if !ok {
		return false
	}
	restored, err := r.s.RestoreFit(saver.Fingerprint(), r.cat, MaxFitDrift, saver.LoadFit)
	if err != nil {
		r.s.log.Warn(err.Error())
		r.damaged = true
	}
	return restored
}

// save saves the statistics just fitted to the catalog, when they can
// be: read-only, they are fitted for this process only. A failure costs
// the next start a fit.
func (r *fitRun) save() {
	saver, ok := r.f.(FitSaver)
	if !ok || r.s.readOnly {
		return
	}
	if err := r.s.SaveFit(saver.Fingerprint(), r.cat, saver.SaveFit); err != nil {
		r.s.log.Warn("could not save the embedder's statistics", "err", err)
	}
}

// fitAll fits f by a pass over cat's documents.
func fitAll(f Fitter, cat *index.Catalog) {
	docs := make([]string, 0, cat.Len())
	for _, t := range cat.Tools() {
		docs = append(docs, index.DocumentText(t))
	}
	f.Fit(docs)
}
