package keyword

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/internal/fuzzcheck"
	"github.com/toolscout/toolscout/internal/indextest"
)

// FuzzManifest reads the keyword index's manifest (decodeManifest, and
// the in-order walk that Sync reads it with), seeded with the manifest a
// real index stored for a small catalog, its earlier JSON form, and
// mutations. Contract: an error, or a map that, written again in the
// line format, reads back equal; the walk agrees with the map on every
// id (no panic, memory in proportion to the input). Bleve's own files
// are Bleve's to fuzz.
func FuzzManifest(f *testing.F) {
	k, err := Open(filepath.Join(f.TempDir(), "keyword"))
	if err != nil {
		f.Fatal(err)
	}
	if _, err := k.Sync(context.Background(), indextest.MustCatalog(f, indextest.SmallCatalog)); err != nil {
		f.Fatal(err)
	}
	good, err := k.idx.GetInternal([]byte(manifestKey))
	if err != nil || !bytes.HasPrefix(good, []byte(manifestHeader)) {
		f.Fatalf("the manifest stored is %q (%v)", good, err)
	}
	good = bytes.Clone(good)
	k.Close()
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(bytes.ReplaceAll(good, []byte{'\t'}, []byte{' '}))
	f.Add([]byte(`{"github__create_issue":"abc","slack__send":"def"}`))
	f.Add([]byte(manifestHeader + "a\tb\na\tc\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var (
			m   map[string]string
			err error
		)
		fuzzcheck.Bounded(t, len(raw), func() { m, err = decodeManifest(raw) })
		if err != nil {
			return
		}
		ids := make([]string, 0, len(m))
		for id, hash := range m {
			if id == "" || strings.ContainsAny(id, "\t\n") || strings.ContainsAny(hash, "\t\n") {
				return // a JSON manifest can hold what lines cannot
			}
			ids = append(ids, id)
		}
		slices.Sort(ids)
		enc := []byte(manifestHeader)
		for _, id := range ids {
			enc = append(append(append(append(enc, id...), '\t'), m[id]...), '\n')
		}
		again, err := decodeManifest(enc)
		if err != nil || len(again) != len(m) {
			t.Fatalf("a manifest written again reads %d ids (%v), want %d", len(again), err, len(m))
		}
		w := &manifestWalk{rest: enc[len(manifestHeader):]}
		for _, id := range ids {
			if again[id] != m[id] {
				t.Fatalf("id %q: hash %q written, %q read back", id, m[id], again[id])
			}
			if found, same, _ := w.take(id, m[id]); !found || !same {
				t.Fatalf("the walk of the manifest takes %q as found=%v same=%v", id, found, same)
			}
		}
		w.left(func(id string, _ []byte) { t.Fatalf("the walk left %q after every id was taken", id) })
	})
}
