package search

import (
	"context"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
)

const testCatalog = `{"domains":[
 {"name":"github","description":"GitHub repositories and issues","tools":[
  {"name":"create_issue","description":"Open a new issue in a repository.","group":"issues","inputSchema":{"type":"object"}},
  {"name":"list_issues","description":"List the issues of a repository.","group":"issues","inputSchema":{"type":"object"}},
  {"name":"get_file_contents","description":"Read a file from a repository.","group":"repos","inputSchema":{"type":"object"}}]},
 {"name":"slack","description":"Slack chat","tools":[
  {"name":"post_message","description":"Send a message to a channel.","inputSchema":{"type":"object"}},
  {"name":"search_messages","description":"Search messages in the workspace.","inputSchema":{"type":"object"}}]},
 {"name":"pagerduty","description":"Incidents and on-call","tools":[
  {"name":"list_oncalls","description":"List who is on call now, per schedule.","inputSchema":{"type":"object"}}]},
 {"name":"weather","description":"Weather","tools":[
  {"name":"get_forecast","description":"Get the weather forecast for a city.","inputSchema":{"type":"object"}}]}]}`

func newTestEngine(t *testing.T, emb embed.Embedder) *Engine {
	t.Helper()
	specs, err := index.ParseCatalog("test", []byte(testCatalog))
	if err != nil {
		t.Fatal(err)
	}
	store, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	live, _, err := Open(context.Background(), LiveOptions{Store: store, Embedder: emb}, specs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })
	return live.Engine()
}

func names(rs []Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Tool.QualifiedName
	}
	return out
}

func TestSearchModes(t *testing.T) {
	eng := newTestEngine(t, embed.NewBuiltin(embed.BuiltinOptions{}))
	ctx := context.Background()
	tests := []struct {
		name   string
		req    Request
		first  string
		mode   Mode
		maxLen int
	}{
		{"keyword", Request{Query: "send a message", Mode: Keyword}, "slack__post_message", Keyword, 10},
		{"semantic paraphrase", Request{Query: "who is on call tonight", Mode: Semantic}, "pagerduty__list_oncalls", Semantic, 10},
		{"hybrid default", Request{Query: "will it rain tomorrow"}, "weather__get_forecast", Hybrid, 10},
		{"exact name", Request{Query: "list_issues"}, "github__list_issues", Hybrid, 10},
		{"domain filter", Request{Query: "search", Domain: "slack"}, "slack__search_messages", Hybrid, 2},
		{"group filter", Request{Query: "issue", Domain: "github", Group: "issues", Limit: 5}, "", Hybrid, 2},
		{"limit", Request{Query: "repository", Limit: 1}, "", Hybrid, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := eng.Search(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Mode != tc.mode {
				t.Errorf("Mode = %s, want %s", resp.Mode, tc.mode)
			}
			if tc.mode != Keyword && resp.Embedder != "builtin/wordvec-v2" {
				t.Errorf("Embedder = %q, want builtin/wordvec-v2", resp.Embedder)
			}
			if len(resp.Results) == 0 || len(resp.Results) > tc.maxLen {
				t.Fatalf("Search(%q) = %v, want 1 to %d results", tc.req.Query, names(resp.Results), tc.maxLen)
			}
			if tc.first != "" && resp.Results[0].Tool.QualifiedName != tc.first {
				t.Errorf("Search(%q) = %v, want %s first", tc.req.Query, names(resp.Results), tc.first)
			}
			for _, r := range resp.Results {
				if tc.req.Domain != "" && r.Tool.Domain != tc.req.Domain || tc.req.Group != "" && r.Tool.Group != tc.req.Group {
					t.Errorf("result %s is outside the filter", r.Tool.QualifiedName)
				}
			}
		})
	}
}

func TestSearchExplain(t *testing.T) {
	eng := newTestEngine(t, embed.NewBuiltin(embed.BuiltinOptions{}))
	rrf := NewEngine(Options{Catalog: eng.Catalog(), Keyword: eng.ix.kw, Vectors: eng.ix.vs, Embedder: eng.emb, Params: Params{Fusion: FusionRRF, SemanticWeight: 1.5, KeywordWeight: 1}})
	convex := NewEngine(Options{Catalog: eng.Catalog(), Keyword: eng.ix.kw, Vectors: eng.ix.vs, Embedder: eng.emb, Params: Params{Fusion: FusionConvex}})
	for _, e := range []*Engine{eng, rrf, convex} {
		p := e.Params()
		resp, err := e.Search(context.Background(), Request{Query: "post_message", Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		x := resp.Results[0].Explanation
		if x == nil || !x.ExactName || x.KeywordRank != 1 || x.SemanticRank == 0 || len(x.BM25) == 0 || x.DomainRank == 0 {
			t.Fatalf("%s: Explanation = %+v, want exact name, keyword rank 1, a semantic rank, a domain rank and BM25 details", p.Fusion, x)
		}
		// The fused score is the hand-computed fusion of the keyword,
		// semantic and domain ranks plus the exact boost: with RRF,
		// weight/(k+rank); with convex fusion a list's best counts its
		// whole weight.
		want := p.DomainWeight/(p.RRFK+float64(x.DomainRank)) + p.ExactBoost
		switch p.Fusion {
		case FusionLearned:
			// The model's evidence, weighted per request: its parts
			// and the exact boost make the score.
			f := x.Fusion
			want = f.Keyword + f.Semantic + f.Domain + p.ExactBoost
			if f.Keyword <= 0 || f.Semantic <= 0 {
				t.Fatalf("learned: parts %+v, want the keyword and the semantic list's best to count", f)
			}
		case FusionRRF:
			want += p.KeywordWeight/(p.RRFK+float64(x.KeywordRank)) + p.SemanticWeight/(p.RRFK+float64(x.SemanticRank))
		case FusionConvex:
			if x.SemanticRank != 1 || x.Fusion.Semantic != p.SemanticWeight {
				t.Fatalf("convex: semantic rank %d, part %v, want 1 and %v", x.SemanticRank, x.Fusion.Semantic, p.SemanticWeight)
			}
			want += p.KeywordWeight + p.SemanticWeight
		default:
			t.Fatalf("fusion %q", p.Fusion)
		}
		if got := resp.Results[0].Score; got < want-1e-9 || got > want+1e-9 {
			t.Errorf("%s: Score = %f, want %f", p.Fusion, got, want)
		}
	}
}

// failingEmbedder fails every query, like Ollama going away after indexing.
type failingEmbedder struct{ *embed.Builtin }

func (failingEmbedder) EmbedQuery(context.Context, string) ([]float32, error) {
	return nil, errors.Join(embed.ErrUnavailable, errors.New("connection refused"))
}

func TestSearchFallsBackToKeyword(t *testing.T) {
	eng := newTestEngine(t, failingEmbedder{embed.NewBuiltin(embed.BuiltinOptions{})})
	for _, mode := range []Mode{Semantic, Hybrid} {
		resp, err := eng.Search(context.Background(), Request{Query: "send a message", Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Mode != Keyword || resp.Embedder != "none" {
			t.Errorf("%s: Mode = %s, Embedder = %s; want keyword, none", mode, resp.Mode, resp.Embedder)
		}
		if !strings.Contains(resp.Notice, "ranked by keyword") || !strings.Contains(resp.Notice, "unavailable") {
			t.Errorf("%s: Notice = %q, want the cause and the fallback", mode, resp.Notice)
		}
		if len(resp.Results) == 0 || resp.Results[0].Tool.QualifiedName != "slack__post_message" {
			t.Errorf("%s: results = %v", mode, names(resp.Results))
		}
	}
	// No embedder at all.
	eng = newTestEngine(t, nil)
	resp, err := eng.Search(context.Background(), Request{Query: "message"})
	if err != nil || resp.Mode != Keyword || resp.Notice == "" {
		t.Errorf("no embedder: %+v, %v; want keyword with a notice", resp, err)
	}
}

// TestFallbackRanksLikeKeyword: an answer that fell back to keyword is
// ranked exactly as a keyword request (fuzzy matching included), not by
// the hybrid mode's non-fuzzy keyword leg.
func TestFallbackRanksLikeKeyword(t *testing.T) {
	eng := newTestEngine(t, failingEmbedder{embed.NewBuiltin(embed.BuiltinOptions{})})
	ctx := context.Background()
	for _, q := range []string{"post a mesage to the chanel", "forcast weather", "who is on call"} {
		kw, err := eng.Search(ctx, Request{Query: q, Mode: Keyword, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(kw.Results) == 0 {
			t.Fatalf("%q: keyword found nothing; the test needs a query that matches", q)
		}
		for _, mode := range []Mode{Semantic, Hybrid} {
			fb, err := eng.Search(ctx, Request{Query: q, Mode: mode, Explain: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(fb.Results) != len(kw.Results) {
				t.Errorf("%q %s fallback: %v, keyword: %v", q, mode, names(fb.Results), names(kw.Results))
				continue
			}
			for i := range kw.Results {
				a, b := fb.Results[i], kw.Results[i]
				if a.Tool != b.Tool || a.Score != b.Score || !reflect.DeepEqual(a.Explanation, b.Explanation) {
					t.Errorf("%q %s fallback result %d = %s %.4f, keyword request = %s %.4f", q, mode, i, a.Tool.QualifiedName, a.Score, b.Tool.QualifiedName, b.Score)
				}
			}
		}
	}
}

func TestSearchErrors(t *testing.T) {
	eng := newTestEngine(t, nil)
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{"empty", Request{Query: " "}, "empty query"},
		{"mode", Request{Query: "x", Mode: "fuzzy"}, "keyword, semantic or hybrid"},
		{"domain", Request{Query: "x", Domain: "githb"}, `did you mean "github"?`},
		{"domain list", Request{Query: "x", Domain: "nope"}, "valid domains: github, pagerduty, slack, weather"},
		{"group without domain", Request{Query: "x", Group: "issues"}, "needs a domain"},
		{"group", Request{Query: "x", Domain: "github", Group: "pulls"}, "valid groups: issues, repos"},
		{"domain without groups", Request{Query: "x", Domain: "slack", Group: "a"}, "has no groups"},
		{"limit too high", Request{Query: "x", Limit: MaxLimit + 1}, "limit 101 is out of range: use 1 to 100"},
		{"negative limit", Request{Query: "x", Limit: -1}, "out of range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := eng.Search(context.Background(), tc.req)
			if !errors.Is(err, ErrInvalidRequest) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Search(%+v) error = %v, want ErrInvalidRequest containing %q", tc.req, err, tc.want)
			}
		})
	}
	// An empty catalog names no valid domains: it says there are none.
	empty, err := index.NewCatalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckScope(empty, "memory", ""); err == nil || err.Error() != `unknown domain "memory": no domain has tools yet` {
		t.Errorf("CheckScope on an empty catalog = %v", err)
	}
}

func TestQueryEmbeddingCache(t *testing.T) {
	c := &countingQueries{Builtin: embed.NewBuiltin(embed.BuiltinOptions{})}
	eng := newTestEngine(t, c)
	for i := 0; i < 3; i++ {
		if _, err := eng.Search(context.Background(), Request{Query: "weather"}); err != nil {
			t.Fatal(err)
		}
	}
	if c.n != 1 {
		t.Errorf("3 identical queries embedded %d times, want 1", c.n)
	}
	lru := newVectorCache(2)
	lru.put("a", []float32{1})
	lru.put("b", []float32{2})
	lru.get("a")
	lru.put("c", []float32{3})
	if _, ok := lru.get("b"); ok || lru.len() != 2 {
		t.Error("LRU kept the least recently used entry")
	}
	if v, ok := lru.get("a"); !ok || v[0] != 1 {
		t.Error("LRU dropped a recently used entry")
	}
}

type countingQueries struct {
	*embed.Builtin
	n int
}

func (c *countingQueries) EmbedQuery(ctx context.Context, q string) ([]float32, error) {
	c.n++
	return c.Builtin.EmbedQuery(ctx, q)
}

func TestSuggest(t *testing.T) {
	eng := newTestEngine(t, nil)
	cat := eng.Catalog()
	tests := []struct {
		in    string
		first string
	}{
		{"post_mesage", "slack__post_message"},
		{"issue_create", "github__create_issue"},
		{"slack__post_msg", "slack__post_message"},
		{"get_forcast", "weather__get_forecast"},
	}
	for _, tc := range tests {
		got := Suggest(cat, tc.in, 3)
		if len(got) == 0 || got[0] != tc.first || len(got) > 3 {
			t.Errorf("Suggest(%q) = %v, want %s first, at most 3", tc.in, got, tc.first)
		}
	}
	if got := Suggest(cat, "zzzzzzzzzzzzzz", 3); len(got) != 0 {
		t.Errorf("Suggest(zzz…) = %v, want nothing", got)
	}
}

// Domain ranking lifts the tools of the domain that matches as a whole:
// with the keyword and semantic lists weighted out, the order of the
// results is the order of their domains.
func TestDomainRanking(t *testing.T) {
	eng := newTestEngine(t, embed.NewBuiltin(embed.BuiltinOptions{}))
	only := Params{Fusion: FusionConvex, KeywordWeight: 1e-9, SemanticWeight: 1e-9, DomainWeight: 1, ExactBoost: -1, DomainBoost: -1}
	resp, err := eng.Search(context.Background(), Request{Query: "open an issue in a repository", Params: &only, Explain: true, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	if d := resp.Results[0].Tool.Domain; d != "github" {
		t.Errorf("first result is in %s, want github: %v", d, names(resp.Results))
	}
	prev := 0
	for _, r := range resp.Results {
		if r.Explanation.DomainRank < prev {
			t.Errorf("results not in domain order: %v", names(resp.Results))
		}
		prev = r.Explanation.DomainRank
	}
	off := Params{DomainWeight: -1}
	resp, err = eng.Search(context.Background(), Request{Query: "open an issue in a repository", Params: &off, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	if x := resp.Results[0].Explanation; x.DomainRank != 0 {
		t.Errorf("domain_weight -1: DomainRank = %d, want 0 (off)", x.DomainRank)
	}
}

func TestRequestBounds(t *testing.T) {
	eng := newTestEngine(t, embed.NewBuiltin(embed.BuiltinOptions{}))
	ctx := context.Background()
	long := strings.Repeat("weather forecast for a city. ", 200000) // 5.8 MB, 1.2M words
	for _, mode := range Modes {
		resp, err := eng.Search(ctx, Request{Query: long, Mode: mode, Limit: 1})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if len(resp.Query) > MaxQueryBytes || len(strings.Fields(resp.Query)) > MaxQueryWords {
			t.Errorf("%s: ranked a query of %d bytes, %d words; want at most %d and %d", mode, len(resp.Query), len(strings.Fields(resp.Query)), MaxQueryBytes, MaxQueryWords)
		}
		if !strings.Contains(resp.Notice, "query cut to its first") || resp.Results[0].Tool.QualifiedName != "weather__get_forecast" {
			t.Errorf("%s: notice %q, first %s; want the cut said and the forecast tool", mode, resp.Notice, resp.Results[0].Tool.QualifiedName)
		}
	}
	// One word longer than the byte bound, and invalid UTF-8.
	resp, err := eng.Search(ctx, Request{Query: strings.Repeat("x", 3*MaxQueryBytes) + " \xff\xfe weather", Mode: Keyword})
	if err != nil || len(resp.Query) > MaxQueryBytes {
		t.Errorf("giant word: %v, query of %d bytes", err, len(resp.Query))
	}
	if resp, _ := eng.Search(ctx, Request{Query: "weather in lisbon", Limit: 1}); resp.Notice != "" {
		t.Errorf("a short query got a notice: %q", resp.Notice)
	}
	huge := strings.Repeat("d", 1<<20)
	_, err = eng.Search(ctx, Request{Query: "x", Domain: huge})
	if !errors.Is(err, ErrInvalidRequest) || len(err.Error()) > 400 || !strings.Contains(err.Error(), "longer than 256 bytes") {
		t.Errorf("1 MB domain: error of %d bytes: %.300v", len(err.Error()), err)
	}
}

func TestQuote(t *testing.T) {
	if got := Quote("short", 100); got != `"short"` {
		t.Errorf("Quote(short) = %s", got)
	}
	if got := Quote(strings.Repeat("é", 100), 11); got != `"ééééé"… (200 bytes)` {
		t.Errorf("Quote cut inside a rune: %s", got)
	}
}

// TestExplainFusionTerms: a hybrid explanation's fusion terms add up to the
// result's score, and its BM25 part names fields and terms.
func TestExplainFusionTerms(t *testing.T) {
	eng := newTestEngine(t, embed.NewBuiltin(embed.BuiltinOptions{}))
	resp, err := eng.Search(context.Background(), Request{Query: "github create_issue", Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resp.Results {
		x := r.Explanation
		if x == nil || x.Fusion == nil || x.Fusion.Method != DefaultParams().Fusion {
			t.Fatalf("%s: explanation %+v", r.Tool.QualifiedName, x)
		}
		f := x.Fusion
		if sum := f.Keyword + f.Semantic + f.Domain + f.ExactBoost + f.DomainBoost; math.Abs(sum-r.Score) > 1e-9 {
			t.Errorf("%s: fusion terms %+v sum to %v, score %v", r.Tool.QualifiedName, f, sum, r.Score)
		}
		if x.KeywordRank > 0 && (len(x.BM25) == 0 || x.BM25[0].Field == "") {
			t.Errorf("%s: keyword rank %d without BM25 terms", r.Tool.QualifiedName, x.KeywordRank)
		}
	}
	if top := resp.Results[0]; top.Tool.QualifiedName != "github__create_issue" || top.Explanation.Fusion.ExactBoost == 0 {
		t.Errorf("top = %s %+v, want the exactly named tool with its boost", top.Tool.QualifiedName, top.Explanation.Fusion)
	}
}

// TestParseModeQuotesBriefly: an error names a rejected mode in at most
// about 100 characters, however long the value.
func TestParseModeQuotesBriefly(t *testing.T) {
	_, err := ParseMode(strings.Repeat("x", 100<<10))
	if !errors.Is(err, ErrInvalidRequest) || len(err.Error()) > 200 || !strings.Contains(err.Error(), "use keyword, semantic or hybrid") {
		t.Errorf("ParseMode(100 KB) = error of %d bytes: %.300v", len(err.Error()), err)
	}
	if _, err := ParseMode("fuzzy"); err == nil || !strings.Contains(err.Error(), `"fuzzy"`) {
		t.Errorf("ParseMode(fuzzy) = %v, want the value named", err)
	}
}

// TestScaledSentences: in a request of three sentences or more, each
// sentence's similarities are scaled by its best match's, so that a step
// of few, common words still places its tool near the top; the evidence
// confidence judges stays a similarity, the tool's to its best sentence.
// Requests of two sentences rank as before.
func TestScaledSentences(t *testing.T) {
	eng := newTestEngine(t, embed.NewBuiltin(embed.BuiltinOptions{}))
	ctx := context.Background()
	steps := []string{"Open a new issue in a repository about the crash in the repository", "Look up the forecast", "Who is on call"}
	want := []string{"github__create_issue", "weather__get_forecast", "pagerduty__list_oncalls"}
	q := strings.Join(steps, ". ")
	top3 := func(p *Params) []string {
		t.Helper()
		resp, err := eng.Search(ctx, Request{Query: q, Mode: Semantic, Params: p})
		if err != nil {
			t.Fatal(err)
		}
		got := names(resp.Results)
		slices.Sort(got[:3])
		return got[:3]
	}
	slices.Sort(want)
	if got := top3(nil); !reflect.DeepEqual(got, want) {
		t.Errorf("first three %v, want each step's tool %v", got, want)
	}
	// The control: unscaled, the long first step's words take two places.
	if got := top3(&Params{SentenceShare: Off}); reflect.DeepEqual(got, want) {
		t.Errorf("first three without scaling %v: the request no longer tells scaling apart", got)
	}

	resp, err := eng.Search(ctx, Request{Query: q, Mode: Semantic})
	if err != nil {
		t.Fatal(err)
	}
	alone, err := eng.Search(ctx, Request{Query: steps[2], Mode: Semantic})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resp.Results {
		if r.Tool.QualifiedName == "pagerduty__list_oncalls" && r.similarity != alone.Results[0].similarity {
			t.Errorf("list_oncalls: similarity %v, want its similarity to %q, %v", r.similarity, steps[2], alone.Results[0].similarity)
		}
	}
	if c := resp.Confidence; c == nil || c.Similarity >= 1 || c.Similarity != resp.Results[0].similarity {
		t.Errorf("confidence %+v: want the first result's similarity (%v), not its scaled score", c, resp.Results[0].similarity)
	}

	two := steps[0] + ". " + steps[1]
	for _, mode := range []Mode{Semantic, Hybrid} {
		on, err := eng.Search(ctx, Request{Query: two, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		off, err := eng.Search(ctx, Request{Query: two, Mode: mode, Params: &Params{SentenceShare: Off}})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(names(on.Results), names(off.Results)) || on.Results[0].Score != off.Results[0].Score {
			t.Errorf("%s, two sentences: %v, want as unscaled %v", mode, names(on.Results), names(off.Results))
		}
	}
}
