package keyword

import (
	"reflect"
	"testing"

	"github.com/blevesearch/bleve/v2/search"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/indextest"
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
			count(FieldTitle, doc.Title)
			count(FieldDescription, doc.Description)
			count(FieldParamNames, doc.ParamNames)
			count(FieldParamDesc, doc.ParamDesc)
			count(FieldDomainText, doc.DomainText)
			count(FieldGroupText, doc.GroupText)
			count(FieldTags, doc.Tags)
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
	syn, err := synth.Catalog(3000, 1)
	if err != nil {
		t.Fatal(err)
	}
	synCat, err := index.NewCatalog(syn.Specs())
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
