package srccheck

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestMethodSets: the methods callers see on an exported type are its
// method set as go/types has it: those declared on it (on its value
// too), those promoted from an embedded type of its own package and of
// another (sync.Mutex), exported ones only, each with the file that
// declares it; an interface's are its own and its embedded ones'; an
// unexported type is not counted.
func TestMethodSets(t *testing.T) {
	dir := filepath.Join("testdata", "embed")
	sets := MethodSets(t, dir)
	for typ, want := range map[string][]string{
		"Outer":  {"Close", "Lock", "Own", "Promoted", "TryLock", "Unlock"},
		"Reader": {"Lock", "Read", "Unlock"},
	} {
		var got []string
		for _, m := range sets[typ] {
			got = append(got, m.Name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("MethodSets(%s)[%s] = %v, want %v", dir, typ, got, want)
		}
	}
	if len(sets) != 2 {
		t.Errorf("MethodSets(%s) has %d types, want Outer and Reader alone", dir, len(sets))
	}
	for _, m := range sets["Outer"] {
		if m.Name == "Own" && filepath.Base(m.File) != "embed.go" {
			t.Errorf("Outer.Own declared in %q, want embed.go", m.File)
		}
	}
}
