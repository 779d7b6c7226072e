package keyword

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/indextest"
)

// writeFormat3 makes the keyword index at path as toolscout wrote it in
// format "3": a synced index whose manifest starts with the header of
// its time (no line has lengths) and whose field lengths are JSON alone,
// without a checksum.
func writeFormat3(t *testing.T, path string) {
	t.Helper()
	kw, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kw.Sync(context.Background(), indextest.MustCatalog(t, indextest.SmallCatalog)); err != nil {
		t.Fatal(err)
	}
	raw, err := kw.idx.GetInternal([]byte(manifestKey))
	if err != nil {
		t.Fatal(err)
	}
	v1 := []byte(manifestHeaderV1)
	rest, _ := bytes.CutPrefix(raw, []byte(manifestHeader))
	for _, line := range strings.SplitAfter(string(rest), "\n") {
		if f := strings.Split(strings.TrimSuffix(line, "\n"), "\t"); len(f) >= 2 {
			v1 = append(v1, f[0]+"\t"+f[1]+"\n"...)
		}
	}
	sealed, err := kw.idx.GetInternal([]byte(lengthsKey))
	if err != nil {
		t.Fatal(err)
	}
	body, err := checksum.Body(sealed)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string][]byte{manifestKey: v1, lengthsKey: body[len(lengthsHeader):], formatKey: []byte("3")} {
		if err := kw.idx.SetInternal([]byte(k), v); err != nil {
			t.Fatal(err)
		}
	}
	if err := kw.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestMigrateFormat3: an index of format "3" (manifest TSKWM01, field
// lengths without a checksum) is migrated in place: the first sync after
// it indexes only what changed and heals nothing, the manifest and the
// lengths are of the current format, and a second Migrate does nothing.
// Before the migration the readers refuse it: read-only with the command
// that migrates it, read-write by rebuilding it.
func TestMigrateFormat3(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "kw.bleve")
	writeFormat3(t, path)
	if _, err := OpenReadOnly(path); err == nil || !strings.Contains(err.Error(), "toolscout index") {
		t.Errorf("OpenReadOnly of format 3 = %v; want an error naming toolscout index", err)
	}
	notes, err := Migrate(path)
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0], "nothing indexed again") || !strings.Contains(notes[0], "TSKWM01") || !strings.Contains(notes[0], "checksum") {
		t.Fatalf("Migrate = %q, %v; want one note of a migration of the manifest and the lengths", notes, err)
	}
	if notes, err := Migrate(path); err != nil || len(notes) != 0 {
		t.Errorf("Migrate again = %q, %v; want nothing to do", notes, err)
	}
	kw, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer kw.Close()
	if kw.lengths.Load() == nil {
		t.Error("the migrated field lengths were not read")
	}
	changed := indextest.MustCatalog(t, strings.Replace(indextest.SmallCatalog, "Send a message to a channel.", "Post a chat note to a room.", 1))
	st, err := kw.Sync(ctx, changed)
	if err != nil || st.Changed != 1 || st.Added+st.Removed != 0 || len(kw.Healed()) != 0 {
		t.Errorf("sync after the migration = %+v, %v (healed %q); want 1 changed, nothing healed", st, err, kw.Healed())
	}
	raw, _ := kw.idx.GetInternal([]byte(manifestKey))
	if !bytes.HasPrefix(raw, []byte(manifestHeader)) {
		t.Errorf("manifest written as %.20q, want the current format", raw)
	}
	raw, _ = kw.idx.GetInternal([]byte(lengthsKey))
	if !bytes.HasPrefix(raw, []byte(lengthsHeader)) {
		t.Errorf("field lengths stored as %.20q, want them sealed", raw)
	}
	for _, bad := range []string{manifestHeader + "no tab\n", manifestHeader + "a\tb", "[1,2]", `{"a":"b"}`, manifestHeaderV1 + "a\tb\n"} {
		if _, err := decodeManifest([]byte(bad)); err == nil {
			t.Errorf("decodeManifest(%q) = nil error", bad)
		}
	}

	// Not migrated (keyword.Open handed it directly): rebuilt, and said.
	unmigrated := filepath.Join(t.TempDir(), "kw.bleve")
	writeFormat3(t, unmigrated)
	kw3, err := Open(unmigrated)
	if err != nil {
		t.Fatal(err)
	}
	defer kw3.Close()
	if h := kw3.Healed(); len(h) != 1 || !strings.Contains(h[0], `"3"`) {
		t.Errorf("Open of an unmigrated format 3: healed %q, want the rebuild said", h)
	}
}

// TestMigrateOutsideTheWindow: an index of a format before "3" (other
// fields), or without a format, is removed with a note saying so, and
// Open builds a new one; a missing path is no error and no note.
func TestMigrateOutsideTheWindow(t *testing.T) {
	for _, format := range []string{"2", ""} {
		path := filepath.Join(t.TempDir(), "kw.bleve")
		kw, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if format == "" {
			err = kw.idx.DeleteInternal([]byte(formatKey))
		} else {
			err = kw.idx.SetInternal([]byte(formatKey), []byte(format))
		}
		if err != nil {
			t.Fatal(err)
		}
		kw.Close()
		notes, err := Migrate(path)
		if err != nil || len(notes) != 1 || !strings.Contains(notes[0], "rebuilt from the catalog") {
			t.Errorf("format %q: Migrate = %q, %v; want a note that it is rebuilt", format, notes, err)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("format %q: the index is still there (%v)", format, err)
		}
		kw, err = Open(path)
		if err != nil {
			t.Fatalf("format %q: Open after the migration: %v", format, err)
		}
		kw.Close()
	}
	if notes, err := Migrate(filepath.Join(t.TempDir(), "none")); err != nil || notes != nil {
		t.Errorf("Migrate of a missing index = %q, %v; want nothing", notes, err)
	}
}
