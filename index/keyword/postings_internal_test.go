package keyword

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand"
	"path/filepath"
	"testing"

	bleveindex "github.com/blevesearch/bleve_index_api"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/synth"
)

// TestSegmentPostingsAsScorch: a term's postings read from the segments
// themselves (postings.go) are scorch's term field reader's, posting for
// posting: the same document numbers, frequencies and norms to the last
// bit, the same count, by Next and by Advance (forwards, to numbers
// between postings, past the end, and back), on an index of several
// segments with deleted documents (a re-sync that changed a tenth of the
// tools).
func TestSegmentPostingsAsScorch(t *testing.T) {
	kw, err := Open(filepath.Join(t.TempDir(), "keyword.bleve"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kw.Close() })
	kw.batchDocs = 150 // several segments
	specs := synth.Specs(1200, 40, 3)
	cat, err := index.NewCatalog(specs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kw.Sync(context.Background(), cat); err != nil {
		t.Fatal(err)
	}
	for d := range specs {
		for i := range specs[d].Tools {
			if (d+i)%10 == 0 {
				specs[d].Tools[i].Description += " Changed to archive the invoice."
			}
		}
	}
	if cat, err = index.NewCatalog(specs); err != nil {
		t.Fatal(err)
	}
	if _, err := kw.Sync(context.Background(), cat); err != nil {
		t.Fatal(err)
	}
	r := indexReader(t, kw)
	defer r.Close()
	segs, deleted := segmentsOf(r)
	if len(segs) < 2 || deleted == 0 {
		t.Fatalf("%d segments, %d deleted documents: the test proves nothing", len(segs), deleted)
	}
	dicts := newSegmentDicts(r)
	if dicts == nil {
		t.Fatal("newSegmentDicts = nil on a scorch snapshot")
	}
	ctx := context.Background()
	rng := rand.New(rand.NewSource(1))
	checked := 0
	for _, tc := range []struct{ term, field string }{
		{"archiv", FieldText}, {"invoic", FieldText}, {"the", FieldTextExact}, {"archive", FieldTextExact},
		{"create", FieldNameWords}, {"list", FieldNameWords}, {"zyzzyva", FieldText},
		{"svc001__create_issue_1", FieldQualifiedName},
	} {
		want, err := r.TermFieldReader(ctx, []byte(tc.term), tc.field, true, true, false)
		if err != nil {
			t.Fatal(err)
		}
		got, err := dicts.postings([]byte(tc.term), tc.field)
		if err != nil {
			t.Fatal(err)
		}
		if got.Count() != want.Count() {
			t.Errorf("%s:%s: Count() = %d, want %d", tc.field, tc.term, got.Count(), want.Count())
		}
		var all []uint64
		for i := 0; ; i++ {
			w, werr := want.Next(nil)
			g, gerr := got.Next(nil)
			if !sameDoc(t, tc.field+":"+tc.term, "Next", w, werr, g, gerr) || w == nil {
				break
			}
			all = append(all, binary.BigEndian.Uint64(w.ID))
		}
		checked += len(all)
		want.Close()
		// Advance: to postings, between them, past the end, and back.
		want, _ = r.TermFieldReader(ctx, []byte(tc.term), tc.field, true, true, false)
		if got, err = dicts.postings([]byte(tc.term), tc.field); err != nil {
			t.Fatal(err)
		}
		var last uint64
		for step := 0; step < 60 && len(all) > 0; step++ {
			target := all[rng.Intn(len(all))]
			switch step % 4 {
			case 1:
				target++ // between postings, or past them
			case 2:
				target = last + uint64(rng.Intn(40)) // near, often behind
			}
			id := docNumber(target)
			w, werr := want.Advance(id, nil)
			g, gerr := got.Advance(id, nil)
			if !sameDoc(t, tc.field+":"+tc.term, "Advance", w, werr, g, gerr) {
				break
			}
			if w != nil {
				last = binary.BigEndian.Uint64(w.ID)
				w, werr = want.Next(nil)
				g, gerr = got.Next(nil)
				if !sameDoc(t, tc.field+":"+tc.term, "Next after Advance", w, werr, g, gerr) {
					break
				}
			}
		}
		want.Close()
	}
	if checked < 500 {
		t.Fatalf("%d postings compared: the test proves little", checked)
	}
}

// sameDoc reports whether the two readers answered alike, and says how
// they did not.
func sameDoc(t *testing.T, term, op string, want *bleveindex.TermFieldDoc, werr error, got *bleveindex.TermFieldDoc, gerr error) bool {
	t.Helper()
	switch {
	case (werr == nil) != (gerr == nil):
		t.Errorf("%s: %s error %v, want %v", term, op, gerr, werr)
		return false
	case werr != nil:
		return false
	case (want == nil) != (got == nil):
		t.Errorf("%s: %s = %v, want %v", term, op, got, want)
		return false
	case want == nil:
		return true
	case !bytes.Equal(got.ID, want.ID) || got.Freq != want.Freq || got.Norm != want.Norm:
		t.Errorf("%s: %s = doc %x freq %d norm %v, want doc %x freq %d norm %v", term, op, got.ID, got.Freq, got.Norm, want.ID, want.Freq, want.Norm)
		return false
	}
	return true
}

// TestScoreMemoIsTheScore: a clause's memo of the scores of one
// occurrence by norm (termClause.score) gives scoreOf's value to the
// last bit, for every norm of a field of up to 5,000 words in random
// order, many sharing a memo slot, and forgets the scores of an earlier
// query weight.
func TestScoreMemoIsTheScore(t *testing.T) {
	c := &termClause{boost: 1, idf: 2.3, avgDocLength: 31, queryWeight: 1}
	rng := rand.New(rand.NewSource(2))
	check := func(round int) {
		for i := 0; i < 20000; i++ {
			n := uint64(1 + rng.Intn(5000))
			if i%3 == 0 {
				n = uint64(20 + rng.Intn(8)) // the few lengths a field mostly has
			}
			norm := zapNorm(n)
			freq := uint64(1)
			if i%7 == 0 {
				freq = uint64(2 + rng.Intn(3))
			}
			if got, want := c.score(freq, norm), c.scoreOf(freq, norm); got != want {
				t.Fatalf("round %d: score(%d, norm of %d words) = %v, want %v", round, freq, n, got, want)
			}
		}
	}
	check(1)
	if c.memo == nil {
		t.Fatal("no memo after 20,000 postings: the test proves nothing")
	}
	c.SetQueryNorm(0.7)
	check(2)
}
