package vector

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"unsafe"

	"github.com/toolscout/toolscout/index/vector/snapfile"
	"github.com/toolscout/toolscout/internal/checksum"
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
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, q, _ := snapfile.QuantLayout(len(s.ids), s.dims)
	sums := 4 * s.dims * int(binary.LittleEndian.Uint32(data[36:])) // the domain sums end the file
	return int64(len(data) - checksum.FooterLen(data) - sums - int(q) - 2*len(s.half))
}

// TestSnapMatrixOnACacheLine: whatever the strings before it, a written
// snapshot's matrix starts at a multiple of 64 bytes, in the file and
// in memory, and reads back the same.
func TestSnapMatrixOnACacheLine(t *testing.T) {
	dir := t.TempDir()
	for n := 1; n <= 9; n++ {
		path := filepath.Join(dir, fmt.Sprintf("c%d.snap", n))
		want := snapFixture(n, 3)
		if err := writeSnap(path, want, nil, newFileID(), 0); err != nil {
			t.Fatal(err)
		}
		if off := matrixOffset(t, path, want); off%snapAlign != 0 {
			t.Fatalf("%d rows: the matrix starts at byte %d", n, off)
		}
		got, _, _, err := readSnap(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.half, want.half) || !reflect.DeepEqual(got.ids, want.ids) || !reflect.DeepEqual(column(got.group), column(want.group)) {
			t.Fatalf("%d rows: read back differs", n)
		}
		if a := uintptr(unsafe.Pointer(&got.half[0])) % snapAlign; a != 0 {
			t.Fatalf("%d rows: the matrix is %d bytes past a cache line in memory", n, a)
		}
	}
}

// TestSnapChecked: a snapshot file reads back only whole. Any byte
// changed (header, strings, padding, matrix, checksum), a file cut
// short or one of an earlier format is an error that says so, never a
// snapshot; a whole one gives back its rows, removed IDs, id and base.
func TestSnapChecked(t *testing.T) {
	snap := filepath.Join(t.TempDir(), "c.snap")
	want := snapFixture(5, 3)
	if err := writeSnap(snap, want, []string{"d__gone"}, 7, 9); err != nil {
		t.Fatal(err)
	}
	whole, _ := os.ReadFile(snap)
	got, removed, base, err := readSnap(snap)
	if err != nil || got.id != 7 || base != 9 || !slices.Equal(removed, []string{"d__gone"}) || !slices.Equal(got.ids, want.ids) {
		t.Fatalf("readSnap of a whole file: id %d, base %d, removed %v, %v", got.id, base, removed, err)
	}
	for at := 0; at < len(whole); at++ {
		damaged := slices.Clone(whole)
		damaged[at] ^= 0x10
		os.WriteFile(snap, damaged, 0o644)
		if s, _, _, err := readSnap(snap); err == nil || s != nil || errors.Is(err, os.ErrNotExist) {
			t.Fatalf("byte %d of %d changed: readSnap = %v, %v; want an error that is damage", at, len(whole), s, err)
		}
	}
	for _, n := range []int{0, 7, snapHeader, len(whole) - 1} {
		os.WriteFile(snap, whole[:n], 0o644)
		if _, _, _, err := readSnap(snap); err == nil || errors.Is(err, os.ErrNotExist) {
			t.Errorf("cut to %d bytes: readSnap = %v; want damage", n, err)
		}
	}
	for _, magic := range snapOlder {
		os.WriteFile(snap, append([]byte(magic), whole[len(magic):]...), 0o644)
		if _, _, _, err := readSnap(snap); !errors.Is(err, errOldSnap) {
			t.Errorf("readSnap of a %s file = %v, want errOldSnap", magic, err)
		}
	}
	os.Remove(snap)
	if _, _, _, err := readSnap(snap); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("readSnap without a file = %v, want os.ErrNotExist", err)
	}
}

// column returns every row's string of l.
func column(l labels) []string {
	out := make([]string, len(l.Idx))
	for i := range out {
		out[i] = l.At(i)
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
	ids := func(domain, group string, mode ScanMode) string {
		var out []string
		for _, h := range s.query([]float32{1, 0, 0}, 10, domain, group, mode) {
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
		// The quantized pass scopes as the exact scan does.
		for _, mode := range []ScanMode{ScanExact, ScanQuantized} {
			if got := ids(tc.domain, tc.group, mode); got != tc.want {
				t.Errorf("scan %d, domain %q group %q: %s, want %s", mode, tc.domain, tc.group, got, tc.want)
			}
		}
	}
}
