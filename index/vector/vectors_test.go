package vector

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/indextest"
)

var testCol = Collection{Provider: "test", Model: "hash16", Dims: 16}

func TestVectorSyncIsIncremental(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "vectors")
	vs, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	emb := &indextest.CountingEmbedder{}
	var progress []int
	st, err := vs.Sync(ctx, testCol, indextest.MustCatalog(t, indextest.SmallCatalog), emb, SyncOptions{BatchSize: 4, Progress: func(done, total int) {
		if total != 6 {
			t.Errorf("progress total = %d, want 6", total)
		}
		progress = append(progress, done)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != 6 || emb.Texts != 6 || emb.Calls != 2 {
		t.Fatalf("first sync: %v, %d texts in %d calls; want 6 added in 2 batches", st, emb.Texts, emb.Calls)
	}
	if len(progress) != 2 || progress[len(progress)-1] != 6 && progress[0] != 6 {
		t.Errorf("progress = %v, want two reports ending at 6", progress)
	}

	// Reopen from disk: nothing to embed.
	vs, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	emb.Texts = 0
	st, err = vs.Sync(ctx, testCol, indextest.MustCatalog(t, indextest.SmallCatalog), emb, SyncOptions{})
	if err != nil || st.Unchanged != 6 || emb.Texts != 0 {
		t.Fatalf("re-sync after reopen: %v, %v, %d texts embedded; want 6 unchanged, 0 embedded", st, err, emb.Texts)
	}

	// Change one tool and drop the jira domain: 1 re-embedded, 1 deleted.
	changed := strings.Replace(indextest.SmallCatalog, "Send a message to a channel.", "Post a chat note to a room.", 1)
	changed = changed[:strings.Index(changed, `,
 {"name":"jira"`)] + "]}"
	st, err = vs.Sync(ctx, testCol, indextest.MustCatalog(t, changed), emb, SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Changed != 1 || st.Removed != 1 || st.Unchanged != 4 || emb.Texts != 1 {
		t.Errorf("sync after change: %v with %d texts embedded; want 1 changed, 1 removed, 4 unchanged, 1 embedded", st, emb.Texts)
	}
	if n := vs.Count(testCol); n != 5 {
		t.Errorf("Count = %d, want 5", n)
	}

	// A model change fills its own collection and leaves the old one alone.
	other := Collection{Provider: "test", Model: "other", Dims: 16}
	emb.Texts = 0
	st, err = vs.Sync(ctx, other, indextest.MustCatalog(t, changed), emb, SyncOptions{})
	if err != nil || st.Added != 5 || emb.Texts != 5 {
		t.Errorf("new model: %v, %v, %d embedded; want 5 added", st, err, emb.Texts)
	}
	if n := vs.Count(testCol); n != 5 {
		t.Errorf("old collection Count = %d after a model change, want 5", n)
	}
}

func TestVectorSyncResumesAfterFailure(t *testing.T) {
	ctx := context.Background()
	vs, err := Open(filepath.Join(t.TempDir(), "v"))
	if err != nil {
		t.Fatal(err)
	}
	cat := indextest.MustCatalog(t, indextest.SmallCatalog)
	emb := &indextest.CountingEmbedder{FailAt: 2}
	if _, err := vs.Sync(ctx, testCol, cat, emb, SyncOptions{BatchSize: 2, Concurrency: 1}); err == nil {
		t.Fatal("Sync succeeded with a failing embedder")
	}
	if n := vs.Count(testCol); n != 2 {
		t.Fatalf("after failure Count = %d, want the 2 vectors of the batch that worked", n)
	}
	emb.FailAt, emb.Texts = 0, 0
	st, err := vs.Sync(ctx, testCol, cat, emb, SyncOptions{})
	if err != nil || st.Unchanged != 2 || st.Added != 4 || emb.Texts != 4 {
		t.Errorf("resumed sync: %v, %v, %d embedded; want 2 unchanged, 4 added", st, err, emb.Texts)
	}
}

func TestVectorQuery(t *testing.T) {
	ctx := context.Background()
	vs, cat := syncedSmall(t)
	hits, err := vs.Query(ctx, testCol, indextest.HashVec(index.DocumentText(cat.Tool("slack__post_message"))), 100, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 6 || hits[0].ID != "slack__post_message" {
		t.Errorf("Query = %v, want all 6 with post_message first", hits)
	}
	hits, err = vs.Query(ctx, testCol, indextest.HashVec("issue"), 10, "github", "issues")
	if err != nil || len(hits) != 2 {
		t.Errorf("filtered Query = %v, %v; want the 2 github issues tools", hits, err)
	}
	if _, err := vs.Query(ctx, testCol, make([]float32, 3), 10, "", ""); err == nil {
		t.Error("Query with a 3-dimensional vector succeeded on a 16-dimensional collection")
	}
	if hits, err := vs.Query(ctx, Collection{Provider: "none", Model: "x", Dims: 16}, indextest.HashVec("x"), 5, "", ""); err != nil || hits != nil {
		t.Errorf("Query on an empty collection = %v, %v; want nothing", hits, err)
	}
}

func TestDomainSimilarity(t *testing.T) {
	ctx := context.Background()
	vs, cat := syncedSmall(t)
	q := indextest.HashVec(index.DocumentText(cat.Tool("slack__post_message")))
	sims, err := vs.DomainSimilarity(ctx, testCol, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(sims) != len(cat.Domains()) {
		t.Fatalf("DomainSimilarity gave %d domains, want %d", len(sims), len(cat.Domains()))
	}
	// By hand: the cosine of q to the mean of each domain's tool vectors.
	for _, d := range cat.Domains() {
		mean := make([]float64, testCol.Dims)
		for _, tool := range d.Tools {
			for j, x := range normalized(indextest.HashVec(index.DocumentText(tool))) {
				mean[j] += float64(x)
			}
		}
		var dot, nm, nq float64
		for j, x := range q {
			dot += float64(x) * mean[j]
			nm += mean[j] * mean[j]
			nq += float64(x) * float64(x)
		}
		want := dot / math.Sqrt(nm*nq)
		if got := float64(sims[d.Name]); math.Abs(got-want) > 1e-4 {
			t.Errorf("DomainSimilarity[%s] = %.5f, want %.5f", d.Name, got, want)
		}
	}
	if _, err := vs.DomainSimilarity(ctx, testCol, make([]float32, 3)); err == nil {
		t.Error("DomainSimilarity with a 3-dimensional vector succeeded on a 16-dimensional collection")
	}
}

func TestDocumentText(t *testing.T) {
	cat := indextest.MustCatalog(t, indextest.SmallCatalog)
	got := index.DocumentText(cat.Tool("github__getFileContents"))
	want := "github: get file contents. Read a file from a repository. Parameters: path."
	if got != want {
		t.Errorf("DocumentText = %q, want %q", got, want)
	}
}

// halfTol bounds the difference float16 rows (snapfile's half.go, 2^-11
// of each value at most) make to a unit vector's values and to a dot
// product of unit vectors.
const halfTol = 1.0 / 2048

func TestSnapshotMatchesChromem(t *testing.T) {
	ctx := context.Background()
	vs, _ := syncedSmall(t)
	for _, q := range []string{"issue", "message channel", "file repository contents"} {
		for _, scope := range [][2]string{{"", ""}, {"github", ""}, {"github", "issues"}} {
			a, err1 := vs.Query(ctx, testCol, indextest.HashVec(q), 4, scope[0], scope[1])
			b, err2 := vs.QueryChromem(ctx, testCol, indextest.HashVec(q), 4, scope[0], scope[1])
			if err1 != nil || err2 != nil || len(a) != len(b) {
				t.Fatalf("Query(%q, %v) = %v, %v; chromem %v, %v", q, scope, a, err1, b, err2)
			}
			// The snapshot holds float16 vectors (2^-11 of each value at
			// most), chromem-go those normalised again: a dot product
			// differs by at most 2^-11 of Σ|q_j r_j| ≤ 1.
			for i := range a {
				if a[i].Similarity-b[i].Similarity > halfTol || b[i].Similarity-a[i].Similarity > halfTol {
					t.Errorf("Query(%q, %v)[%d] similarity %f, chromem %f", q, scope, i, a[i].Similarity, b[i].Similarity)
				}
			}
		}
	}
}

func TestPrune(t *testing.T) {
	ctx := context.Background()
	vs, _ := Open(filepath.Join(t.TempDir(), "v"))
	cat := indextest.MustCatalog(t, indextest.SmallCatalog)
	old := Collection{Provider: "builtin", Model: "hash-v1@old", Dims: 16}
	cur := Collection{Provider: "builtin", Model: "hash-v1@new", Dims: 16}
	other := Collection{Provider: "ollama", Model: "m", Dims: 16}
	for _, c := range []Collection{old, cur, other} {
		if _, err := vs.Sync(ctx, c, cat, &indextest.CountingEmbedder{}, SyncOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	gone, err := vs.Prune("builtin", cur)
	if err != nil || len(gone) != 1 || gone[0] != old.Name() {
		t.Fatalf("Prune = %v, %v; want only %s", gone, err, old.Name())
	}
	if vs.Count(old) != 0 || vs.Count(cur) != 6 || vs.Count(other) != 6 {
		t.Errorf("counts after prune: old %d, current %d, other provider %d", vs.Count(old), vs.Count(cur), vs.Count(other))
	}
}

// TestPatchedSnapshotMatchesTheCollection: the snapshot a Sync patches
// (old rows out, new rows in) holds what a store synced whole to the same
// catalog holds, and on disk the collection file (that snapshot, read
// back by a fresh open) holds the same.
func TestPatchedSnapshotMatchesTheCollection(t *testing.T) {
	ctx := context.Background()
	changed := strings.Replace(indextest.SmallCatalog, "Send a message to a channel.", "Post a chat note to a room.", 1)
	changed = changed[:strings.Index(changed, `,
 {"name":"jira"`)] + `,
 {"name":"mail","description":"Email","tools":[
  {"name":"send","description":"Send an email.","inputSchema":{"type":"object"}}]}]}`
	for _, dir := range []string{"", t.TempDir()} {
		vs, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		emb := &indextest.CountingEmbedder{}
		if _, err := vs.Sync(ctx, testCol, indextest.MustCatalog(t, indextest.SmallCatalog), emb, SyncOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := vs.Sync(ctx, testCol, indextest.MustCatalog(t, changed), emb, SyncOptions{}); err != nil {
			t.Fatal(err)
		}
		sameVectors(t, "dir "+dir, vs, indextest.MustCatalog(t, changed))
		if dir == "" {
			continue
		}
		// The file written is the patched snapshot: a fresh open reads
		// the same rows back.
		again, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		sameVectors(t, "reopened", again, indextest.MustCatalog(t, changed))
	}
}

// TestDot: the four-lane dot product equals the plain sum, every length.
func TestDot(t *testing.T) {
	for n := 0; n < 11; n++ {
		a, b := make([]float32, n), make([]float32, n)
		var want float64
		for i := range a {
			a[i], b[i] = float32(i)+0.5, float32(n-i)*0.25
			want += float64(a[i]) * float64(b[i])
		}
		if got := dot(a, b); math.Abs(float64(got)-want) > 1e-4 {
			t.Errorf("n=%d: dot = %v, want %v", n, got, want)
		}
	}
}

// TestCentroid: the centroid of a few tools is the normalised mean of
// their stored vectors, tools the collection lacks left out; none of
// them known gives nil.
func TestCentroid(t *testing.T) {
	ctx := context.Background()
	vs, cat := syncedSmall(t)
	tools := cat.Tools()[:3]
	ids := []string{tools[0].QualifiedName, "nobody__nothing", tools[1].QualifiedName, tools[2].QualifiedName}
	got, err := vs.Centroid(ctx, testCol, ids)
	if err != nil {
		t.Fatal(err)
	}
	mean := make([]float64, testCol.Dims)
	for _, tool := range tools {
		for j, x := range normalized(indextest.HashVec(index.DocumentText(tool))) {
			mean[j] += float64(x)
		}
	}
	var n float64
	for _, x := range mean {
		n += x * x
	}
	if len(got) != testCol.Dims {
		t.Fatalf("Centroid(%v) has %d dimensions, want %d", ids, len(got), testCol.Dims)
	}
	for j := range mean {
		if want := mean[j] / math.Sqrt(n); math.Abs(float64(got[j])-want) > halfTol { // float16 rows
			t.Errorf("Centroid(%v)[%d] = %.5f, want %.5f", ids, j, got[j], want)
		}
	}
	if none, err := vs.Centroid(ctx, testCol, []string{"nobody__nothing"}); err != nil || none != nil {
		t.Errorf("Centroid of an unknown tool = %v, %v; want nil, nil", none, err)
	}
}

// TestServedAsWritten: the process that syncs a collection answers with
// the vectors as its file holds them (float16), to the bit, as a
// process that opens the file does: not with the float32 ones it
// embedded.
func TestServedAsWritten(t *testing.T) {
	ctx := context.Background()
	cat := indextest.MustCatalog(t, indextest.SmallCatalog)
	dir := t.TempDir()
	vs, _ := Open(dir)
	if _, err := vs.Sync(ctx, testCol, cat, &indextest.CountingEmbedder{}, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	opened, _ := Open(dir)
	ids := []string{cat.Tools()[0].QualifiedName, cat.Tools()[1].QualifiedName}
	for _, q := range []string{"issue", "message channel", "file repository contents"} {
		a, err1 := vs.Query(ctx, testCol, indextest.HashVec(q), 5, "", "")
		b, err2 := opened.Query(ctx, testCol, indextest.HashVec(q), 5, "", "")
		if err1 != nil || err2 != nil || !slices.Equal(a, b) {
			t.Errorf("Query(%q) after the sync = %v, %v; opened from the file %v, %v", q, a, err1, b, err2)
		}
		sa, _ := vs.Similarities(ctx, testCol, indextest.HashVec(q), ids)
		sb, _ := opened.Similarities(ctx, testCol, indextest.HashVec(q), ids)
		if !slices.Equal(sa, sb) {
			t.Errorf("Similarities(%q) after the sync = %v, opened from the file %v", q, sa, sb)
		}
	}
}

// syncedSmall is an in-memory store with the small test catalog synced
// into testCol by the counting embedder, and that catalog.
func syncedSmall(t *testing.T) (*Store, *index.Catalog) {
	t.Helper()
	vs, _ := Open("")
	cat := indextest.MustCatalog(t, indextest.SmallCatalog)
	if _, err := vs.Sync(context.Background(), testCol, cat, &indextest.CountingEmbedder{}, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	return vs, cat
}
