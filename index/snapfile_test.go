package index

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"unsafe"
)

// snapFixture returns a snapshot of n rows whose strings have lengths
// that put the end of the strings anywhere in a cache line.
func snapFixture(n, dims int) *snapshot {
	var rows []snapRow
	for i := 0; i < n; i++ {
		vec := make([]float32, dims)
		for j := range vec {
			vec[j] = float32(i*dims+j) / 1000
		}
		rows = append(rows, snapRow{id: fmt.Sprintf("d__tool%0*d", 1+i%7, i), hash: "h", domain: "d", group: string(make([]byte, i%5)), vec: vec})
	}
	return flat(dims, rows)
}

// matrixOffset is where the matrix of a snapshot file of s starts.
func matrixOffset(t *testing.T, path string, s *snapshot) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size() - int64(4*len(s.mat))
}

// TestSnapMatrixOnACacheLine: whatever the strings before it, a written
// snapshot's matrix starts at a multiple of 64 bytes, in the file and
// in memory, and reads back the same.
func TestSnapMatrixOnACacheLine(t *testing.T) {
	dir := t.TempDir()
	for n := 1; n <= 9; n++ {
		gob := filepath.Join(dir, fmt.Sprintf("c%d.gob", n))
		os.WriteFile(gob, []byte("x"), 0o644)
		want := snapFixture(n, 3)
		if err := writeSnap(gob, want, nil, fileTag{}); err != nil {
			t.Fatal(err)
		}
		if off := matrixOffset(t, snapPathOf(gob), want); off%snapAlign != 0 {
			t.Fatalf("%d rows: the matrix starts at byte %d", n, off)
		}
		got, _, _, err := readSnap(gob)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.mat, want.mat) || !reflect.DeepEqual(got.ids, want.ids) || !reflect.DeepEqual(column(got.group), column(want.group)) {
			t.Fatalf("%d rows: read back differs", n)
		}
		if a := uintptr(unsafe.Pointer(&got.mat[0])) % snapAlign; a != 0 {
			t.Fatalf("%d rows: the matrix is %d bytes past a cache line in memory", n, a)
		}
	}
}

// writeSnapV2 writes s the way toolscout did before "TSSNAP03": the
// current file with the old magic and the matrix right after the strings,
// at the next multiple of 4 bytes.
func writeSnapV2(t *testing.T, gobPath string, s *snapshot) {
	t.Helper()
	if err := writeSnap(gobPath, s, nil, fileTag{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(snapPathOf(gobPath))
	if err != nil {
		t.Fatal(err)
	}
	n := snapHeader
	for i := range s.ids {
		for _, f := range [4]string{s.ids[i], s.hash[i], s.domain.at(i), s.group.at(i)} {
			n += len(binary.AppendUvarint(nil, uint64(len(f)))) + len(f)
		}
	}
	old := append([]byte(snapMagicV2), data[8:n]...)
	old = append(old, make([]byte, (4-n%4)%4)...)
	old = append(old, data[len(data)-4*len(s.mat):]...)
	if err := os.WriteFile(snapPathOf(gobPath), old, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOlderSnapStillReads: a snapshot file of the previous format, its
// matrix 4-byte aligned, reads back the same.
func TestOlderSnapStillReads(t *testing.T) {
	dir := t.TempDir()
	gob := filepath.Join(dir, "c.gob")
	os.WriteFile(gob, []byte("x"), 0o644)
	want := snapFixture(5, 3)
	writeSnapV2(t, gob, want)
	if off := matrixOffset(t, snapPathOf(gob), want); off%snapAlign == 0 {
		t.Fatalf("fixture: the old-format matrix is already aligned (byte %d): the test would check less", off)
	}
	got, _, _, err := readSnap(gob)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.mat, want.mat) || !reflect.DeepEqual(got.ids, want.ids) || !reflect.DeepEqual(column(got.group), column(want.group)) {
		t.Fatal("the old-format snapshot reads back differently")
	}
}

// column returns every row's string of l.
func column(l labels) []string {
	out := make([]string, len(l.idx))
	for i := range out {
		out[i] = l.at(i)
	}
	return out
}

// TestSnapshotScopes: a scoped query sees the rows of its domain and
// group in both layers, a domain only the delta has included, and a
// scope no row has matches nothing.
func TestSnapshotScopes(t *testing.T) {
	row := func(id, domain, group string, x float32) snapRow {
		return snapRow{id: id, hash: "h", domain: domain, group: group, vec: normalized([]float32{x, 1, 0})}
	}
	base := flat(3, []snapRow{row("a__1", "a", "g1", 1), row("a__2", "a", "g2", 2), row("b__1", "b", "g1", 3)})
	s := base.withDelta([]string{"a__2"}, []snapRow{row("c__1", "c", "g1", 4), row("a__3", "a", "g2", 5)})
	ids := func(domain, group string) string {
		var out []string
		for _, h := range s.query([]float32{1, 0, 0}, 10, domain, group) {
			out = append(out, h.ID)
		}
		slices.Sort(out)
		return fmt.Sprint(out)
	}
	for _, tc := range []struct{ domain, group, want string }{
		{"", "", "[a__1 a__3 b__1 c__1]"},
		{"a", "", "[a__1 a__3]"},
		{"a", "g2", "[a__3]"},
		{"c", "", "[c__1]"},
		{"", "g1", "[a__1 b__1 c__1]"},
		{"zzz", "", "[]"},
		{"b", "g2", "[]"},
	} {
		if got := ids(tc.domain, tc.group); got != tc.want {
			t.Errorf("domain %q group %q: %s, want %s", tc.domain, tc.group, got, tc.want)
		}
	}
}
