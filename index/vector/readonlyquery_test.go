package vector

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/indextest"
)

// dirState lists every file under dir with its size, time and a hash of
// its bytes: two states are equal only if nothing was written, removed
// or created.
func dirState(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out = append(out, fmt.Sprintf("%s %d %s %x", rel, fi.Size(), fi.ModTime().Format("15:04:05.000000000"), sha256.Sum256(data)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestQueriesWriteNothing: the first query of a collection reads its
// files and writes none, whatever it finds there: a damaged collection
// file (which a write path removes), a matrix chunk flipped (which a
// write path salvages and writes again), a damaged delta or one of
// another base (which a write path removes), put there after the store
// opened (the open heals those it finds: TestOpenHealsDeltas). The query
// fails, or serves what it could read, says so in the log once; the next
// Sync heals the files and says so.
func TestQueriesWriteNothing(t *testing.T) {
	ctx := context.Background()
	a, b := deltaCatalogs(t)
	for _, damage := range []string{"none", "garbage", "matrix", "delta garbage", "delta of another base"} {
		t.Run(damage, func(t *testing.T) {
			dir, base, delta := syncedDelta(t, a, b)
			// The delta as the sync left it; for the delta's damages it
			// appears after the open, as another process's write or
			// crash leaves it.
			deltaBytes, err := os.ReadFile(delta)
			if err != nil {
				t.Fatal(err)
			}
			if damage != "none" {
				os.Remove(delta)
			}
			switch damage {
			case "garbage":
				os.WriteFile(base, []byte("TSSNAP05 and then nothing useful"), 0o644)
			case "matrix":
				data, _ := os.ReadFile(base)
				data[len(data)-checksum.FooterLen(data)-2] ^= 0xff // in the quantized rows, after the matrix
				os.WriteFile(base, data, 0o644)
			}
			before := dirState(t, dir)
			vs, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			var logged bytes.Buffer
			vs.SetLogger(slog.New(slog.NewTextHandler(&logged, nil)))
			if opened := dirState(t, dir); !slices.Equal(before, opened) {
				t.Fatalf("opening a store with no delta changed it:\nbefore %q\nafter  %q", before, opened)
			}
			switch damage {
			case "delta garbage":
				os.WriteFile(delta, []byte("TSSNAP05 garbage"), 0o644)
			case "delta of another base":
				s, _, base, err := decodeSnap(deltaBytes)
				if err != nil {
					t.Fatal(err)
				}
				if err := writeSnap(delta, s, nil, newFileID(), base+1); err != nil {
					t.Fatal(err)
				}
			}
			opened := dirState(t, dir)
			q := indextest.HashVec(index.DocumentText(b.Tool(b.Tools()[0].QualifiedName)))
			var errs []error
			for range 3 {
				_, err1 := vs.Query(ctx, testCol, q, 5, "", "")
				_, err2 := vs.Neighbors(ctx, testCol, b.Tools()[0].QualifiedName, 5, "")
				_, err3 := vs.Similarities(ctx, testCol, q, []string{b.Tools()[1].QualifiedName})
				_, err4 := vs.DomainSimilarity(ctx, testCol, q)
				_, err5 := vs.QueryChromem(ctx, testCol, q, 5, "", "")
				vs.Count(testCol)
				errs = append(errs, err1, err2, err3, err4, err5)
			}
			if after := dirState(t, dir); !slices.Equal(opened, after) {
				t.Fatalf("queries changed the data dir:\nbefore %q\nafter  %q", opened, after)
			}
			if damage == "none" {
				for _, err := range errs {
					if err != nil {
						t.Errorf("query of a whole collection: %v", err)
					}
				}
				if logged.Len() != 0 {
					t.Errorf("queries of a whole collection logged %q", logged.String())
				}
				return
			}
			if n := strings.Count(logged.String(), "level=WARN"); n != 1 {
				t.Errorf("the queries logged %d warnings, want one:\n%s", n, logged.String())
			}
			if damage == "garbage" || damage == "matrix" {
				if errs[0] == nil || !strings.Contains(errs[0].Error(), "heals it") {
					t.Errorf("query of a damaged collection = %v; want an error saying the next index heals it", errs[0])
				}
			}
			if len(vs.Healed()) != 0 {
				t.Errorf("Healed after queries = %q; want nothing healed yet", vs.Healed())
			}
			// The next write path heals what the queries left.
			emb := &indextest.CountingEmbedder{}
			if _, err := vs.Sync(ctx, testCol, b, emb, SyncOptions{}); err != nil || emb.Texts == 0 {
				t.Fatalf("sync after the queries: %v, %d embedded; want the lost tools embedded again", err, emb.Texts)
			}
			if damage != "delta of another base" && len(vs.Healed()) != 1 {
				t.Errorf("Healed after the sync = %q; want one line", vs.Healed())
			}
			if slices.Equal(opened, dirState(t, dir)) {
				t.Error("the sync left the damaged files as they were")
			}
			sameVectors(t, damage, vs, b)
			again, _ := Open(dir)
			emb = &indextest.CountingEmbedder{}
			if _, err := again.Sync(ctx, testCol, b, emb, SyncOptions{}); err != nil || emb.Texts != 0 || len(again.Healed()) != 0 {
				t.Errorf("the next open: %v, %d embedded, healed %q; want nothing to do", err, emb.Texts, again.Healed())
			}
		})
	}
}

// TestOpenHealsDeltas: a store opened for writing heals the deltas it
// finds (a kill's or damage's): one that cannot be read is removed with
// a warning, one of another version of the collection file silently,
// one with no collection file beside it with a warning; a sound one is
// kept. A read-only open changes nothing. The queries after the open
// then find nothing to heal.
func TestOpenHealsDeltas(t *testing.T) {
	ctx := context.Background()
	a, b := deltaCatalogs(t)
	for _, tc := range []struct {
		damage string
		warned bool
	}{{"none", false}, {"garbage", true}, {"another base", false}, {"no collection file", true}} {
		t.Run(tc.damage, func(t *testing.T) {
			dir, base, delta := syncedDelta(t, a, b)
			switch tc.damage {
			case "garbage":
				os.WriteFile(delta, []byte("TSSNAP05 garbage"), 0o644)
			case "another base":
				s, _, _, err := readSnap(base)
				if err != nil {
					t.Fatal(err)
				}
				if err := writeSnap(base, s, nil, newFileID(), 0); err != nil {
					t.Fatal(err)
				}
			case "no collection file":
				os.Remove(base)
			}
			before := dirState(t, dir)
			OpenReadOnly(dir).Count(testCol)
			if after := dirState(t, dir); !slices.Equal(before, after) {
				t.Fatalf("a read-only open and query changed the data dir:\nbefore %q\nafter  %q", before, after)
			}
			vs, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Stat(delta)
			if kept := statErr == nil; kept != (tc.damage == "none") {
				t.Errorf("after the open the delta exists = %v (%v); want it kept only when sound", kept, statErr)
			}
			if h := vs.Healed(); (len(h) == 1) != tc.warned || len(h) > 1 {
				t.Errorf("Healed after the open = %q; want a warning: %v", h, tc.warned)
			}
			opened := dirState(t, dir)
			vs.Query(ctx, testCol, indextest.HashVec("query"), 5, "", "")
			if after := dirState(t, dir); !slices.Equal(opened, after) {
				t.Fatalf("a query changed the data dir:\nbefore %q\nafter  %q", opened, after)
			}
			emb := &indextest.CountingEmbedder{}
			if _, err := vs.Sync(ctx, testCol, b, emb, SyncOptions{}); err != nil {
				t.Fatal(err)
			}
			if (emb.Texts == 0) != (tc.damage == "none") {
				t.Errorf("the sync after the open embedded %d texts", emb.Texts)
			}
			sameVectors(t, tc.damage, vs, b)
		})
	}
}
