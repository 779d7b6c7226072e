package manifest

import (
	"fmt"
	"math/rand"
	"testing"
)

// mustWalk returns the walk of raw, failing t when it does not read.
func mustWalk(t *testing.T, raw []byte) *Walk {
	t.Helper()
	w, err := NewWalk(raw)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestManifestWalk: asked in any order (the manifest's own, with tools
// inserted, removed, moved or renamed), the walk answers what the
// decoded manifest says, and leaves exactly the ids never asked for.
func TestManifestWalk(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for round := 0; round < 300; round++ {
		n := r.Intn(30)
		ids := make([]string, n)
		raw := []byte(Header)
		for i := range ids {
			ids[i] = fmt.Sprintf("d__t%d", i)
			raw = fmt.Appendf(raw, "%s\th%d\n", ids[i], i%3)
		}
		want, err := Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		// The catalog asks for most ids in order, some out of it, and
		// for some the manifest does not have.
		var asks []string
		for _, id := range ids {
			switch r.Intn(10) {
			case 0: // removed from the catalog
			case 1:
				asks = append(asks, "new__"+id)
				asks = append(asks, id)
			default:
				asks = append(asks, id)
			}
		}
		if len(asks) > 1 && r.Intn(3) == 0 {
			i, j := r.Intn(len(asks)), r.Intn(len(asks))
			asks[i], asks[j] = asks[j], asks[i]
		}
		w := mustWalk(t, raw)
		for _, id := range asks {
			hash := fmt.Sprintf("h%d", r.Intn(3))
			found, same, _ := w.Take(id, hash)
			h, ok := want[id]
			if found != ok || same != (ok && h == hash) {
				t.Fatalf("round %d: Take(%q, %q) = %v, %v; the manifest has %q, %v", round, id, hash, found, same, h, ok)
			}
			delete(want, id)
		}
		left := map[string]bool{}
		w.Left(func(id string, _ []byte) { left[id] = true })
		if len(left) != len(want) {
			t.Fatalf("round %d: left %v, want the ids never asked %v", round, left, want)
		}
		for id := range want {
			if !left[id] {
				t.Fatalf("round %d: %q was never asked but is not left", round, id)
			}
		}
	}
}
