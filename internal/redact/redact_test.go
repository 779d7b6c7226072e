package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

func TestString(t *testing.T) {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:hunter22"))
	for _, tc := range []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{"whole header value", []string{"Bearer ghp_0123456789"}, "got Bearer ghp_0123456789 here", "got [redacted] here"},
		{"credentials alone", []string{"Bearer ghp_0123456789"}, `token="ghp_0123456789"`, `token="[redacted]"`},
		{"query-escaped", []string{"Bearer a/b+c=d&e12"}, "GET /x?t=a%2Fb%2Bc%3Dd%26e12", "GET /x?t=[redacted]"},
		{"basic decoded", []string{basic}, "user alice:hunter22 and hunter22", "user [redacted] and [redacted]"},
		{"short value ignored", []string{"12345"}, "12345 is no secret", "12345 is no secret"},
		{"spaces trimmed", []string{"  sekrit-value \n"}, "x sekrit-value y", "x [redacted] y"},
		{"several", []string{"first-secret", "second-secret"}, "first-secret, second-secret", "[redacted], [redacted]"},
		{"none found", []string{"first-secret"}, "nothing here", "nothing here"},
		{"no secrets", nil, "first-secret", "first-secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(tc.secrets...)
			if got := r.String(tc.in); got != tc.want {
				t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if got, want := r.Contains(tc.in), tc.want != tc.in; got != want {
				t.Errorf("Contains(%q) = %v, want %v", tc.in, got, want)
			}
		})
	}
}

func TestNil(t *testing.T) {
	var r *Redactor
	r.Add("some-secret")
	if r.Active() || r.Contains("some-secret") || r.String("some-secret") != "some-secret" {
		t.Error("a nil Redactor changed something")
	}
	err := errors.New("some-secret")
	if r.Error(err) != err {
		t.Error("a nil Redactor's Error changed the error")
	}
	if w := r.With("other-secret"); w.String("other-secret") != Marker {
		t.Errorf("nil.With(...).String = %q, want the marker", w.String("other-secret"))
	}
	h := slog.NewTextHandler(io.Discard, nil)
	if r.Handler(h) != h {
		t.Error("a nil Redactor's Handler wrapped the handler")
	}
}

func TestWith(t *testing.T) {
	r := New("global-secret")
	w := r.With("Bearer request-jwt")
	if got := w.String("global-secret request-jwt"); got != "[redacted] [redacted]" {
		t.Errorf("With: String = %q", got)
	}
	if r.Contains("request-jwt") {
		t.Error("With changed the Redactor it was called on")
	}
	if r.With("", "abc") != r {
		t.Error("With of no usable value made a new Redactor")
	}
	if r.With("Bearer global-secret") != r {
		t.Error("With of a value r finds already made a new Redactor")
	}
}

func TestJSON(t *testing.T) {
	r := New(`pa"ss<word>&1`, "plain-secret")
	in, _ := json.Marshal(map[string]any{"a": `x pa"ss<word>&1 y`, "b": []any{"plain-secret"}})
	out, changed := r.JSON(in)
	if !changed || !json.Valid(out) {
		t.Fatalf("JSON(%s) = %s, %v: want valid and changed", in, out, changed)
	}
	if bytes.Contains(out, []byte("plain-secret")) || bytes.Contains(out, []byte(`ss\u003cword`)) {
		t.Errorf("JSON(%s) = %s: a secret is left", in, out)
	}
	if !r.ContainsJSON(in) || r.ContainsJSON(out) {
		t.Errorf("ContainsJSON: before %v, after %v; want true, false", r.ContainsJSON(in), r.ContainsJSON(out))
	}
	same := []byte(`{"a":"nothing"}`)
	if out, changed := r.JSON(same); changed || &out[0] != &same[0] {
		t.Error("JSON copied or changed a text without secrets")
	}
}

func TestAny(t *testing.T) {
	r := New("plain-secret")
	in := map[string]any{"k": []any{"a plain-secret", 1.0, true, nil}, "plain-secret": "v", "n": map[string]any{"x": "y"}}
	got := r.Any(in)
	b, _ := json.Marshal(got)
	if strings.Contains(string(b), "plain-secret") {
		t.Errorf("Any = %s: the secret is left", b)
	}
	if in["k"].([]any)[0] != "a plain-secret" {
		t.Error("Any changed its argument")
	}
	clean := map[string]any{"a": "b"}
	if got := r.Any(clean); fmt.Sprintf("%p", got) != fmt.Sprintf("%p", clean) {
		t.Error("Any copied a value without secrets")
	}
}

func TestError(t *testing.T) {
	sentinel := errors.New("class")
	r := New("plain-secret")
	err := fmt.Errorf("upstream said plain-secret: %w", sentinel)
	got := r.Error(err)
	if got.Error() != "upstream said [redacted]: class" || !errors.Is(got, sentinel) {
		t.Errorf("Error = %q (matches the class: %v), want redacted and matching", got, errors.Is(got, sentinel))
	}
	clean := errors.New("nothing")
	if r.Error(clean) != clean || r.Error(nil) != nil {
		t.Error("Error wrapped an error without secrets")
	}
}

type stringer struct{ s string }

func (s stringer) String() string { return s.s }

func TestHandler(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			var h slog.Handler = slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})
			if format == "json" {
				h = slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})
			}
			r := New()
			log := slog.New(r.Handler(h))
			r.Add("Bearer late-secret", "other-secret")
			log = log.With("with", "x other-secret").WithGroup("g")
			log.Debug("msg late-secret",
				"str", "late-secret",
				"err", fmt.Errorf("wrapped: %w", errors.New("other-secret")),
				"stringer", stringer{"other-secret"},
				"bytes", []byte("other-secret"),
				"struct", struct{ A string }{"other-secret"},
				slog.Group("nested", "deep", "late-secret"),
				"clean", 42)
			out := buf.String()
			if strings.Contains(out, "other-secret") || strings.Count(out, "late-secret") != 0 {
				t.Errorf("log line holds a secret:\n%s", out)
			}
			if !strings.Contains(out, "42") || strings.Count(out, Marker) < 8 {
				t.Errorf("log line lost its attributes:\n%s", out)
			}
		})
	}
}

// TestConcurrent: Add while others redact (run with -race).
func TestConcurrent(t *testing.T) {
	r := New("first-secret")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				r.Add(fmt.Sprintf("secret-%d-%d", i, j))
				_ = r.String("first-secret secret-1-1")
			}
		})
	}
	wg.Wait()
	if got := r.String("secret-7-99 first-secret"); got != "[redacted] [redacted]" {
		t.Errorf("String = %q", got)
	}
}

// BenchmarkWith: the cost of a call's own credential (a JWT) beside 20
// configured values.
func BenchmarkWith(b *testing.B) {
	var secrets []string
	for i := range 20 {
		secrets = append(secrets, fmt.Sprintf("Bearer ghp_%032d", i))
	}
	r := New(secrets...)
	for b.Loop() {
		_ = r.With("Bearer eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJib3QtMSJ9.c2lnbmF0dXJl")
	}
}

// BenchmarkString: the cost of looking for 20 values in a text that
// holds none (what every answer pays when secrets are configured).
func BenchmarkString(b *testing.B) {
	var secrets []string
	for i := range 20 {
		secrets = append(secrets, fmt.Sprintf("Bearer ghp_%032d", i))
	}
	r := New(secrets...)
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
		text := strings.Repeat("the quick brown fox jumps over the lazy dog ", size/44+1)[:size]
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				_ = r.String(text)
			}
		})
	}
}
