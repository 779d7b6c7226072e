package vector

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
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
// another base (which a write path removes). The query fails, or serves
// what it could read; the next Sync heals the files and says so.
func TestQueriesWriteNothing(t *testing.T) {
	ctx := context.Background()
	a, b := deltaCatalogs(t)
	for _, damage := range []string{"none", "garbage", "matrix", "delta garbage", "delta of another base"} {
		t.Run(damage, func(t *testing.T) {
			dir, base, delta := syncedDelta(t, a, b)
			switch damage {
			case "garbage":
				os.WriteFile(base, []byte("TSSNAP05 and then nothing useful"), 0o644)
			case "matrix":
				data, _ := os.ReadFile(base)
				data[len(data)-checksum.FooterLen(data)-2] ^= 0xff // the last float's exponent
				os.WriteFile(base, data, 0o644)
			case "delta garbage":
				os.WriteFile(delta, []byte("TSSNAP05 garbage"), 0o644)
			case "delta of another base":
				s, _, _, err := readSnap(base)
				if err != nil {
					t.Fatal(err)
				}
				if err := writeSnap(base, s, nil, newFileID(), 0); err != nil {
					t.Fatal(err)
				}
			}
			before := dirState(t, dir)
			vs, err := Open(dir)
			if err != nil {
				t.Fatal(err)
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
				if !slices.Equal(before, opened) {
					t.Errorf("opening a whole store changed it:\nbefore %q\nafter  %q", before, opened)
				}
				for _, err := range errs {
					if err != nil {
						t.Errorf("query of a whole collection: %v", err)
					}
				}
				return
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
