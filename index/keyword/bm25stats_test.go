package keyword

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/blevesearch/bleve/v2/search"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/keyword/manifest"
	"github.com/toolscout/toolscout/internal/indextest"
	"github.com/toolscout/toolscout/internal/racetest"
	"github.com/toolscout/toolscout/internal/synth"
	"github.com/toolscout/toolscout/internal/text"
)

// lengthsOfDocuments is fieldLengths as it was: each field of the
// document newKeywordDoc builds, counted word by word. fieldLengths must
// give the same totals (they are BM25's average field lengths: a
// difference changes every keyword score).
func lengthsOfDocuments(cat *index.Catalog) *search.BM25Stats {
	st := &search.BM25Stats{DocCount: float64(cat.Len())}
	completeLengths(st)
	count := func(field, s string) {
		n := 0
		for _, w := range text.SplitIdentifier(s) {
			if !text.Stopword(w) {
				n++
			}
		}
		st.FieldCardinality[field] += n
	}
	for _, d := range cat.Domains() {
		for _, t := range d.Tools {
			doc := newKeywordDoc(t, d.Description)
			st.FieldCardinality[FieldQualifiedName]++
			st.FieldCardinality[FieldName]++
			st.FieldCardinality[fieldDomain]++
			if t.Group != "" {
				st.FieldCardinality[fieldGroup]++
			}
			count(FieldNameWords, doc.NameWords)
			count(FieldText, doc.Text)
			count(FieldTextExact, doc.TextExact)
		}
	}
	return st
}

// TestFieldLengthsAsDocuments: fieldLengths, which counts each part of a
// tool once, gives the totals of counting the documents' fields, on the
// built-in catalog, a synthetic one and one of awkward text (camelCase,
// digits, non-ASCII, stop words, empty fields, tags and groups).
func TestFieldLengthsAsDocuments(t *testing.T) {
	builtin, err := index.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	synCat, err := synth.Catalog(3000, 1)
	if err != nil {
		t.Fatal(err)
	}
	odd := indextest.MustCatalog(t, `{"domains":[
 {"name":"s3-api","description":"Amazon S3: the buckets, and the objects IN them.","tools":[
  {"name":"getObjectV2","title":"Get an object","description":"Télécharge l'objet; returns HTMLParser output of the 3D model.","group":"objects","tags":["read","s3"],
   "inputSchema":{"type":"object","properties":{"bucketName":{"type":"string","description":"The bucket."},"key_path":{"type":"string"},"x":{"type":"integer","description":"über-size of it"}}}},
  {"name":"put","description":"","inputSchema":{"type":"object"}}]},
 {"name":"zh","tools":[{"name":"查询","description":"查询天气 weather of a city","inputSchema":{"type":"object","properties":{"城市":{"type":"string","description":"城市名"}}}}]}]}`)
	for name, cat := range map[string]*index.Catalog{"builtin": builtin, "synthetic": synCat, "odd": odd} {
		got, want := fieldLengths(cat), lengthsOfDocuments(cat)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: fieldLengths = %+v, want the documents' %+v", name, got, want)
		}
	}
}

// BenchmarkFieldLengths counts a 100k-tool synthetic catalog's field
// lengths, as every change does.
func BenchmarkFieldLengths(b *testing.B) {
	syn, err := synth.Catalog(100000, 1)
	if err != nil {
		b.Fatal(err)
	}
	cat, err := index.NewCatalog(syn.Specs())
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range []struct {
		name string
		fn   func(*index.Catalog) *search.BM25Stats
	}{{"parts", fieldLengths}, {"documents", lengthsOfDocuments}} {
		b.Run(f.name, func(b *testing.B) {
			for range b.N {
				f.fn(cat)
			}
		})
	}
}

// TestIncrementalLengthsAsCold: a Sync that corrects the previous totals
// by the tools that changed (the manifest keeps each tool's lengths)
// leaves the index with the statistics of a cold build of the same
// catalog, and so ranking as it: the same hits with the same scores, to
// the bit. The change edits descriptions, tags and groups, removes,
// renames and adds tools, and edits a domain's description (every one
// of its tools changes); it is synced in batches of a few documents,
// after the index is opened again (the totals read from disk), and over
// a manifest written before the lengths were kept (every tool counted).
// 210 tools in 7 domains (the changes need six): each sync of the whole
// catalog is still 30 batches, and a catalog three times the size only
// tripled the segments Bleve merges under -race (issue 47). The cold
// build, the yardstick, is one batch in memory: its 30 batches on disk
// and their merges were a fifth of the test's CPU (issue 47, item 5).
func TestIncrementalLengthsAsCold(t *testing.T) {
	racetest.Plain(t)
	ctx := context.Background()
	base := synth.Specs(210, 30, 7)
	base[0].Tools[0].Group, base[0].Tools[0].Tags = "admin", []string{"read", "slow"}
	changed := make([]index.DomainSpec, len(base))
	for d := range base {
		changed[d] = base[d]
		changed[d].Tools = slices.Clone(base[d].Tools)
	}
	for i := range changed[1].Tools {
		switch i % 9 {
		case 0:
			changed[1].Tools[i].Description += " Changed: sends the weekly report to every channel."
		case 1:
			changed[1].Tools[i].Tags = append(slices.Clone(changed[1].Tools[i].Tags), "beta", "reports")
		case 2:
			changed[1].Tools[i].Group = "reports"
		}
	}
	changed[0].Tools[0].Group, changed[0].Tools[0].Tags = "", nil
	changed[2].Tools = slices.Delete(changed[2].Tools, 3, 8)
	changed[3].Tools[4].Name += "_renamed"
	changed[4].Description = "Another description for a whole domain of tools."
	changed[5].Tools = append(changed[5].Tools, index.ToolSpec{Name: "brand_new_tool", Title: "Brand new", Description: "Archive old invoices into cold storage.", InputSchema: []byte(`{"type":"object","properties":{"invoiceId":{"type":"string","description":"Which invoice."}}}`)})
	baseCat, err := index.NewCatalog(base)
	if err != nil {
		t.Fatal(err)
	}
	changedCat, err := index.NewCatalog(changed)
	if err != nil {
		t.Fatal(err)
	}

	open := func(t *testing.T, dir string) *Index {
		k, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		k.batchDocs = 7
		t.Cleanup(func() { k.Close() })
		return k
	}
	sync := func(t *testing.T, k *Index, cat *index.Catalog) index.SyncStats {
		st, err := k.Sync(ctx, cat)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	cold := open(t, "")
	cold.batchDocs = 0
	sync(t, cold, changedCat)

	for _, tc := range []struct {
		name string
		// before runs on the index synced to base, closed.
		before func(t *testing.T, dir string)
	}{
		{"lengths kept", func(*testing.T, string) {}},
		{"manifest without lengths", func(t *testing.T, dir string) {
			k := open(t, dir)
			raw, err := k.idx.GetInternal([]byte(manifestKey))
			if err != nil {
				t.Fatal(err)
			}
			v1 := []byte(manifestHeaderV1)
			if _, err := manifest.Lines(raw[len(manifestHeader):], func(id, hash, _ []byte) {
				v1 = append(append(append(append(v1, id...), '\t'), hash...), '\n')
			}); err != nil {
				t.Fatal(err)
			}
			if err := k.idx.SetInternal([]byte(manifestKey), v1); err != nil {
				t.Fatal(err)
			}
			k.Close()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "warm")
			k := open(t, dir)
			sync(t, k, baseCat)
			k.Close()
			tc.before(t, dir)
			k = open(t, dir)
			st := sync(t, k, changedCat)
			if st.Changed == 0 || st.Added == 0 || st.Removed == 0 {
				t.Fatalf("re-index = %+v, want tools changed, added and removed", st)
			}
			if got, want := k.lengths.Load(), cold.lengths.Load(); !reflect.DeepEqual(got, want) {
				t.Fatalf("field lengths after a re-index = %+v, want a cold build's %+v", got, want)
			}
			gotRaw, _ := k.idx.GetInternal([]byte(lengthsKey))
			wantRaw, _ := cold.idx.GetInternal([]byte(lengthsKey))
			if !bytes.Equal(gotRaw, wantRaw) {
				t.Errorf("stored field lengths %q, want a cold build's %q", gotRaw, wantRaw)
			}
			gotMan, _ := k.idx.GetInternal([]byte(manifestKey))
			wantMan, _ := cold.idx.GetInternal([]byte(manifestKey))
			if !bytes.Equal(gotMan, wantMan) {
				t.Errorf("manifest after a re-index differs from a cold build's (%d and %d bytes)", len(gotMan), len(wantMan))
			}
			queries := append(synth.Queries(40, 3), "weekly report channel", "archive invoices cold storage", "reports beta")
			for _, q := range queries {
				got, err := k.Search(ctx, Query{Text: q, Size: 20})
				if err != nil {
					t.Fatal(err)
				}
				want, err := cold.Search(ctx, Query{Text: q, Size: 20})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("Search(%q) after a re-index = %d hits, want a cold build's %d", q, len(got), len(want))
				}
				for i := range got {
					if got[i].ID != want[i].ID || math.Float64bits(got[i].Score) != math.Float64bits(want[i].Score) || math.Float64bits(got[i].Coverage) != math.Float64bits(want[i].Coverage) {
						t.Fatalf("Search(%q) hit %d after a re-index = %s %v (coverage %v), want a cold build's %s %v (%v)", q, i, got[i].ID, got[i].Score, got[i].Coverage, want[i].ID, want[i].Score, want[i].Coverage)
					}
				}
			}
		})
	}
}
