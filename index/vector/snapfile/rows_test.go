package snapfile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteRowsIsWrite: WriteRows, which reads the matrix from a file a
// chunk at a time, writes the same bytes as Write given the same rows
// and matrix as Half, for no row, one, and more rows than one read
// holds, over dimensions that fill the sign words exactly or not; and
// the file reads back.
func TestWriteRowsIsWrite(t *testing.T) {
	for _, tc := range []struct {
		name       string
		rows, dims int
	}{
		{"no rows", 0, 16},
		{"one row", 1, 16},
		{"odd padding", 3, 65},
		{"two reads", 600, 1024}, // 2 KiB rows: 512 a read
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := &Snap{Dims: tc.dims}
			var m []byte
			for i := range tc.rows {
				s.IDs = append(s.IDs, fmt.Sprintf("d%d__tool%04d", i%5, i))
				s.Hash = append(s.Hash, fmt.Sprintf("h%d", i))
				s.Domain.Add(fmt.Sprintf("d%d", i%5))
				s.Group.Add([]string{"", "g"}[i%2])
				for j := range tc.dims {
					h := Half(float32((i*7+j*3)%11-5) / 16)
					s.Half = append(s.Half, h)
					m = binary.LittleEndian.AppendUint16(m, h)
				}
			}
			mf := filepath.Join(dir, "matrix")
			if err := os.WriteFile(mf, m, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(mf)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			const id = 42
			want, got := filepath.Join(dir, "want.snap"), filepath.Join(dir, "got.snap")
			if err := Write(want, s, nil, id, 0); err != nil {
				t.Fatal(err)
			}
			if err := WriteRows(got, &Snap{Dims: s.Dims, IDs: s.IDs, Hash: s.Hash, Domain: s.Domain, Group: s.Group}, f, id); err != nil {
				t.Fatalf("WriteRows: %v", err)
			}
			wb, _ := os.ReadFile(want)
			gb, _ := os.ReadFile(got)
			if !bytes.Equal(gb, wb) {
				i := 0
				for i < min(len(gb), len(wb)) && gb[i] == wb[i] {
					i++
				}
				t.Fatalf("WriteRows wrote %d bytes, Write %d; first difference at byte %d", len(gb), len(wb), i)
			}
			r, _, _, err := Read(got)
			if err != nil || len(r.IDs) != tc.rows {
				t.Fatalf("Read(WriteRows's file) = %d rows, %v; want %d", len(r.IDs), err, tc.rows)
			}
		})
	}
}

// TestWriteRowsShortMatrix: a matrix file shorter than the rows named is
// an error that says which rows, and no snapshot file is left.
func TestWriteRowsShortMatrix(t *testing.T) {
	dir := t.TempDir()
	mf := filepath.Join(dir, "matrix")
	if err := os.WriteFile(mf, make([]byte, 2*16*2), 0o644); err != nil { // two rows
		t.Fatal(err)
	}
	f, err := os.Open(mf)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := &Snap{Dims: 16}
	for i := range 3 {
		s.IDs, s.Hash = append(s.IDs, fmt.Sprint("t", i)), append(s.Hash, "h")
		s.Domain.Add("d")
		s.Group.Add("")
	}
	path := filepath.Join(dir, "c.snap")
	err = WriteRows(path, s, f, 7)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("rows 0 to 3")) {
		t.Fatalf("WriteRows of 3 rows from a matrix of 2 = %v, want an error naming rows 0 to 3", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("after the error the snapshot file exists (%v)", err)
	}
}
