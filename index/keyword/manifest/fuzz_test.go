package manifest

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/internal/fuzzcheck"
)

// FuzzManifest reads the keyword index's manifest (Decode, and the
// in-order Walk that index/keyword's Sync reads it with), seeded with a
// manifest as Sync writes it for a small catalog (each tool's hash and
// lengths), its earlier JSON form, and mutations. Contract: an error, or
// a map that, written again in the line format, reads back equal; the
// walk agrees with the map on every id (no panic, memory in proportion
// to the input). Bleve's own files are Bleve's to fuzz; index/keyword's
// TestSyncStoresManifest checks that a real index stores this format.
func FuzzManifest(f *testing.F) {
	good := []byte(Header)
	for i, name := range []string{"github__create_issue", "github__list_issues", "slack__send", "fs__read_file"} {
		var l [NumLengths]int
		for j := range l {
			l[j] = (i + 1) * (j + 2) % 7
		}
		good = fmt.Appendf(good, "%s\t%016x\t", name, uint64(i)*0x9e3779b97f4a7c15)
		good = append(AppendLengths(good, l), '\n')
	}
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(bytes.ReplaceAll(good, []byte{'\t'}, []byte{' '}))
	f.Add([]byte(`{"github__create_issue":"abc","slack__send":"def"}`))
	f.Add([]byte(Header + "a\tb\na\tc\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var (
			m   map[string]string
			err error
		)
		fuzzcheck.Bounded(t, len(raw), func() { m, err = Decode(raw) })
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
		enc := []byte(Header)
		for _, id := range ids {
			enc = append(append(append(append(enc, id...), '\t'), m[id]...), '\n')
		}
		again, err := Decode(enc)
		if err != nil || len(again) != len(m) {
			t.Fatalf("a manifest written again reads %d ids (%v), want %d", len(again), err, len(m))
		}
		w, err := NewWalk(enc)
		if err != nil {
			t.Fatalf("NewWalk of a manifest Decode reads: %v", err)
		}
		for _, id := range ids {
			if again[id] != m[id] {
				t.Fatalf("id %q: hash %q written, %q read back", id, m[id], again[id])
			}
			if found, same, _ := w.Take(id, m[id]); !found || !same {
				t.Fatalf("the walk of the manifest takes %q as found=%v same=%v", id, found, same)
			}
		}
		w.Left(func(id string, _ []byte) { t.Fatalf("the walk left %q after every id was taken", id) })
	})
}
